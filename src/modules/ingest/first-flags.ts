/**
 * Which scopes each event is its session's first event in (DESIGN "Counting",
 * sql/030):
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
 * organisation, then event id, so exactly one event of a session holds each
 * scope's flag. Arriving events can only take flags away from stored ones, never
 * give them: so a write needs, of its sessions' stored events, only the holders
 * of the flags its events could take (event-store.ts reads just those).
 */

export interface CountedEvent {
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

export interface HeldEvent extends CountedEvent {
  flags: Flags;
}

export const noFlags: Flags = { firstIn: 0, firstDomain: 0, firstDomainRole: 0, firstDomainReporter: 0 };

/** The first-in bits of the URL scopes: the ones a write can take only from events on its own URLs. */
export const urlScopeBits = 1 | 2 | 4;

/** The domains of a host for owner scopes: the host and each parent of at least two labels, with their label counts. */
export function domainSuffixes(host: string | null): { labels: number; domain: string }[] {
  if (!host) return [];
  const labels = host.split(".");
  return labels.slice(0, -1).map((_, i) => ({ labels: labels.length - i, domain: labels.slice(i).join(".") }));
}

const domainFlagNames = ["firstDomain", "firstDomainRole", "firstDomainReporter"] as const;

type Scope = { key: string; bit: number } | { key: string; flag: (typeof domainFlagNames)[number]; labels: number };

/** Every scope the event belongs to, keyed within its session. */
function scopesOf(event: CountedEvent): Scope[] {
  const session = event.sessionId;
  const reporter = `${event.orgId}|${event.agentId ?? ""}`;
  const scopes: Scope[] = [
    { key: `${session}|r|${event.orgId}`, bit: 8 },
    { key: `${session}|a|${reporter}`, bit: 16 },
    { key: `${session}|rr|${event.orgId}|${event.sourceRole}`, bit: 32 },
    { key: `${session}|ar|${reporter}|${event.sourceRole}`, bit: 64 },
  ];
  if (event.contentUrl !== null) {
    scopes.push(
      { key: `${session}|u|${event.contentUrl}`, bit: 1 },
      { key: `${session}|ru|${event.orgId}|${event.contentUrl}`, bit: 2 },
      { key: `${session}|au|${reporter}|${event.contentUrl}`, bit: 4 },
    );
  }
  for (const { labels, domain } of domainSuffixes(event.contentHost)) {
    scopes.push(
      { key: `${session}|d|${domain}`, flag: "firstDomain", labels },
      { key: `${session}|dr|${domain}|${event.sourceRole}`, flag: "firstDomainRole", labels },
      { key: `${session}|da|${domain}|${reporter}`, flag: "firstDomainReporter", labels },
    );
  }
  return scopes;
}

/** The scopes whose flag the event holds. */
const heldScopes = (event: HeldEvent) =>
  scopesOf(event).filter((scope) =>
    "bit" in scope
      ? (event.flags.firstIn & scope.bit) !== 0
      : event.flags[scope.flag] !== 0 && scope.labels >= event.flags[scope.flag],
  );

function earlier(a: CountedEvent, b: CountedEvent): boolean {
  if (a.timeUs !== b.timeUs) return a.timeUs < b.timeUs;
  if (a.orgId !== b.orgId) return a.orgId < b.orgId;
  return a.eventId < b.eventId;
}

/**
 * The flags after `arriving` events join their sessions, given the stored events
 * that hold the flags of every scope the arriving events are in (`held`, with their
 * flags). Returns the arriving events' flags, in order, and the held events whose
 * flags change. A recount passes every stored event of its sessions as arriving.
 */
export function takeFirsts(
  held: readonly HeldEvent[],
  arriving: readonly CountedEvent[],
): { arrivingFlags: Flags[]; changed: { event: HeldEvent; flags: Flags }[] } {
  const firsts = new Map<string, CountedEvent>();
  const heldScopesOf = held.map(heldScopes);
  held.forEach((event, i) => {
    for (const scope of heldScopesOf[i] as Scope[]) firsts.set(scope.key, event);
  });
  const arrivingScopesOf = arriving.map(scopesOf);
  arriving.forEach((event, i) => {
    for (const { key } of arrivingScopesOf[i] as Scope[]) {
      const known = firsts.get(key);
      if (!known || earlier(event, known)) firsts.set(key, event);
    }
  });

  const flagsOf = (event: CountedEvent, scopes: Scope[]): Flags => {
    const flags = { ...noFlags };
    for (const scope of scopes) {
      if (firsts.get(scope.key) !== event) continue;
      if ("bit" in scope) flags.firstIn |= scope.bit;
      // The coarsest domain: the smallest label count whose domain the event is first in.
      else if (flags[scope.flag] === 0 || scope.labels < flags[scope.flag]) flags[scope.flag] = scope.labels;
    }
    return flags;
  };
  const changed = held.flatMap((event, i) => {
    const flags = flagsOf(event, heldScopesOf[i] as Scope[]);
    return sameFlags(flags, event.flags) ? [] : [{ event, flags }];
  });
  return { arrivingFlags: arriving.map((event, i) => flagsOf(event, arrivingScopesOf[i] as Scope[])), changed };
}

export const sameFlags = (a: Flags, b: Flags) =>
  a.firstIn === b.firstIn &&
  a.firstDomain === b.firstDomain &&
  a.firstDomainRole === b.firstDomainRole &&
  a.firstDomainReporter === b.firstDomainReporter;
