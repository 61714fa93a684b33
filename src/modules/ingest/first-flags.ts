/**
 * Which scopes each event is its session's first event in (DESIGN "Counting",
 * sql/030). Computed here for a pool that holds ALL events of its sessions: the
 * events a write brings and the ones its sessions already have.
 *
 *   firstIn               bits, for scopes without a hierarchy:
 *                         1 URL · 2 (reporter, URL) · 4 (reporter, agent, URL)
 *                         8 reporter · 16 (reporter, agent) · 32 (reporter, role)
 *                         64 (reporter, agent, role)
 *   firstDomain …         the coarsest domain the event is its session's first in,
 *                         by its number of labels (0: none), for the scopes owner,
 *                         (owner, role) and (owner, reporter, agent). Owner scopes
 *                         are keyed by every parent domain of at least two labels of
 *                         the host; first in a domain means first in every
 *                         subdomain holding the event, so one number says it for all.
 *
 * Within a scope the first event is the earliest; ties at one time are broken by
 * organisation, then event id, so exactly one event is first.
 */

export interface PoolEvent {
  /** Epoch microseconds (PostgreSQL's precision), for ordering. */
  timeUs: number;
  eventId: string;
  orgId: string;
  sessionId: string;
  contentUrl: string | null;
  contentHost: string | null;
  sourceRole: string;
  agentId: string | null;
}

export interface Flags {
  firstIn: number;
  firstDomain: number;
  firstDomainRole: number;
  firstDomainReporter: number;
}

export const noFlags: Flags = { firstIn: 0, firstDomain: 0, firstDomainRole: 0, firstDomainReporter: 0 };

/** The pool event's identity: the dedupe key of `events` (organisation, id, time). */
export const eventKey = (event: Pick<PoolEvent, "orgId" | "eventId" | "timeUs">) =>
  `${event.orgId}|${event.eventId}|${event.timeUs}`;

/** The domains of a host for owner scopes: the host and each parent of at least two labels, with their label counts. */
export function domainSuffixes(host: string | null): { labels: number; domain: string }[] {
  if (!host) return [];
  const labels = host.split(".");
  return labels.slice(0, -1).map((_, i) => ({ labels: labels.length - i, domain: labels.slice(i).join(".") }));
}

function earlier(a: PoolEvent, b: PoolEvent): boolean {
  if (a.timeUs !== b.timeUs) return a.timeUs < b.timeUs;
  if (a.orgId !== b.orgId) return a.orgId < b.orgId;
  return a.eventId < b.eventId;
}

const bits = {
  url: 1,
  reporterUrl: 2,
  agentUrl: 4,
  reporter: 8,
  agent: 16,
  reporterRole: 32,
  agentRole: 64,
} as const;

/** The flags of every event of the pool, by eventKey (events first in nothing get noFlags). */
export function sessionFirstFlags(pool: readonly PoolEvent[]): Map<string, Flags> {
  // The first event of each scope, keyed by session and scope.
  const firsts = new Map<string, PoolEvent>();
  const consider = (scope: string, event: PoolEvent) => {
    const key = `${event.sessionId}|${scope}`;
    const known = firsts.get(key);
    if (!known || earlier(event, known)) firsts.set(key, event);
  };
  const scopesOf = (event: PoolEvent) => {
    const agent = event.agentId ?? "";
    const scopes: [string, keyof typeof bits][] = [
      [`r|${event.orgId}`, "reporter"],
      [`a|${event.orgId}|${agent}`, "agent"],
      [`rr|${event.orgId}|${event.sourceRole}`, "reporterRole"],
      [`ar|${event.orgId}|${agent}|${event.sourceRole}`, "agentRole"],
    ];
    if (event.contentUrl !== null) {
      scopes.push(
        [`u|${event.contentUrl}`, "url"],
        [`ru|${event.orgId}|${event.contentUrl}`, "reporterUrl"],
        [`au|${event.orgId}|${agent}|${event.contentUrl}`, "agentUrl"],
      );
    }
    return scopes;
  };
  const domainScopesOf = (event: PoolEvent) =>
    domainSuffixes(event.contentHost).map(({ labels, domain }) => ({
      labels,
      owner: `d|${domain}`,
      role: `dr|${domain}|${event.sourceRole}`,
      reporter: `da|${domain}|${event.orgId}|${event.agentId ?? ""}`,
    }));

  for (const event of pool) {
    for (const [scope] of scopesOf(event)) consider(scope, event);
    for (const domain of domainScopesOf(event)) {
      consider(domain.owner, event);
      consider(domain.role, event);
      consider(domain.reporter, event);
    }
  }

  const isFirst = (scope: string, event: PoolEvent) => firsts.get(`${event.sessionId}|${scope}`) === event;
  const flags = new Map<string, Flags>();
  for (const event of pool) {
    let firstIn = 0;
    for (const [scope, bit] of scopesOf(event)) if (isFirst(scope, event)) firstIn |= bits[bit];
    // The coarsest domain: the smallest label count whose domain the event is first in.
    const coarsest = (current: number, labels: number) => (current === 0 ? labels : Math.min(current, labels));
    let firstDomain = 0;
    let firstDomainRole = 0;
    let firstDomainReporter = 0;
    for (const domain of domainScopesOf(event)) {
      if (isFirst(domain.owner, event)) firstDomain = coarsest(firstDomain, domain.labels);
      if (isFirst(domain.role, event)) firstDomainRole = coarsest(firstDomainRole, domain.labels);
      if (isFirst(domain.reporter, event)) firstDomainReporter = coarsest(firstDomainReporter, domain.labels);
    }
    flags.set(eventKey(event), { firstIn, firstDomain, firstDomainRole, firstDomainReporter });
  }
  return flags;
}
