import { type ProblemCode, problemCodes } from "../core/problem.ts";
import type { Access } from "./access-declarations.ts";
import { describeAccess } from "./access-words.ts";
import { orgTypeRefusalCode } from "./org-access.ts";

/**
 * What the OpenAPI document says of each operation beyond its schemas: an
 * example of its request body and of each success response, built from the
 * schemas, and the problem codes it can answer with, from the access it declares
 * and the parameters it takes.
 */

interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  description?: string;
  minimum?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  example?: unknown;
  examples?: unknown[];
}

interface MediaType {
  schema?: JsonSchema;
  example?: unknown;
}

export interface DocumentedOperation {
  "x-access"?: Access;
  /** The problems of the operation's own logic (a conflict, a state it refuses), declared by its route. */
  "x-problems"?: ProblemCode[];
  description?: string;
  parameters?: { in: string }[];
  requestBody?: { content?: Record<string, MediaType>; required?: boolean };
  responses?: Record<string, { description?: string; content?: Record<string, MediaType> }>;
}

const exampleId = "0b9f3c2e-6c1d-4e0a-9d5b-1f2e3a4b5c6d";
const exampleTime = "2026-11-23T10:00:00.000Z";

/** Values a field's name says more about than its type does. */
function byName(name: string): unknown {
  if (/(^|_)url$/.test(name) || name === "manifest_ref") return "https://news.example/2026/story";
  if (name === "domain" || name === "domains" || name === "host") return "news.example";
  if (name === "event_type" || name === "type") return "content_retrieved";
  if (name === "source_role") return "agent";
  if (name === "email") return "person@news.example";
  if (name === "schema_version") return "1.0";
  if (name === "timestamp" || name === "as_of" || /_(at|start|end)$/.test(name)) return exampleTime;
  if (
    name === "id" ||
    /(^|_)(org|organization|platform|user|session|event|key|delegation|webhook|grantor|grantee)_id$/.test(name)
  )
    return exampleId;
  if (name === "key") return "svc_pk_Vb3kq9ZfXw2m8T1yQe5SzkEnDkpLPaJfYwNC0APn3bj";
  if (name === "scopes") return "telemetry:read";
  if (name === "agent_id") return "example-agent";
  if (name === "currency") return "USD";
  if (name === "country") return "DE";
  return undefined;
}

/** A plausible value for `schema`: its own example, a constant, the first allowed value, or one made from its type. */
export function exampleOf(schema: JsonSchema | undefined, name = "", depth = 0): unknown {
  if (!schema) return undefined;
  if (schema.example !== undefined) return schema.example;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  // Elysia's text forms of integers and dates are gone by now (tidySchemas, src/http/openapi.ts).
  if (schema.anyOf)
    return exampleOf(
      schema.anyOf.find((option) => option.type !== "null"),
      name,
      depth,
    );
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "object": {
      if (depth > 5) return {};
      const entries = Object.entries(schema.properties ?? {}).map(
        ([key, property]) => [key, exampleOf(property, key, depth + 1)] as const,
      );
      return Object.fromEntries(entries.filter(([, value]) => value !== undefined));
    }
    case "array":
      return depth > 5 ? [] : [exampleOf(schema.items, name, depth + 1)];
    case "integer":
    case "number":
      return schema.minimum !== undefined && schema.minimum > 0 ? schema.minimum : 1;
    case "boolean":
      return true;
    case "string": {
      if (schema.format === "uuid") return exampleId;
      if (schema.format === "date-time") return exampleTime;
      if (schema.format === "email") return "person@news.example";
      if (schema.pattern?.startsWith("^sha256:")) return `sha256:${"0".repeat(64)}`;
      const named = byName(name);
      if (named !== undefined) return named;
      // "one of a, b, c" in a description names a closed set: its first value.
      const listed = /one of ([a-z0-9_:.-]+)/i.exec(schema.description ?? "")?.[1];
      return listed ?? "example";
    }
    default:
      return undefined;
  }
}

/** Each status's problem codes for an operation: its route's own (`x-problems`), then those of its access, its parameters and its kind. */
export function problemCodesOf(operation: DocumentedOperation, method: string, tags: readonly string[]): ProblemCode[] {
  const access = operation["x-access"];
  const codes: ProblemCode[] = [...(operation["x-problems"] ?? [])];
  const parameters = operation.parameters ?? [];
  if (operation.requestBody || parameters.some((p) => p.in === "query" || p.in === "path")) {
    codes.push("validation_failed");
  }
  // Every query string is searched for NUL before validation (src/http/query-text.ts).
  if (parameters.some((p) => p.in === "query")) codes.push("invalid_text");
  // What the one body reader refuses (src/http/json-body.ts, body-stream.ts). It reads a body sent to any
  // route but a GET, as JSON, also where the route takes none (src/http/plugin.ts); only those that take
  // one refuse an empty body.
  if (operation.requestBody) codes.push("empty_body");
  if (method !== "get") {
    codes.push(
      "malformed_json",
      "invalid_utf8",
      "malformed_body",
      "body_timeout",
      "payload_too_large",
      "unsupported_media_type",
      "unsupported_content_encoding",
    );
  }
  if (access && access.kind !== "public") codes.push("unauthorized");
  // Every credential acting for an organisation: its keys, its members' sessions, a partner's key.
  if (access?.kind === "key" || access?.kind === "org" || access?.kind === "partner") {
    codes.push("organization_suspended");
  }
  switch (access?.kind) {
    case "key":
      if (access.scope) codes.push("missing_scope");
      if (access.memberSessions) codes.push("not_a_member", "organization_mismatch", "organization_required");
      if (access.orgTypes) codes.push(orgTypeRefusalCode(access.orgTypes));
      break;
    case "session":
      codes.push("session_required");
      if (access.operatorAdmin) codes.push("operator_admin_required");
      break;
    case "org":
      codes.push("not_a_member", "organization_mismatch");
      // Only a session that leaves org_id out is asked to name one; a path always names it.
      if (access.orgFrom !== "path") codes.push("organization_required");
      if (access.need !== "manage" && !access.sessionOnly) codes.push("missing_scope");
      if (access.need === "manage" || access.sessionOnly) codes.push("session_required");
      if (access.need !== "read") codes.push("role_required");
      if (access.orgTypes) codes.push(orgTypeRefusalCode(access.orgTypes));
      break;
    case "partner":
      codes.push("missing_scope", "partner_not_enabled");
      break;
  }
  if (!tags.includes("Health")) codes.push("rate_limited");
  codes.push("database_unavailable");
  if (tags.includes("Ingest")) codes.push("ingest_overloaded");
  if (tags.some((tag) => tag.includes("reads"))) codes.push("query_timeout");
  return codes;
}

const problemContent = { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } };

/**
 * Fills in who may call (with the scope, which OpenAPI's `security` cannot say for
 * an API key), examples and the problem codes by status, leaving whatever the
 * route declared itself.
 */
export function documentOperation(operation: DocumentedOperation, method: string, tags: readonly string[]): void {
  const access = operation["x-access"];
  if (access && !operation.description?.startsWith("**Who may call:**")) {
    const who = `**Who may call:** ${describeAccess(access)}.`;
    operation.description = operation.description ? `${who}\n\n${operation.description}` : who;
  }
  const body = operation.requestBody?.content?.["application/json"];
  if (body?.schema && body.example === undefined) body.example = exampleOf(body.schema);
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const json = response.content?.["application/json"];
    if (status.startsWith("2") && json?.schema && json.example === undefined) json.example = exampleOf(json.schema);
  }
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of problemCodesOf(operation, method, tags)) {
    const { status } = problemCodes[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  operation.responses ??= {};
  for (const [status, codes] of byStatus) {
    operation.responses[String(status)] ??= {
      description: codes.map((code) => `\`${code}\`: ${problemCodes[code].meaning}`).join("; "),
      content: problemContent,
    };
  }
  if ((operation.parameters ?? []).some((p) => p.in === "path")) {
    operation.responses["404"] ??= {
      description: "The resource named in the path does not exist, or is not the caller's (its `…_not_found` code)",
      content: problemContent,
    };
  }
}

/**
 * The problems of a route's own logic, which its access and parameters do not
 * say, for its OpenAPI detail: `detail: { summary, ...ownProblems("delegation_exists") }`.
 * Each is then listed under its status.
 */
export const ownProblems = (...codes: ProblemCode[]) => ({ "x-problems": codes });
