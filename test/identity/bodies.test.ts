import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { callIdentity, memberOf, signIn, signInOperatorAdmin } from "../support/identity.ts";

const base = "/api/v1/identity";

/** An owner's session, the operator admin's, and a trusted partner's provisioning key. */
async function credentials() {
  const org = await createTestOrg();
  const owner = await memberOf(org.id, "owner");
  const admin = await signInOperatorAdmin();
  const partner = await createTestOrg({ type: "platform" });
  await callIdentity("PUT", `${base}/admin/trusted-partners/${partner.id}`, { session: admin.session });
  const partnerKey = await partner.keyWith(["partner:provision", "identity:write"]);
  return { org, owner, admin, partnerKey };
}

describe("request bodies that are not JSON", async () => {
  const { org, owner, admin, partnerKey } = await credentials();
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
      expect(wrongShape.status).toBe(400);
    });
  }
});

describe("free text that cannot be stored as sent", async () => {
  const { org, owner, admin, partnerKey } = await credentials();
  const pending = await callIdentity("POST", `${base}/platform-access-requests`, {
    session: owner.session,
    body: { org_name: "Pending", admin_email: owner.email, use_case: "review me" },
  });
  const requestId = pending.body.id as string;
  // [method, path, credential, body as JSON text with a "%s" where the text goes, path of that text]
  const fields: [string, string, { session?: string; key?: string }, string, string][] = [
    [
      "POST",
      `${base}/organizations`,
      { session: owner.session },
      '{"name":%s,"org_type":"content_owner","domain":"x.example.com"}',
      "/name",
    ],
    [
      "POST",
      `${base}/platform-access-requests`,
      { session: owner.session },
      '{"org_name":%s,"admin_email":"a@b.co","use_case":"u"}',
      "/org_name",
    ],
    [
      "POST",
      `${base}/agent-access-requests`,
      { session: owner.session },
      '{"org_name":"o","admin_email":"a@b.co","use_case":%s}',
      "/use_case",
    ],
    ["POST", `${base}/admin/access-requests/${requestId}/reject`, { session: admin.session }, '{"note":%s}', "/note"],
    ["POST", `${base}/keys?org_id=${org.id}`, { session: owner.session }, '{"name":%s}', "/name"],
    [
      "POST",
      `${base}/partner/organizations`,
      { key: partnerKey },
      '{"name":%s,"domains":["y.example.com"],"owner_email":"a@b.co"}',
      "/name",
    ],
  ];
  for (const [method, path, credential, template, field] of fields) {
    for (const [label, text] of [
      ["a lone surrogate", '"x\\ud800y"'],
      ["a NUL character", '"x\\u0000y"'],
    ] as const) {
      test(`${method} ${path.replace(/[0-9a-f-]{36}/, "{id}").replace(/\?.*/, "")} with ${label} in ${field} is 400 at that field`, async () => {
        const res = await callIdentity(method, path, { ...credential, body: template.replace("%s", text) });
        expect(res.status).toBe(400);
        expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
      });
    }
  }

  test("nothing of a refused request is stored", async () => {
    const user = await signIn();
    const bodies: [string, string][] = [
      [`${base}/organizations`, '{"name":"x\\ud800","org_type":"content_owner","domain":"z.example.com"}'],
      [`${base}/platform-access-requests`, '{"org_name":"x\\ud800","admin_email":"a@b.co","use_case":"u"}'],
    ];
    for (const [path, body] of bodies) {
      expect((await callIdentity("POST", path, { session: user.session, body })).status).toBe(400);
    }
    expect((await callIdentity("GET", `${base}/organizations`, { session: user.session })).body.total).toBe(0);
    expect((await callIdentity("GET", `${base}/platform-access-requests`, { session: user.session })).body.total).toBe(
      0,
    );
  });
});
