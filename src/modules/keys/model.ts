import { t } from "elysia";
import { allScopes, type Scope } from "../../core/scopes.ts";
import { Name } from "../../http/text.ts";

const ScopeName = t.String({ description: `one of ${allScopes.join(", ")}` });

export const CreateKey = t.Object({
  name: t.Optional(t.Nullable(Name({ maxLength: 200 }))),
  scopes: t.Optional(
    t.Nullable(
      t.Array(ScopeName, {
        maxItems: allScopes.length * 2,
        description:
          "omitted or null: telemetry:read, telemetry:write, identity:read; [] grants nothing. A key may only mint keys within its own scopes.",
      }),
    ),
  ),
});

export const KeyRecord = t.Object({
  id: t.String({ format: "uuid" }),
  org_id: t.String({ format: "uuid" }),
  prefix: t.String({ description: "non-secret start of the key, to recognise it" }),
  name: t.Nullable(t.String()),
  scopes: t.Array(t.Unsafe<Scope>(t.String()), { description: "effective permissions" }),
  created_at: t.Date(),
  last_used_at: t.Nullable(t.Date()),
  revoked_at: t.Nullable(t.Date()),
});

export const CreatedKey = t.Object({
  ...KeyRecord.properties,
  key: t.String({ description: "the raw key: shown only in this response" }),
});
