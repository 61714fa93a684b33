import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import type { Sql } from "../../src/db/sql.ts";
import { maxOpenLinksPerAddress } from "../../src/modules/auth/magic-link.ts";
import { createMailer } from "../../src/modules/auth/mailer.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import {
  buildIdentityApp,
  callIdentity,
  memberOf,
  signIn,
  signInOperatorAdmin,
  uniqueEmail,
} from "../support/identity.ts";
import { recordingLogger } from "../support/logs.ts";
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

  test("a sign-in link that could not be mailed is not kept and does not count against the address", async () => {
    const { app } = await buildIdentityApp({ SMTP_URL: "smtp://127.0.0.1:9" });
    const email = uniqueEmail();
    for (let attempt = 0; attempt <= maxOpenLinksPerAddress; attempt++) {
      const res = await callIdentity("POST", "/api/v1/identity/auth/magic-link", { app, body: { email } });
      expect(res.status).toBe(503);
    }
    const { ctx } = await testRuntime();
    expect(await ctx.sql`SELECT 1 FROM magic_link_tokens WHERE email = ${email}`).toHaveLength(0);
  });
});

describe("development transport without MAIL_OUTBOX_RAW_LINKS", () => {
  test("keeps and logs the sign-in link redacted, and it signs nobody in", async () => {
    const log = recordingLogger();
    const { ctx: base } = await testRuntime();
    const config = { ...base.config, SMTP_URL: undefined, MAIL_OUTBOX_RAW_LINKS: false };
    const ctx = { ...base, config, log, mailer: createMailer(config, base.sql, log) };
    const app = createApp(ctx);
    const email = uniqueEmail("redacted");
    const res = await callIdentity("POST", "/api/v1/identity/auth/magic-link", { app, body: { email } });
    expect(res.status).toBe(202);
    const [kept] = await base.sql<{ body: string; link: string }[]>`
      SELECT body, link FROM mail_outbox WHERE recipient = ${email}`;
    expect(kept?.link).toMatch(/\?token=ml_[A-Za-z0-9_-]{4}…\[redacted\]$/);
    expect(kept?.body).toContain("…[redacted]");
    expect(`${kept?.body}${kept?.link}${log.text()}`).not.toMatch(/ml_[A-Za-z0-9_-]{43}/);
    expect(log.text()).toContain("…[redacted]");
    expect(log.text()).not.toContain("MAIL_OUTBOX_RAW_LINKS is on");
    const token = new URL(kept?.link ?? "").searchParams.get("token");
    const verify = await callIdentity("POST", "/api/v1/identity/auth/magic-link/verify", { app, body: { token } });
    expect(verify.status).toBe(401);
  });

  test("with it on, the link is kept whole and the start-up log says so", () => {
    const log = recordingLogger();
    createMailer({ SMTP_URL: undefined, MAIL_FROM: "x <x@y.test>", MAIL_OUTBOX_RAW_LINKS: true }, {} as Sql, log);
    expect(log.text()).toContain("MAIL_OUTBOX_RAW_LINKS is on");
  });
});

describe("an invitation whose mail cannot be sent", () => {
  test("is still answered 201 and listed for the invitee", async () => {
    const { app } = await buildIdentityApp({ SMTP_URL: "smtp://127.0.0.1:9" });
    const org = await createTestOrg();
    const owner = await memberOf(org.id, "owner");
    const invitee = uniqueEmail("invitee");
    const invited = await callIdentity("POST", `/api/v1/identity/invites?org_id=${org.id}`, {
      app,
      session: owner.session,
      body: { email: invitee },
    });
    expect(invited.status).toBe(201);
    const user = await signIn(invitee);
    const mine = await callIdentity("GET", "/api/v1/identity/me/invites", { session: user.session });
    expect(mine.body.items.map((i: { id: string }) => i.id)).toEqual([invited.body.id]);
  });

  test("a partner's provisioning answers 201 with the organisation it created", async () => {
    const { app } = await buildIdentityApp({ SMTP_URL: "smtp://127.0.0.1:9" });
    const partner = await createTestOrg({ type: "platform" });
    const admin = await signInOperatorAdmin();
    await callIdentity("PUT", `/api/v1/identity/admin/trusted-partners/${partner.id}`, { session: admin.session });
    const key = await partner.keyWith(["partner:provision", "identity:write"]);
    const res = await callIdentity("POST", "/api/v1/identity/partner/organizations", {
      app,
      key,
      body: { name: "Provisioned", domains: [uniqueDomain()], owner_email: uniqueEmail("owner") },
    });
    expect(res.status).toBe(201);
    const listed = await callIdentity("GET", "/api/v1/identity/partner/organizations", { key });
    expect(listed.body.items.map((o: { id: string }) => o.id)).toEqual([res.body.organization.id]);
  });
});
