import { describe, expect, test } from "bun:test";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { callIdentity, memberOf, signIn, signInOperatorAdmin, uniqueEmail } from "../support/identity.ts";

/**
 * Every organisation-scoped identity route against every kind of credential:
 * what each need (read, people, write, manage) accepts and refuses.
 */
const routes = [
  { method: "GET", path: "/keys", need: "read" },
  { method: "POST", path: "/keys", need: "write", body: () => ({ scopes: [] }) },
  { method: "GET", path: "/settings", need: "read" },
  { method: "PATCH", path: "/settings", need: "write", body: () => ({ visible_in_click_token_lookups: true }) },
  { method: "GET", path: "/domains", need: "read" },
  { method: "POST", path: "/domains", need: "write", body: () => ({ domain: uniqueDomain() }) },
  // Members' e-mail addresses: read by members' sessions only, never by keys.
  { method: "GET", path: "/members", need: "people" },
  { method: "POST", path: "/invites", need: "manage", body: () => ({ email: uniqueEmail() }) },
  { method: "GET", path: "/invites", need: "manage" },
  { method: "GET", path: "/audit", need: "manage" },
] as const;

type Need = (typeof routes)[number]["need"];
type Credential = { key?: string; session?: string };

describe("organisation-scoped identity routes × credentials", async () => {
  const org = await createTestOrg();
  const other = await createTestOrg();
  const owner = await memberOf(org.id, "owner");
  const admin = await memberOf(org.id, "admin");
  const member = await memberOf(org.id, "member");
  const stranger = await signIn();
  const operator = await signInOperatorAdmin();
  const cases: [string, Credential, (need: Need) => "ok" | 401 | 403][] = [
    ["no credential", {}, () => 401],
    ["unknown key", { key: `svc_pub_${"u".repeat(43)}` }, () => 401],
    ["unknown session", { session: `sess_${"u".repeat(43)}` }, () => 401],
    ["key with no scopes", { key: await org.keyWith([]) }, () => 403],
    ["key with the default scopes", { key: org.key }, (need) => (need === "read" ? "ok" : 403)],
    [
      "key with identity:write only",
      { key: await org.keyWith(["identity:write"]) },
      (need) => (need === "write" ? "ok" : 403),
    ],
    [
      "key with every scope",
      {
        key: await org.keyWith([
          "telemetry:read",
          "telemetry:write",
          "identity:read",
          "identity:write",
          "partner:provision",
        ]),
      },
      (need) => (need === "manage" || need === "people" ? 403 : "ok"),
    ],
    ["another organisation's key", { key: await other.keyWith(["identity:read", "identity:write"]) }, () => 403],
    ["owner session", { session: owner.session }, () => "ok"],
    ["admin session", { session: admin.session }, () => "ok"],
    ["member session", { session: member.session }, (need) => (need === "read" || need === "people" ? "ok" : 403)],
    ["operator admin session (not a member)", { session: operator.session }, () => 403],
    ["session of a non-member", { session: stranger.session }, () => 403],
  ];

  for (const route of routes) {
    for (const [name, credential, expected] of cases) {
      test(`${route.method} ${route.path} (${route.need}) with ${name}`, async () => {
        // Keys act on their own organisation; org_id names it for sessions (and must match for keys).
        const query = credential.key === undefined || name === "another organisation's key" ? `?org_id=${org.id}` : "";
        const body = "body" in route ? route.body() : undefined;
        const res = await callIdentity(route.method, `/api/v1/identity${route.path}${query}`, { ...credential, body });
        const want = expected(route.need);
        if (want === "ok") expect([200, 201]).toContain(res.status);
        else expect(res.status).toBe(want);
        expect(
          res.status === 200 || res.status === 201 || res.headers.get("content-type") === "application/problem+json",
        ).toBe(true);
      });
    }
  }
});
