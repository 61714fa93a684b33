import { t } from "elysia";

/** One control-plane change, as GET /audit lists it (service.ts AuditEvent). */
export const AuditEventRecord = t.Object({
  id: t.String({ format: "uuid" }),
  occurred_at: t.Date(),
  org_id: t.Nullable(t.String({ format: "uuid" })),
  actor: t.Object({
    type: t.Union([t.Literal("user"), t.Literal("api_key"), t.Literal("system")]),
    id: t.Nullable(t.String({ description: "the user's or the key's id; null for the system" })),
    label: t.Nullable(
      t.String({
        description: 'a user\'s e-mail as it was then, or what the system was ("operator CLI"); null for a key',
      }),
    ),
  }),
  action: t.String({
    description: "what changed, as `<target>.<verb>`: api_key.revoked, delegation.created, …",
    examples: ["api_key.revoked"],
  }),
  target: t.Object({ type: t.String({ examples: ["api_key"] }), id: t.Nullable(t.String()) }),
  details: t.Record(t.String(), t.Unknown(), { description: "what the change was, per action" }),
});
