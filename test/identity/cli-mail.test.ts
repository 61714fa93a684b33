import { describe, expect, test } from "bun:test";
import { cli } from "../support/cli.ts";
import { callIdentity, uniqueEmail } from "../support/identity.ts";

describe("cli mail list", () => {
  test("prints the sign-in links the development transport kept", async () => {
    const email = uniqueEmail("cli");
    await callIdentity("POST", "/api/v1/identity/auth/magic-link", { body: { email } });
    const listed = await cli("mail", "list", "--to", email.toUpperCase(), "--json");
    expect(listed.exitCode).toBe(0);
    const mails = JSON.parse(listed.stdout);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ recipient: email, subject: "Your sign-in link" });
    expect(mails[0].link).toContain("/api/v1/identity/auth/magic-link/verify?token=ml_");
    const text = await cli("mail", "list", "--to", email);
    expect(text.stdout).toContain(mails[0].link);
    expect((await cli("mail", "list", "--limit", "0")).exitCode).toBe(2);
  }, 30_000);
});
