import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { callIdentity, memberOf, signInOperatorAdmin } from "../support/identity.ts";

const base = "/api/v1/identity";

describe("request bodies that are not JSON", async () => {
  const org = await createTestOrg();
  const owner = await memberOf(org.id, "owner");
  const admin = await signInOperatorAdmin();
  const partner = await createTestOrg({ type: "platform" });
  await callIdentity("PUT", `${base}/admin/trusted-partners/${partner.id}`, { session: admin.session });
  const partnerKey = await partner.keyWith(["partner:provision", "identity:write"]);
  const routes: [string, string, { session?: string; key?: string }][] = [
    ["POST", `${base}/auth/magic-link`, {}],
    ["POST", `${base}/auth/magic-link/verify`, {}],
    ["POST", `${base}/organizations`, { session: owner.session }],
    ["POST", `${base}/platform-access-requests`, { session: owner.session }],
    ["POST", `${base}/agent-access-requests`, { session: owner.session }],
    ["POST", `${base}/admin/access-requests/${crypto.randomUUID()}/approve`, { session: admin.session }],
    ["POST", `${base}/admin/access-requests/${crypto.randomUUID()}/reject`, { session: admin.session }],
    ["POST", `${base}/keys`, { session: owner.session }],
    ["PATCH", `${base}/settings`, { session: owner.session }],
    ["POST", `${base}/domains`, { session: owner.session }],
    ["POST", `${base}/domains/${org.domain}/verify`, { session: owner.session }],
    ["PATCH", `${base}/members/${owner.userId}`, { session: owner.session }],
    ["POST", `${base}/invites`, { session: owner.session }],
    ["POST", `${base}/partner/organizations`, { key: partnerKey }],
  ];

  for (const [method, path, credential] of routes) {
    test(`${method} ${path.replace(/[0-9a-f-]{36}/, "{id}")}`, async () => {
      const text = await callIdentity(method, path, {
        ...credential,
        body: "hello",
        headers: { "content-type": "text/plain" },
      });
      expect(text.status).toBe(415);
      expect(text.body.code).toBe("unsupported_media_type");
      const malformed = await callIdentity(method, path, { ...credential, body: '{"a":' });
      expect(malformed.status).toBe(400);
      expect(malformed.body.code).toBe("malformed_json");
      const wrongShape = await callIdentity(method, path, { ...credential, body: "[1,2]" });
      expect(wrongShape.status).toBe(422);
    });
  }
});
