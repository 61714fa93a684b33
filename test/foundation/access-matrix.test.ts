import { describe, expect, test } from "bun:test";
import { allScopes, type Scope } from "../../src/core/scopes.ts";
import type { Access } from "../../src/http/access-declarations.ts";
import { createTestOrg, type TestOrg } from "../support/fixtures.ts";
import { callApp } from "../support/http.ts";
import { identityTestApp, memberOf, type SignedInUser, signIn } from "../support/identity.ts";

/**
 * The credential matrix, built from the routes themselves: every route declares
 * who may call it (src/http/access.ts), and each declaration implies the refusals
 * below. A new route gets its 401 and 403 cases without anyone writing them. The
 * requests carry an empty JSON object as body, so a refusal that came after body
 * validation would show up as a 400.
 */
const { app } = await identityTestApp();
const documentation = (path: string) => path === "/openapi" || path.startsWith("/openapi/");
const routes = app.routes.filter((route) => !documentation(route.path) && route.method !== "ALL");
const accessOf = (route: (typeof routes)[number]) =>
  (route.hooks.detail as { "x-access"?: Access } | undefined)?.["x-access"];

interface Credential {
  key?: string;
  session?: string;
}

type Expectation = { status: 401 } | { status: 403; code: string };

function fillPath(path: string, orgId: string): string {
  return path
    .replace(":id", orgId)
    .replace(/:(user_id|org_id|delivery_id)/g, crypto.randomUUID())
    .replace(":domain", "example.com")
    .replace(":provider", "nobody");
}

async function send(method: string, path: string, credential: Credential) {
  const headers: Record<string, string> = {};
  if (credential.session) headers.authorization = `Bearer ${credential.session}`;
  const withBody = method === "POST" || method === "PUT" || method === "PATCH";
  return callApp(app, method, path, { key: credential.key, headers, ...(withBody ? { body: {} } : {}) });
}

const everyScopeBut = (scope: Scope | null) => allScopes.filter((s) => s !== scope);

describe("who may call each route", async () => {
  const owner = await createTestOrg();
  const platform = await createTestOrg({ type: "platform" });
  const stranger = await signIn();
  const member = await memberOf(owner.id, "member");
  const ownerUser = await memberOf(owner.id, "owner");
  const platformMember = await memberOf(platform.id, "owner");

  /** The refusals a declaration implies, as (label, credential, org acted on, expectation). */
  async function refusals(access: Access): Promise<[string, Credential, TestOrg, Expectation][]> {
    const none: [string, Credential, TestOrg, Expectation] = ["no credential", {}, owner, { status: 401 }];
    const unknownKey: [string, Credential, TestOrg, Expectation] = [
      "an unknown key",
      { key: `svc_pk_${"x".repeat(43)}` },
      owner,
      { status: 401 },
    ];
    switch (access.kind) {
      case "public":
        return [];
      case "key": {
        const allowed = access.orgTypes?.includes("content_owner") === false ? platform : owner;
        const cases: [string, Credential, TestOrg, Expectation][] = [none, unknownKey];
        if (access.memberSessions) {
          cases.push([
            "a session of someone outside the organisation",
            { session: stranger.session },
            allowed,
            { status: 403, code: "not_a_member" },
          ]);
        } else {
          cases.push(["a session instead of a key", { session: ownerUser.session }, allowed, { status: 401 }]);
        }
        if (access.scope) {
          const key = await allowed.keyWith(everyScopeBut(access.scope));
          cases.push([`a key without ${access.scope}`, { key }, allowed, { status: 403, code: "missing_scope" }]);
        }
        if (access.orgTypes) {
          const other = access.orgTypes.includes("content_owner") ? platform : owner;
          const key = await other.keyWith([...allScopes]);
          const code = access.orgTypes.includes("content_owner") ? "content_owner_only" : "platform_key_required";
          cases.push([`a key of a ${other.type}`, { key }, other, { status: 403, code }]);
        }
        return cases;
      }
      case "session": {
        const cases: [string, Credential, TestOrg, Expectation][] = [
          none,
          ["a key instead of a session", { key: owner.key }, owner, { status: 403, code: "session_required" }],
          ["an unknown session", { session: `sess_${"x".repeat(43)}` }, owner, { status: 401 }],
        ];
        if (access.operatorAdmin) {
          cases.push([
            "a session of someone who is not an operator admin",
            { session: stranger.session },
            owner,
            { status: 403, code: "operator_admin_required" },
          ]);
        }
        return cases;
      }
      case "org": {
        const target = access.orgTypes?.includes("content_owner") === false ? platform : owner;
        const roleHolder: SignedInUser = target === owner ? member : platformMember;
        const cases: [string, Credential, TestOrg, Expectation][] = [
          none,
          unknownKey,
          [
            "a session of someone outside the organisation",
            { session: stranger.session },
            target,
            { status: 403, code: "not_a_member" },
          ],
        ];
        const keysAllowed = !access.sessionOnly && access.need !== "manage";
        if (keysAllowed) {
          const needed = access.need === "read" ? "identity:read" : "identity:write";
          const key = await target.keyWith(everyScopeBut(needed));
          cases.push([`a key without ${needed}`, { key }, target, { status: 403, code: "missing_scope" }]);
        } else {
          const key = await target.keyWith([...allScopes]);
          cases.push(["a key", { key }, target, { status: 403, code: "session_required" }]);
        }
        if (access.need !== "read" && target === owner) {
          cases.push([
            "a plain member's session",
            { session: roleHolder.session },
            target,
            { status: 403, code: "role_required" },
          ]);
        }
        if (access.orgTypes) {
          const other = access.orgTypes.includes("content_owner") ? platform : owner;
          const session = other === owner ? ownerUser.session : platformMember.session;
          const code = access.orgTypes.includes("content_owner") ? "content_owner_only" : "platform_key_required";
          cases.push([`an owner's session of a ${other.type}`, { session }, other, { status: 403, code }]);
        }
        return cases;
      }
      case "partner": {
        return [
          none,
          unknownKey,
          [
            "a platform key without partner:provision",
            { key: await platform.keyWith(everyScopeBut("partner:provision")) },
            platform,
            { status: 403, code: "missing_scope" },
          ],
          [
            "a key of a platform that is not a trusted partner",
            { key: await platform.keyWith([...allScopes]) },
            platform,
            { status: 403, code: "partner_not_enabled" },
          ],
        ];
      }
    }
  }

  test("every route declares who may call it", () => {
    const undeclared = routes.filter((route) => !accessOf(route)).map((route) => `${route.method} ${route.path}`);
    expect(undeclared).toEqual([]);
    expect(routes.length).toBeGreaterThan(50);
  });

  for (const route of routes) {
    const access = accessOf(route);
    if (!access || access.kind === "public") continue;
    test(`${route.method} ${route.path} (${access.kind}) refuses what its declaration refuses`, async () => {
      for (const [label, credential, org, expected] of await refusals(access)) {
        const namesOrg =
          (access.kind === "org" && access.orgFrom === "query") || (access.kind === "key" && access.memberSessions);
        const orgQuery = namesOrg ? `?org_id=${org.id}` : "";
        const res = await send(route.method, `${fillPath(route.path, org.id)}${orgQuery}`, credential);
        const got = { status: res.status, code: res.body?.code };
        const want = "code" in expected ? expected : { status: 401, code: "unauthorized" };
        expect({ case: label, ...got }).toEqual({ case: label, ...want });
      }
    });
  }
});
