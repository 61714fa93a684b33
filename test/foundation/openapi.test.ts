import { expect, test } from "bun:test";
import { tidySchemas } from "../../src/http/openapi.ts";
import { addMember } from "../../src/modules/organizations/service.ts";
import { identityEventTypes } from "../../src/modules/outbox/service.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call, callApp } from "../support/http.ts";
import { buildIdentityApp, callIdentity, memberOf, signIn, signInOperatorAdmin } from "../support/identity.ts";
import { schemaViolations } from "../support/openapi-schema.ts";
import { testRuntime } from "../support/runtime.ts";

test("the OpenAPI document is generated from the models and served with its UI", async () => {
  const doc = await call("GET", "/openapi/json");
  expect(doc.status).toBe(200);
  expect(doc.body.openapi).toMatch(/^3\./);
  expect(doc.body.paths["/health"].get).toBeDefined();
  expect(doc.body.paths["/ready"].get.responses["200"]).toBeDefined();
  expect(doc.body.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", name: "X-API-Key" });
  // Every operation documents its problem responses against one shared schema.
  expect(doc.body.components.schemas.Problem.required).toEqual(["type", "title", "status", "code"]);
  for (const [path, operations] of Object.entries(doc.body.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      const problem = operation.responses?.["4XX"]?.content?.["application/problem+json"]?.schema;
      expect({ path, method, problem }).toEqual({ path, method, problem: { $ref: "#/components/schemas/Problem" } });
      // Every route but the health checks is rate limited, and says how to back off.
      const retryAfter = operation.responses?.["429"]?.headers?.["Retry-After"];
      const success = Object.entries(operation.responses ?? {}).find(([status]) => status.startsWith("2"))?.[1] as any;
      if (success && retryAfter) expect(success.headers?.["RateLimit-Remaining"]).toBeDefined();
      expect({ path, method, limited: retryAfter !== undefined }).toEqual({
        path,
        method,
        limited: path !== "/health" && path !== "/ready",
      });
    }
  }
  const ui = await call("GET", "/openapi");
  expect(ui.status).toBe(200);
  expect(ui.headers.get("content-type")).toContain("text/html");
  // The page works offline: every script and stylesheet comes from the service itself.
  const html = ui.body as string;
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
  expect(assets).toEqual(["/openapi/assets/swagger-ui.css", "/openapi/assets/swagger-ui-bundle.js"]);
  for (const asset of assets) {
    const served = await call("GET", asset);
    expect({ asset, status: served.status }).toEqual({ asset, status: 200 });
  }
  expect((await call("GET", "/openapi/assets/package.json")).status).toBe(404);
});

test("every operation has a summary", async () => {
  const doc = await call("GET", "/openapi/json");
  const missing = Object.entries(doc.body.paths as Record<string, Record<string, { summary?: string }>>).flatMap(
    ([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => !operation.summary)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
  expect(missing).toEqual([]);
});

test("every operation says who may call it, shows examples of its body and its answer, and lists its problem codes", async () => {
  const doc = await call("GET", "/openapi/json");
  const gaps: string[] = [];
  for (const [path, operations] of Object.entries(doc.body.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      const name = `${method.toUpperCase()} ${path}`;
      const access = operation["x-access"];
      if (!access) gaps.push(`${name}: no declared access`);
      else if (access.kind !== "public" && !(operation.security?.length > 0)) gaps.push(`${name}: no security`);
      const body = operation.requestBody?.content?.["application/json"];
      if (body && body.example === undefined) gaps.push(`${name}: no request example`);
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        const json = response.content?.["application/json"];
        if (status.startsWith("2") && json && json.example === undefined) gaps.push(`${name}: no ${status} example`);
      }
      if (access && access.kind !== "public" && !operation.responses["401"]?.description.includes("`unauthorized`"))
        gaps.push(`${name}: 401 not listed`);
      if (!operation.responses["503"]?.description.includes("`database_unavailable`"))
        gaps.push(`${name}: 503 not listed`);
    }
  }
  expect(gaps).toEqual([]);
  // What the codes are derived from: a key route's scope, an org route's roles.
  const mint = doc.body.paths["/api/v1/identity/keys"].post;
  expect(mint.responses["403"].description).toContain("`role_required`");
  expect(mint.requestBody.required).toBe(false);
  const ingest = doc.body.paths["/events"].post;
  expect(ingest.description).toStartWith("**Who may call:** an API key with `telemetry:write`.");
  expect(mint.description).toStartWith(
    "**Who may call:** an owner's or admin's session, or an API key of the organisation with `identity:write`.",
  );
  expect(ingest.responses["403"].description).toContain("`missing_scope`");
  expect(ingest.responses["503"].description).toContain("`ingest_overloaded`");
  expect(ingest.requestBody.content["application/json"].example.events[0].type).toBe("content_retrieved");
});

test("the statuses the interface names for an operation are declared, each with its codes", async () => {
  const doc = await call("GET", "/openapi/json");
  const codesOf = (method: string, path: string, status: string) =>
    // The description lists "`code`: meaning" per code, separated by "; ".
    [...(doc.body.paths[path][method].responses[status]?.description ?? "").matchAll(/(?:^|; )(`[a-z_]+`):/g)].map(
      (match) => match[1],
    );
  const identity = "/api/v1/identity";
  // interface-spec.md, Endpoints: the delegation flows' 404, 409 and 410; webhooks' limit.
  expect(codesOf("post", `${identity}/delegation-requests`, "404")).toContain("`verified_domain_not_found`");
  expect(codesOf("post", `${identity}/delegation-requests`, "409")).toEqual([
    "`delegation_exists`",
    "`delegation_request_pending`",
  ]);
  expect(codesOf("post", `${identity}/delegation-requests/{id}/approve`, "409")).toEqual([
    "`delegation_request_resolved`",
    "`delegation_request_stale`",
  ]);
  expect(codesOf("post", `${identity}/delegation-requests/{id}/approve`, "410")).toEqual([
    "`delegation_request_expired`",
  ]);
  expect(codesOf("post", `${identity}/delegation-requests/{id}/deny`, "410")).toEqual(["`delegation_request_expired`"]);
  expect(codesOf("post", `${identity}/delegations`, "409")).toEqual(["`delegation_exists`"]);
  expect(codesOf("post", `${identity}/delegations`, "404")).toEqual(["`organization_not_found`"]);
  expect(codesOf("post", `${identity}/domains/{domain}/verify`, "409")).toEqual(["`domain_taken`"]);
  expect(codesOf("post", `${identity}/webhooks`, "409")).toEqual(["`webhook_limit_reached`"]);
  // A route for one organisation type names the refusal its other types get.
  expect(codesOf("post", `${identity}/delegation-requests/{id}/approve`, "403")).toContain("`content_owner_only`");
  expect(codesOf("post", `${identity}/delegation-requests`, "403")).toContain("`platform_key_required`");
  expect(codesOf("post", `${identity}/domains`, "403")).toContain("`content_owner_only`");
});

test("every operation documents its success answer", async () => {
  const doc = await call("GET", "/openapi/json");
  const silent: string[] = [];
  for (const [path, operations] of Object.entries(doc.body.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      const statuses = Object.keys(operation.responses ?? {});
      if (!statuses.some((status) => status.startsWith("2") || status.startsWith("3"))) {
        silent.push(`${method.toUpperCase()} ${path}`);
      }
    }
  }
  expect(silent).toEqual([]);
  const paths = doc.body.paths;
  expect(Object.keys(paths["/api/v1/identity/webhooks/{id}"].delete.responses)).toContain("204");
  expect(paths["/api/v1/identity/auth/oidc/{provider}/start"].get.responses["302"].headers.Location).toBeDefined();
  expect(
    paths["/api/v1/identity/audit"].get.responses["200"].content["application/json"].schema.properties,
  ).toHaveProperty("items");
});

test("the schemas say what travels: integers, date-times, and null where an enum may be null", async () => {
  const doc = await call("GET", "/openapi/json");
  const found = { textIntegers: 0, textDates: 0, enumsWithoutNull: [] as string[] };
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, `${at}/${i}`);
      return;
    }
    if (typeof node !== "object" || node === null) return;
    const schema = node as Record<string, any>;
    const formats = (schema.anyOf ?? []).map((option: Record<string, unknown>) => option.format);
    if (formats.includes("integer")) found.textIntegers++;
    if (formats.includes("date")) found.textDates++;
    const nullable = schema.nullable === true || (Array.isArray(schema.type) && schema.type.includes("null"));
    if (Array.isArray(schema.enum) && nullable && !schema.enum.includes(null)) found.enumsWithoutNull.push(at);
    for (const [key, value] of Object.entries(schema)) walk(value, `${at}/${key}`);
  };
  walk(doc.body, "");
  expect(found).toEqual({ textIntegers: 0, textDates: 0, enumsWithoutNull: [] });
  const organization =
    doc.body.paths["/api/v1/identity/organizations/{id}"].get.responses["200"].content["application/json"].schema;
  expect(organization.properties.role.enum).toEqual(["owner", "admin", "member", null]);
  expect(organization.properties.created_at).toEqual({ type: "string", format: "date-time" });
  expect(doc.body.components.schemas.Problem.properties.status).toEqual({ type: "integer" });
});

test("request bodies are documented as the service takes them: unknown members ignored, not refused", async () => {
  const doc = await call("GET", "/openapi/json");
  const refusing: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (typeof node !== "object" || node === null) return;
    if ((node as Record<string, unknown>).additionalProperties === false) refusing.push(at);
    for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`);
  };
  for (const [path, operations] of Object.entries(doc.body.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(operations)) walk(operation.requestBody, `${method} ${path}`);
  }
  expect(refusing).toEqual([]);
  // As documented: a member the service does not know changes nothing.
  const link = await call("POST", "/api/v1/identity/auth/magic-link", {
    body: { email: `${crypto.randomUUID()}@example.org`, remember_me: true },
  });
  expect(link.status).toBe(202);
});

test("the document's webhooks describe every event the service sends: envelope, data and signing headers", async () => {
  const doc = await call("GET", "/openapi/json");
  const webhooks = doc.body.webhooks as Record<string, { post: Record<string, any> }>;
  expect(Object.keys(webhooks).sort()).toEqual([...identityEventTypes, "ping"].sort());
  for (const [type, { post }] of Object.entries(webhooks)) {
    const headers = post.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.required]);
    expect({ type, headers }).toEqual({
      type,
      headers: [
        ["X-Svc-Signature", true],
        ["X-Svc-Signature-Previous", false],
        ["X-Svc-Timestamp", true],
        ["X-Svc-Event-Type", true],
        ["X-Svc-Delivery-Id", true],
      ],
    });
    const envelope = post.requestBody.content["application/json"].schema;
    expect(Object.keys(envelope.properties)).toEqual(["id", "type", "created_at", "data"]);
    expect(envelope.properties.type.const).toBe(type);
    expect(post.responses).toHaveProperty("2XX");
  }
  const timestamp = webhooks.ping?.post.parameters.find((p: { name: string }) => p.name === "X-Svc-Timestamp");
  expect(timestamp.description).toContain("Unix seconds");
  const claimed = webhooks["invite.claimed"]?.post.requestBody.content["application/json"].schema.properties.data;
  expect(Object.keys(claimed.properties)).toEqual(["invite", "user_id"]);
});

test("tidying the schemas leaves values alone: examples, defaults, constants and extensions", () => {
  const integer = { anyOf: [{ type: "string", format: "integer" }, { type: "integer" }] };
  const values = { example: integer, examples: [integer], default: integer, const: integer, "x-access": integer };
  expect(tidySchemas({ ...values, properties: { n: integer } })).toEqual({
    ...values,
    properties: { n: { type: "integer" } },
  });
});

test("each refusal a route answers is listed under its status, with its code, and fits the Problem schema", async () => {
  const doc = await call("GET", "/openapi/json");
  const owner = await createTestOrg();
  const platform = await createTestOrg({ type: "platform" });
  const requester = await signIn();
  const admin = await signInOperatorAdmin();
  const filed = await callIdentity("POST", "/api/v1/identity/platform-access-requests", {
    session: requester.session,
    body: { org_name: "Refusals", admin_email: requester.email, use_case: "documenting refusals" },
  });
  const review = `/api/v1/identity/admin/access-requests/${filed.body.id}/approve`;
  expect((await callIdentity("POST", review, { session: admin.session, body: {} })).status).toBe(200);
  const unknown = crypto.randomUUID();
  const event = {
    id: crypto.randomUUID(),
    type: "content_retrieved",
    timestamp: new Date().toISOString(),
    source_role: "origin",
    content_url: "https://elsewhere.example.org/page",
  };
  // [operation path, method, request path, credential, body, the code the interface or the route answers]
  const cases: [string, string, string, { key?: string; session?: string }, unknown, string][] = [
    [
      "/content-owners/summary",
      "GET",
      "/content-owners/summary",
      { key: platform.key },
      undefined,
      "delegation_required",
    ],
    [
      "/content-owners/events",
      "GET",
      `/content-owners/events?delegated_from=${owner.id}`,
      { key: platform.key },
      undefined,
      "no_active_delegation",
    ],
    [
      "/content-owners/urls",
      "GET",
      `/content-owners/urls?delegated_from=${owner.id}`,
      { key: owner.key },
      undefined,
      "delegation_not_allowed",
    ],
    [
      "/content-owners/timeseries",
      "GET",
      "/content-owners/timeseries?domain=elsewhere.example.org",
      { key: owner.key },
      undefined,
      "domain_not_bound",
    ],
    [
      "/content-owners/export",
      "GET",
      "/content-owners/export",
      { key: platform.key },
      undefined,
      "delegation_required",
    ],
    [
      "/events",
      "POST",
      "/events",
      { key: owner.key },
      { document_type: "event_batch", schema_version: "1.0", events: [event] },
      "outside_verified_domains",
    ],
    ["/sessions/end", "POST", "/sessions/end", { key: platform.key }, { session_id: unknown }, "session_not_found"],
    [
      "/click-tokens",
      "POST",
      "/click-tokens",
      { key: platform.key },
      { session_id: unknown, content_url: `https://${owner.domain}/a` },
      "session_not_found",
    ],
    ["/ctx/{token}", "GET", `/ctx/ctx_${"a".repeat(43)}`, { key: platform.key }, undefined, "click_token_not_found"],
    ["/ctx/{token}", "GET", `/ctx/ct_${"a".repeat(20)}`, { key: platform.key }, undefined, "foreign_click_token"],
    [
      "/api/v1/identity/manifest",
      "GET",
      "/api/v1/identity/manifest",
      { key: owner.key },
      undefined,
      "manifest_not_found",
    ],
    [
      "/api/v1/identity/admin/access-requests/{id}/approve",
      "POST",
      review,
      { session: admin.session },
      {},
      "already_reviewed",
    ],
    [
      "/api/v1/identity/auth/magic-link/verify",
      "POST",
      "/api/v1/identity/auth/magic-link/verify",
      {},
      { token: "x".repeat(43) },
      "unauthorized",
    ],
    [
      "/api/v1/identity/domains/{domain}",
      "GET",
      "/api/v1/identity/domains/not%20a%20host",
      { key: owner.key },
      undefined,
      "invalid_domain",
    ],
  ];
  const gaps: string[] = [];
  for (const [path, method, target, credential, body, code] of cases) {
    const res = await callIdentity(method, target, { ...credential, body });
    const name = `${method} ${path} -> ${res.status} ${res.body?.code}`;
    const documented = doc.body.paths[path][method.toLowerCase()].responses[String(res.status)];
    if (res.body?.code !== code) gaps.push(`${name}: expected ${code}`);
    else if (!documented) gaps.push(`${name}: status not listed`);
    else if (!documented.description.includes(`\`${code}\``)) gaps.push(`${name}: code not listed`);
    const schema = documented?.content?.["application/problem+json"]?.schema;
    for (const wrong of schemaViolations(schema, res.body, doc.body)) gaps.push(`${name}: ${wrong}`);
  }
  expect(gaps).toEqual([]);
});

test("a route that names its organisation in the path documents no organization_required, which it cannot answer", async () => {
  const doc = await call("GET", "/openapi/json");
  // Elsewhere a session of someone in two organisations must name one with org_id (422);
  // here the path names it, so the same session is answered.
  const first = await createTestOrg();
  const second = await createTestOrg();
  const member = await memberOf(first.id, "member");
  const { ctx } = await testRuntime();
  await addMember(ctx.sql, second.id, member.userId, "member");
  expect((await callIdentity("GET", "/api/v1/identity/domains", { session: member.session })).body.code).toBe(
    "organization_required",
  );
  const read = await callIdentity("GET", `/api/v1/identity/organizations/${first.id}`, { session: member.session });
  expect(read.status).toBe(200);
  const responses = doc.body.paths["/api/v1/identity/organizations/{id}"].get.responses;
  expect(responses["422"]?.description ?? "").not.toContain("`organization_required`");
});

test("every read documents the X-Data-As-Of header it sends, the only freshness an export carries", async () => {
  const doc = await call("GET", "/openapi/json");
  const owner = await createTestOrg();
  const platform = await createTestOrg({ type: "platform" });
  const reads = Object.entries(doc.body.paths as Record<string, Record<string, any>>).filter(([path]) =>
    /^\/(content-owners|agent)\//.test(path),
  );
  expect(reads.length).toBe(10);
  const gaps: string[] = [];
  for (const [path, { get }] of reads) {
    const header = get.responses["200"].headers?.["X-Data-As-Of"];
    if (header?.schema?.format !== "date-time") gaps.push(`${path}: X-Data-As-Of not documented`);
    const res = await call("GET", path, { key: path.startsWith("/agent") ? platform.key : owner.key });
    const sent = res.headers.get("x-data-as-of");
    if (res.status !== 200 || sent === null || Number.isNaN(Date.parse(sent))) gaps.push(`${path}: sent ${sent}`);
    else if (typeof res.body === "object" && res.body.as_of !== sent) gaps.push(`${path}: as_of ${res.body.as_of}`);
  }
  expect(gaps).toEqual([]);
});

test("the refusals of the body and query readers are listed on every operation that reads them", async () => {
  const doc = await call("GET", "/openapi/json");
  const { app } = await buildIdentityApp({ BODY_TIMEOUT_SECONDS: 1 });
  const platform = await createTestOrg({ type: "platform" });
  const json = { "content-type": "application/json" };
  const stalled = new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode("{")) });
  const answers = {
    invalid_utf8: await callApp(app, "POST", "/sessions/start", {
      key: platform.key,
      headers: json,
      body: new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    }),
    malformed_body: await callApp(app, "POST", "/sessions/start", {
      key: platform.key,
      headers: { ...json, "content-encoding": "gzip" },
      body: "not gzip",
    }),
    unsupported_content_encoding: await callApp(app, "POST", "/sessions/start", {
      key: platform.key,
      headers: { ...json, "content-encoding": "compress" },
      body: "{}",
    }),
    body_timeout: await app.handle(
      new Request("http://test.local/sessions/start", {
        method: "POST",
        headers: { ...json, "x-api-key": platform.key },
        body: stalled,
        duplex: "half",
      } as RequestInit),
    ),
    invalid_text: await callApp(app, "GET", "/content-owners/events?domain=a%00b", { key: platform.key }),
    // A route that takes no body still reads one that is sent, as JSON.
    unsupported_media_type: await callApp(app, "DELETE", `/api/v1/identity/keys/${crypto.randomUUID()}`, {
      key: await platform.keyWith(["identity:write"]),
      headers: { "content-type": "text/plain" },
      body: "revoke",
    }),
  };
  const gaps: string[] = [];
  for (const [code, answer] of Object.entries(answers)) {
    const body = answer instanceof Response ? await answer.json() : answer.body;
    if (body.code !== code) gaps.push(`${code}: answered ${answer.status} ${body.code}`);
  }
  for (const [path, operations] of Object.entries(doc.body.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      const listed = (code: string, status: number) =>
        operation.responses[String(status)]?.description?.includes(`\`${code}\``) ||
        gaps.push(`${method.toUpperCase()} ${path}: ${status} ${code} not listed`);
      if (method !== "get") {
        for (const code of ["malformed_json", "invalid_utf8", "malformed_body"]) listed(code, 400);
        for (const code of ["unsupported_media_type", "unsupported_content_encoding"]) listed(code, 415);
        listed("body_timeout", 408);
        listed("payload_too_large", 413);
      }
      if ((operation.parameters ?? []).some((p: { in: string }) => p.in === "query")) listed("invalid_text", 400);
    }
  }
  expect(gaps).toEqual([]);
});
