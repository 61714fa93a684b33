export const allScopes = [
  "telemetry:read",
  "telemetry:write",
  "identity:read",
  "identity:write",
  "partner:provision",
] as const;
export type Scope = (typeof allScopes)[number];

/** Rule 1: scopes omitted or null grant these, and never identity:write or partner:provision (rule 3). */
export const defaultScopes: readonly Scope[] = ["telemetry:read", "telemetry:write", "identity:read"];

export function isScope(value: string): value is Scope {
  return (allScopes as readonly string[]).includes(value);
}

export class UnknownScopeError extends Error {
  override name = "UnknownScopeError";
  constructor(readonly scopes: string[]) {
    super(`unknown scope${scopes.length > 1 ? "s" : ""}: ${scopes.join(", ")} (known: ${allScopes.join(", ")})`);
  }
}

/**
 * The effective scopes of a new key (rules 1–4): omitted/null → the defaults;
 * an explicit empty list → nothing; otherwise exactly the listed scopes, deduplicated.
 */
export function effectiveScopes(requested: readonly string[] | null | undefined): Scope[] {
  if (requested === null || requested === undefined) return [...defaultScopes];
  const unknown = requested.filter((scope) => !isScope(scope));
  if (unknown.length > 0) throw new UnknownScopeError(unknown);
  return allScopes.filter((scope) => requested.includes(scope));
}
