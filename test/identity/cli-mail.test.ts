import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { callIdentity, uniqueEmail } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";

const cliPath = join(import.meta.dir, "../../src/cli/index.ts");

async function cli(...args: string[]) {
  const { db } = await testRuntime();
  const proc = Bun.spawn([process.execPath, cliPath, ...args], {
    env: { ...process.env, DATABASE_URL: db.url },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, exitCode] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { stdout, exitCode };
}

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
  });
});
