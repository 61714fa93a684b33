import { describe, expect, test } from "bun:test";
import { buildIdentityApp, callIdentity, uniqueEmail } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";
import { startSmtpServer } from "../support/smtp-server.ts";

/** The text of a quoted-printable message body. */
const unquote = (data: string) => data.replace(/=\n/g, "").replace(/=3D/g, "=");

describe("mail transport", () => {
  test("with SMTP_URL, sign-in links go out by SMTP and not to the outbox", async () => {
    const smtp = startSmtpServer();
    const { app } = await buildIdentityApp({
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      MAIL_FROM: "Telemetry <signin@service.test>",
    });
    const email = uniqueEmail("smtp");
    const res = await callIdentity("POST", "/api/v1/identity/auth/magic-link", { app, body: { email } });
    expect(res.status).toBe(202);
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]?.to.join()).toContain(email);
    expect(smtp.received[0]?.data).toContain("From: Telemetry <signin@service.test>");
    const token = /verify\?token=(ml_[A-Za-z0-9_-]{43})/.exec(unquote(smtp.received[0]?.data ?? ""))?.[1];
    expect(token).toBeDefined();
    const { ctx } = await testRuntime();
    expect(await ctx.sql`SELECT 1 FROM mail_outbox WHERE recipient = ${email}`).toHaveLength(0);
    const signedIn = await callIdentity("POST", "/api/v1/identity/auth/magic-link/verify", { app, body: { token } });
    expect(signedIn.body.user.email).toBe(email);
  });

  test("an unreachable SMTP server is 503 mail_unavailable", async () => {
    const { app } = await buildIdentityApp({ SMTP_URL: "smtp://127.0.0.1:9" });
    const res = await callIdentity("POST", "/api/v1/identity/auth/magic-link", { app, body: { email: uniqueEmail() } });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("mail_unavailable");
  });
});
