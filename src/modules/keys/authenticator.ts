import type { Principal } from "../../core/caller.ts";
import { type OrgType, organizationSuspended } from "../../core/organizations.ts";
import { problem } from "../../core/problem.ts";
import type { Scope } from "../../core/scopes.ts";
import { sameHash } from "../../core/secrets.ts";
import type { Listen, Sql } from "../../db/sql.ts";
import { SingleFlight } from "../../http/single-flight.ts";
import type { Logger } from "../../log.ts";
import { keyPrefixes, type ParsedKey, parseKey } from "./key-format.ts";

interface KeyRow {
  id: string;
  org_id: string;
  org_type: OrgType;
  suspended: boolean;
  secret_hash: Uint8Array;
  scopes: Scope[];
  revoked_at: Date | null;
  verified_domains: string[];
}

const sweepThreshold = 10_000;

/**
 * Resolves `X-API-Key` to a principal. Successful lookups are kept in memory for
 * `ttlSeconds`, so hot paths (ingest) cost no database round trip; that TTL is
 * the bound on how long a revocation made elsewhere takes to apply here.
 * Revocations made through this process apply at once (`forget`).
 */
export class KeyAuthenticator {
  /** Keys known good, or known to belong to a suspended organisation (refused from here, until sql/075 announces a change). */
  readonly #cache = new Map<string, { principal: Principal; suspended: boolean; expires: number }>();
  readonly #lookups = new SingleFlight<Principal>();
  /**
   * Counts invalidations. A lookup under way when one arrives may have read the
   * key before the change committed, so it is not kept, and requests after the
   * invalidation start a lookup of their own instead of joining it. One counter
   * for every key: invalidations are rare (a revocation, a domain change), and one
   * costs the lookups under way a second lookup at most.
   */
  #generation = 0;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    private readonly ttlSeconds: number,
  ) {}

  /** `beforeLookup` runs when the key must be looked up in the database (not in memory); it may throw. */
  async authenticate(raw: string | undefined | null, beforeLookup: () => void = () => {}): Promise<Principal> {
    if (!raw) throw problem("unauthorized", "missing API key: send it in the X-API-Key header");
    const parsed = parseKey(raw);
    if (!parsed) throw problem("unauthorized", "unrecognised API key");
    const cacheKey = Buffer.from(parsed.hash).toString("hex");
    const cached = this.#cache.get(cacheKey);
    if (cached && cached.expires > Date.now()) {
      if (cached.suspended) throw organizationSuspended();
      return cached.principal;
    }
    // Parallel requests with one key not yet in memory (an emitter after a restart)
    // make one lookup between them.
    const generation = this.#generation;
    return this.#lookups.run(`${generation}:${cacheKey}`, async () => {
      beforeLookup();
      return this.#lookUp(cacheKey, parsed, generation);
    });
  }

  async #lookUp(cacheKey: string, parsed: ParsedKey, generation: number): Promise<Principal> {
    const [row] = await this.sql<KeyRow[]>`
      SELECT k.id, k.org_id, o.org_type, o.suspended_at IS NOT NULL AS suspended, k.secret_hash, k.scopes, k.revoked_at,
             coalesce(array_agg(d.domain ORDER BY d.domain) FILTER (WHERE d.domain IS NOT NULL), '{}') AS verified_domains
      FROM api_keys k
      JOIN organizations o ON o.id = k.org_id
      LEFT JOIN domains d ON d.org_id = k.org_id AND d.state = 'verified'
      WHERE k.lookup_id = ${parsed.lookupId}
      GROUP BY k.id, o.org_type, o.suspended_at`;
    // The hash comparison is constant-time; the prefix must also match the org type it was minted for.
    if (!row || !sameHash(row.secret_hash, parsed.hash) || keyPrefixes[row.org_type] !== parsed.prefix) {
      this.#cache.delete(cacheKey);
      throw problem("unauthorized", "unrecognised API key");
    }
    if (row.revoked_at) throw problem("unauthorized", "this API key has been revoked");

    const principal: Principal = {
      keyId: row.id,
      orgId: row.org_id,
      orgType: row.org_type,
      scopes: new Set(row.scopes),
      verifiedDomains: row.verified_domains,
    };
    if (this.ttlSeconds > 0 && generation === this.#generation) this.#remember(cacheKey, principal, row.suspended);
    if (row.suspended) throw organizationSuspended();
    // Recorded once per cache period, off the request path.
    this.sql`UPDATE api_keys SET last_used_at = now() WHERE id = ${row.id}`.catch((error: unknown) =>
      this.log.warn("could not record key use", { key_id: row.id, error: String(error) }),
    );
    return principal;
  }

  #remember(cacheKey: string, principal: Principal, suspended: boolean): void {
    const now = Date.now();
    // Entries of keys that stopped calling would otherwise stay forever; sweep them now and then.
    if (this.#cache.size >= sweepThreshold) {
      for (const [hash, entry] of this.#cache) if (entry.expires <= now) this.#cache.delete(hash);
    }
    this.#cache.set(cacheKey, { principal, suspended, expires: now + this.ttlSeconds * 1000 });
  }

  /**
   * Drops what changes elsewhere invalidate (sql/029 announces them on commit), so a
   * revocation through another instance or the CLI applies here within moments.
   * Changes announced while the notification connection was down never arrive:
   * once it listens again, everything held is dropped and looked up afresh. The
   * TTL remains only as a safety net.
   */
  async followChanges(listen: Listen): Promise<void> {
    await listen(
      "auth_changes",
      (payload) => {
        try {
          const change = JSON.parse(payload) as { key_id?: string; org_id?: string };
          this.forget({ keyId: change.key_id, orgId: change.org_id });
        } catch {
          this.log.warn("unreadable auth change notification", { payload });
        }
      },
      () => {
        this.log.info("auth change notifications resumed after a lost connection; cached keys dropped", {
          dropped: this.#cache.size,
        });
        this.#generation++;
        this.#cache.clear();
      },
    );
  }

  /** Drops cached principals of one key (after revocation) or of one organisation (after a domain change). */
  forget(match: { keyId?: string; orgId?: string }): void {
    this.#generation++;
    for (const [hash, entry] of this.#cache) {
      if (entry.principal.keyId === match.keyId || entry.principal.orgId === match.orgId) this.#cache.delete(hash);
    }
  }
}
