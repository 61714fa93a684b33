import type { MemberRole, OrgType } from "./organizations.ts";
import type { Scope } from "./scopes.ts";

/** Who is calling with an API key, and what it may do. */
export interface Principal {
  keyId: string;
  orgId: string;
  orgType: OrgType;
  scopes: ReadonlySet<Scope>;
  /** The organisation's verified domains (each also covers its subdomains). */
  verifiedDomains: readonly string[];
}

/** A signed-in person, as a request handler sees them. */
export interface SessionUser {
  sessionId: string;
  userId: string;
  email: string;
  isOperatorAdmin: boolean;
  expiresAt: Date;
}

/** Whoever calls an endpoint that accepts either credential. */
export type Caller = { kind: "session"; user: SessionUser } | { kind: "key"; principal: Principal };

/** Who made a change, as the audit trail records it. */
export interface AuditActor {
  type: "user" | "api_key" | "system";
  id: string | null;
  label: string | null;
}

export function auditActorOf(caller: Caller): AuditActor {
  return caller.kind === "session"
    ? { type: "user", id: caller.user.userId, label: caller.user.email }
    : { type: "api_key", id: caller.principal.keyId, label: null };
}

/** What a request may do on the organisation it acts on (declared as `org:` on a route). */
export interface OrgAccess {
  orgId: string;
  orgType: OrgType;
  caller: Caller;
  actor: AuditActor;
  /** The session user's role; undefined for API keys. */
  role?: MemberRole;
}
