import { openapi } from "@elysiajs/openapi";
import { FormatRegistry, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia, t } from "elysia";
import { fullFormats } from "elysia/type-system/format";
import type { Config } from "../config.ts";
import { problemCodes } from "../core/problem.ts";
import { uuidText } from "../core/uuid.ts";
import { sessionCookieName } from "./credentials.ts";
import { type DocumentedOperation, documentOperation } from "./openapi-examples.ts";
import { openapiUiAssetPath, openapiUiAssets } from "./openapi-ui-assets.ts";

// @elysiajs/openapi registers Zod-backed checks for TypeBox's string formats when
// it is imported, replacing Elysia's. Zod's builds its schema anew on every call:
// the uuid checks of one 100-event batch took about 5 ms, a third of ingest's CPU.
// The formats the models use get Elysia's own checks back, but for uuid: Elysia's
// also takes a `urn:uuid:` prefix, which PostgreSQL's uuid type refuses (a 500
// where a 400 was due), so only the plain form passes.
const modelFormats = {
  uuid: uuidText,
  email: fullFormats.email,
  "date-time": fullFormats["date-time"],
};
for (const [format, check] of Object.entries(modelFormats)) {
  FormatRegistry.Set(format, (value) => (check instanceof RegExp ? check.test(value) : check(value)));
}

export interface RouteWithBody {
  method: string;
  path: string;
  hooks: { body?: unknown };
}

interface OpenApiServer {
  url: string;
  description: string;
}

interface OpenApiOperation {
  tags?: string[];
  servers?: OpenApiServer[];
  requestBody?: { content?: Record<string, unknown>; required?: boolean };
  responses?: Record<string, unknown>;
}

interface OpenApiDocument {
  servers?: OpenApiServer[];
  webhooks?: Record<string, unknown>;
  paths?: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, unknown> };
}

/** The body of every error response (src/http/problem.ts), as OpenAPI shows it. */
const Problem = t.Object(
  {
    type: t.String({ description: "urn:content-telemetry:problem:<code>" }),
    title: t.String(),
    status: t.Integer(),
    code: t.String({
      enum: Object.keys(problemCodes),
      description: `stable machine-readable error code: ${Object.entries(problemCodes)
        .map(([code, { status, meaning }]) => `\`${code}\` (${status}) ${meaning}`)
        .join("; ")}`,
    }),
    detail: t.Optional(t.String()),
    instance: t.Optional(t.String({ description: "the request path" })),
    request_id: t.Optional(t.String()),
    errors: t.Optional(
      t.Array(t.Object({ path: t.String(), message: t.String() }), {
        description: "the fields at fault (bad input, 400, and 422 refusals that name a field), one entry each",
      }),
    ),
  },
  { additionalProperties: true, description: "RFC 9457 problem details" },
);

const problemResponse = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});

const integerHeader = (description: string) => ({ description, schema: { type: "integer", minimum: 0 } });

/** src/http/rate-limit.ts: every route but the health checks counts against a limit. */
const rateLimitHeaders = {
  "RateLimit-Limit": integerHeader("requests the caller's bucket holds when full (twice the per-second rate)"),
  "RateLimit-Remaining": integerHeader("requests left in the bucket"),
  "RateLimit-Reset": integerHeader("seconds until the bucket is full again"),
};
/** src/modules/reads/index.ts sets it on every read; an export, which streams no as_of, has only this. */
const freshnessHeaders = {
  "X-Data-As-Of": {
    description: "the read counts every event acknowledged before this time (the body's as_of, where it has one)",
    schema: { type: "string", format: "date-time" },
  },
};
const rateLimitedResponse = {
  ...problemResponse(
    "Too many requests: `rate_limited` (`limit_class` names the limit), or a limit of the operation's own that its description names; retry after Retry-After",
  ),
  headers: { "Retry-After": integerHeader("seconds until the next request is allowed"), ...rateLimitHeaders },
};

/** Every operation can fail with a problem document; say so once, for all of them. */
export function addProblemResponses(document: OpenApiDocument): void {
  document.components ??= {};
  document.components.schemas = { ...document.components.schemas, Problem };
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      operation.responses ??= {};
      if (!operation.tags?.includes("Health")) {
        const reads = operation.tags?.some((tag) => tag.endsWith(" reads")) ?? false;
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!status.startsWith("2")) continue;
          (response as { headers?: object }).headers ??= reads
            ? { ...rateLimitHeaders, ...freshnessHeaders }
            : rateLimitHeaders;
        }
        operation.responses["429"] ??= rateLimitedResponse;
      }
      operation.responses["4XX"] ??= problemResponse("Client error: see `code` (and `errors` for the fields at fault)");
      operation.responses["5XX"] ??= problemResponse("Server or database unavailable");
    }
  }
}

/**
 * @elysiajs/openapi names a request body's media type only from string parsers;
 * the global JSON reader (src/http/plugin.ts) is a function, so every body came
 * out as `content: {}`. Every body here is JSON: fill in the route's schema.
 */
export function fillJsonRequestBodies(document: OpenApiDocument, routes: readonly RouteWithBody[]): void {
  for (const route of routes) {
    if (!route.hooks.body) continue;
    const path = route.path.replace(/:([^/]+)/g, "{$1}");
    const requestBody = document.paths?.[path]?.[route.method.toLowerCase()]?.requestBody;
    if (requestBody && Object.keys(requestBody.content ?? {}).length === 0) {
      requestBody.content = { "application/json": { schema: route.hooks.body } };
    }
    // No body at all is {} where every field is optional (src/http/plugin.ts).
    if (requestBody && Value.Check(route.hooks.body as TSchema, {})) requestBody.required = false;
  }
}

type SchemaNode = Record<string, unknown>;

/**
 * A request body's schema as the service applies it: members it does not know are
 * ignored (Elysia drops them before the handler), not refused, so the document
 * must not say `additionalProperties: false` of a request. A copy: the route's
 * own schema validates requests.
 */
function ignoringUnknownMembers(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(ignoringUnknownMembers);
  if (!isNode(node)) return node;
  const copy: SchemaNode = {};
  for (const [name, value] of Object.entries(node)) {
    if (name === "additionalProperties" && value === false) continue;
    copy[name] = valueMembers.has(name) ? value : ignoringUnknownMembers(value);
  }
  return copy;
}

export function requestBodiesIgnoreUnknownMembers(document: OpenApiDocument): void {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const media of Object.values(operation.requestBody?.content ?? {})) {
        const withSchema = media as { schema?: unknown };
        if (withSchema.schema !== undefined) withSchema.schema = ignoringUnknownMembers(withSchema.schema);
      }
    }
  }
}

/** Members that hold values, not schemas: left as they are. */
const valueMembers = new Set(["example", "examples", "default", "const", "enum"]);

const isNode = (value: unknown): value is SchemaNode => typeof value === "object" && value !== null;

/**
 * Elysia's number and date types accept text as well, for query strings and
 * bodies, and @elysiajs/openapi shows that: every integer came out as "a string
 * of format integer, or an integer", every date as "date-time, date or number",
 * and an enum that may be null without null among its values (so a strict
 * client refused a real `"role": null`). The document says what travels: an
 * integer is an integer (a query string carries it as its digits either way), a
 * date is an ISO 8601 date-time string (every date in this interface is an
 * answer's), and a nullable enum lists null.
 */
export function tidySchemas(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidySchemas);
  if (!isNode(node)) return node;
  const tidied: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    tidied[key] = valueMembers.has(key) || key.startsWith("x-") ? value : tidySchemas(value);
  }
  const options = Array.isArray(tidied.anyOf) ? (tidied.anyOf as unknown[]).filter(isNode) : [];
  const { anyOf: _, ...rest } = tidied;
  const integer = options.find((option) => option.type === "integer");
  if (options.length === 2 && integer && options.some((option) => option.format === "integer")) {
    return { ...rest, ...integer };
  }
  const formats = options.map((option) => option.format ?? option.type);
  if (options.length === 3 && ["date-time", "date", "number"].every((format) => formats.includes(format))) {
    return { ...rest, type: "string", format: "date-time" };
  }
  const nullable = tidied.nullable === true || (Array.isArray(tidied.type) && tidied.type.includes("null"));
  if (Array.isArray(tidied.enum) && nullable && !tidied.enum.includes(null)) tidied.enum = [...tidied.enum, null];
  return tidied;
}

/**
 * The interface's two base addresses: `{base_url}`, the document's own, for reads,
 * click tokens and the control plane, and `{ingest_url}` for event and session
 * ingest, which the Ingest operations name themselves (OpenAPI gives an
 * operation without servers of its own the document's). Read when the document
 * is served: PUBLIC_BASE_URL follows the listening port, which is known only
 * once the service listens.
 */
export function addServers(
  document: OpenApiDocument,
  urls: Pick<Config, "PUBLIC_BASE_URL" | "PUBLIC_INGEST_URL">,
): void {
  const base = { url: urls.PUBLIC_BASE_URL, description: "{base_url}: reads and the control plane" };
  const ingest = {
    url: urls.PUBLIC_INGEST_URL ?? urls.PUBLIC_BASE_URL,
    description: "{ingest_url}: event and session ingest",
  };
  document.servers = [base];
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      if (operation.tags?.includes("Ingest")) operation.servers = [ingest];
    }
  }
}

const specPath = "/openapi/json";

export const openapiPlugin = (
  routes: () => readonly RouteWithBody[],
  urls: Pick<Config, "PUBLIC_BASE_URL" | "PUBLIC_INGEST_URL">,
  /** The OpenAPI 3.1 `webhooks`: the requests the service sends. */
  webhooks: Record<string, unknown>,
) =>
  new Elysia({ name: "openapi-json-bodies" })
    .onAfterHandle({ as: "global" }, ({ path, response }) => {
      if (path === specPath && response && typeof response === "object") {
        const document = response as OpenApiDocument;
        fillJsonRequestBodies(document, routes());
        requestBodiesIgnoreUnknownMembers(document);
        addProblemResponses(document);
        addServers(document, urls);
        document.webhooks = webhooks;
        document.paths = tidySchemas(document.paths) as OpenApiDocument["paths"];
        document.components = tidySchemas(document.components) as OpenApiDocument["components"];
        document.webhooks = tidySchemas(document.webhooks) as OpenApiDocument["webhooks"];
        for (const operations of Object.values(document.paths ?? {})) {
          for (const [method, operation] of Object.entries(operations)) {
            documentOperation(operation as DocumentedOperation, method, operation.tags ?? []);
          }
        }
      }
    })
    .use(openapiUiAssets)
    .use(
      openapi({
        path: "/openapi",
        specPath,
        provider: "swagger-ui",
        swagger: {
          cdn: `${openapiUiAssetPath}/swagger-ui-bundle.js`,
          theme: `${openapiUiAssetPath}/swagger-ui.css`,
        },
        documentation: {
          info: {
            title: "Content Telemetry reporting and query service",
            version: "0.1.0",
            description:
              "Ingest of Content Telemetry v1 sessions and events, content-owner reads, click tokens and the identity control plane. Every error is an RFC 9457 problem (application/problem+json) with a stable `code`; validation errors list each failing field in `errors`. Rate limits (429 with Retry-After): per API key, 100 ingest and 20 read requests and 5 click-manifest lookups per second; per key or signed-in user, 10 control-plane requests per second; per client address, 5 per second to sign-in and /resolve and 10 failed credential lookups per second; bursts of twice the rate. These are the defaults; the operator sets them with RATE_LIMIT_*_PER_SECOND.",
          },
          components: {
            securitySchemes: {
              apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
              session: { type: "http", scheme: "bearer" },
              sessionCookie: { type: "apiKey", in: "cookie", name: sessionCookieName },
            },
          },
        },
      }),
    );
