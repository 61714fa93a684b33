import { type Static, t } from "elysia";

export const ResolveQuery = t.Object({
  domain: t.Optional(t.String({ minLength: 1, maxLength: 253, description: "a host name" })),
  url: t.Optional(t.String({ minLength: 1, maxLength: 8192, description: "a URL; its host is looked up" })),
});

export const Resolution = t.Object({
  domain: t.String(),
  handled: t.Boolean(),
  organization: t.Nullable(t.Object({ id: t.String({ format: "uuid" }), name: t.String() })),
});
export type Resolution = Static<typeof Resolution>;
