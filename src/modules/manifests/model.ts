import { t } from "elysia";

/**
 * The participant manifest (`/.well-known/content-telemetry.json`) as the
 * standard's v1 JSON schema (`manifest.json`) defines it, in TypeBox. Unknown
 * members are tolerated everywhere (8.2: "Consumers MUST tolerate unknown fields").
 * The rules the schema cannot say (8.6, 8.7) are in validate.ts.
 */
const open = { additionalProperties: true } as const;

/** An HTTPS URL (7.4, 8.5): `format: uri` alone takes any scheme, `javascript:` included. */
const httpsUrl = { format: "uri", pattern: "^https://" } as const;

/** 8.4: a signing key; `publicKey` is multibase base58btc with the Ed25519 multicodec prefix (as in did:key). */
export const ManifestKey = t.Object(
  {
    id: t.String({ minLength: 1, description: "unique within the manifest (8.4, 8.7)" }),
    type: t.Literal("Ed25519"),
    publicKey: t.String({ minLength: 1 }),
    expires: t.Optional(t.String({ format: "date-time" })),
  },
  open,
);

export type ManifestKey = typeof ManifestKey.static;

export const ParticipantManifest = t.Object(
  {
    // 8.2 and 12: v1 consumers accept any 1.x document, written as ingest takes it (1, 1.2, 1.2.1).
    schema_version: t.String({ pattern: "^1(\\.[0-9]+){0,2}$" }),
    id: t.String({ format: "uri" }),
    roles: t.Array(t.Union([t.Literal("content_owner"), t.Literal("agent"), t.Literal("platform")]), {
      minItems: 1,
      uniqueItems: true,
    }),
    operator: t.Object({ name: t.String(), domain: t.Optional(t.String()) }, open),
    keys: t.Optional(t.Array(ManifestKey)),
    telemetry: t.Optional(
      t.Object(
        {
          endpoint: t.String(httpsUrl),
          conformance_level: t.Optional(
            t.Union([t.Literal("retrieval"), t.Literal("grounding"), t.Literal("citation")]),
          ),
          ctx_resolution: t.Optional(t.String(httpsUrl)),
          coverage: t.Optional(
            t.Record(
              t.String(),
              t.Object(
                {
                  mode: t.Union([
                    t.Literal("complete"),
                    t.Literal("sampled"),
                    t.Literal("aggregated"),
                    t.Literal("selected"),
                  ]),
                  terms_ref: t.Optional(t.Union([t.String(), t.Null()])),
                },
                open,
              ),
            ),
          ),
        },
        open,
      ),
    ),
    domains: t.Optional(t.Array(t.String())),
  },
  open,
);

export type ParticipantManifest = typeof ParticipantManifest.static;

export const manifestPath = "/.well-known/content-telemetry.json";

export const ManifestRegistration = t.Object({
  url: t.String({
    minLength: 1,
    maxLength: 2048,
    description: `https URL of the organisation's manifest, ending in ${manifestPath} (root or path-prefixed, 8.1)`,
  }),
});

export type ManifestStatus = "valid" | "invalid" | "unreachable";

export const ManifestRecord = t.Object({
  organization_id: t.String({ format: "uuid" }),
  url: t.String(),
  status: t.Union([t.Literal("valid"), t.Literal("invalid"), t.Literal("unreachable")], {
    description:
      "valid: fetched and checked; invalid: not JSON, or breaks the schema or a rule of 8.6/8.7; unreachable: network error, timeout, non-200, redirect or too large (8.7: the participant is unverified, its telemetry is still accepted)",
  }),
  problem: t.Nullable(t.String({ description: "what was wrong at the last fetch" })),
  key_ids: t.Array(t.String(), { description: "ids of the keys of the last valid manifest" }),
  domains: t.Array(t.String()),
  fetched_at: t.Date(),
  refresh_at: t.Date(),
});
