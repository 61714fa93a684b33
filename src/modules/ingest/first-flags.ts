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
function domainSuffixes(host: string | null): { labels: number; domain: string }[] {
  if (!host) return [];
  const labels = host.split(".");
  return labels.slice(0, -1).map((_, i) => ({ labels: labels.length - i, domain: labels.slice(i).join(".") }));
}

/**
 * Numbers standing for the strings of one computation, so that a scope's key is
 * a number worked out from its parts. Keys built as strings (the session id, URL
 * and the rest joined, sixteen scopes an event) were most of the flags' cost.
 */
export class ScopeKeys {
  // A key holds a kind (4 bits) and two ids (24 bits each): 52 bits, exact in a double.
  static readonly #idLimit = 2 ** 24;
  readonly #strings = new Map<string, number>();
  readonly #pairs = new Map<number, number>();
  readonly #domains = new Map<string, { labels: number; domain: string; id: number }[]>();
  #next = 1;

  #fresh(): number {
    if (this.#next >= ScopeKeys.#idLimit) throw new RangeError("too many distinct values in one flag computation");
    return this.#next++;
  }

  /** The id of a string. */
  of(text: string): number {
    let id = this.#strings.get(text);
    if (id === undefined) {
      id = this.#fresh();
      this.#strings.set(text, id);
    }
    return id;
  }

  /** The id of the ordered pair of ids (a, b), never that of a string. */
  pair(a: number, b: number): number {
    const both = a * ScopeKeys.#idLimit + b;
    let id = this.#pairs.get(both);
    if (id === undefined) {
      id = this.#fresh();
      this.#pairs.set(both, id);
    }
    return id;
  }

  /** The key of a scope of `kind` (below 16) over one or two ids. */
  static key(kind: number, a: number, b = 0): number {
    return kind + 16 * a + 16 * ScopeKeys.#idLimit * b;
  }

  /** domainSuffixes of the host, each with its domain's id; computed once per host. */
  domainsOf(host: string | null): readonly { labels: number; domain: string; id: number }[] {
    if (!host) return [];
    let domains = this.#domains.get(host);
    if (!domains) {
      domains = domainSuffixes(host).map((suffix) => ({ ...suffix, id: this.of(suffix.domain) }));
      this.#domains.set(host, domains);
    }
    return domains;
  }
}

const domainFlagNames = ["firstDomain", "firstDomainRole", "firstDomainReporter"] as const;

type Scope = { key: number; bit: number } | { key: number; flag: (typeof domainFlagNames)[number]; labels: number };

/** The kinds of scope (the header's list), the first part of a scope's key. */
const kind = {
  reporter: 0,
  reporterAgent: 1,
  reporterRole: 2,
  reporterAgentRole: 3,
  url: 4,
  reporterUrl: 5,
  reporterAgentUrl: 6,
  domain: 7,
  domainRole: 8,
  domainReporterAgent: 9,
} as const;

/** Every scope the event belongs to, keyed within its session. */
function scopesOf(event: CountedEvent, keys: ScopeKeys): Scope[] {
  const key = ScopeKeys.key;
  const org = keys.of(event.orgId);
  const reporterAgent = keys.pair(org, keys.of(event.agentId ?? ""));
  const role = keys.of(event.sourceRole);
  const scopes: Scope[] = [
    { key: key(kind.reporter, org), bit: 8 },
    { key: key(kind.reporterAgent, reporterAgent), bit: 16 },
    { key: key(kind.reporterRole, org, role), bit: 32 },
    { key: key(kind.reporterAgentRole, reporterAgent, role), bit: 64 },
  ];
  if (event.contentUrl !== null) {
    const url = keys.of(event.contentUrl);
    scopes.push(
      { key: key(kind.url, url), bit: 1 },
      { key: key(kind.reporterUrl, org, url), bit: 2 },
      { key: key(kind.reporterAgentUrl, reporterAgent, url), bit: 4 },
    );
  }
  for (const { labels, id: domain } of keys.domainsOf(event.contentHost)) {
    scopes.push(
      { key: key(kind.domain, domain), flag: "firstDomain", labels },
      { key: key(kind.domainRole, domain, role), flag: "firstDomainRole", labels },
      { key: key(kind.domainReporterAgent, domain, reporterAgent), flag: "firstDomainReporter", labels },
    );
  }
  return scopes;
}

/** The scopes whose flag the event holds. */
const heldScopes = (event: HeldEvent, keys: ScopeKeys) =>
  scopesOf(event, keys).filter((scope) =>
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
export function takeFirsts<Held extends HeldEvent>(
  held: readonly Held[],
  arriving: readonly CountedEvent[],
): { arrivingFlags: Flags[]; changed: { event: Held; flags: Flags }[] } {
  const keys = new ScopeKeys();
  // Per session, the first event of each scope.
  const firsts = new Map<string, Map<number, CountedEvent>>();
  const firstsIn = (session: string) => {
    let scopes = firsts.get(session);
    if (!scopes) {
      scopes = new Map();
      firsts.set(session, scopes);
    }
    return scopes;
  };
  const heldScopesOf = held.map((event) => heldScopes(event, keys));
  held.forEach((event, i) => {
    const scopes = firstsIn(event.sessionId);
    for (const scope of heldScopesOf[i] as Scope[]) scopes.set(scope.key, event);
  });
  const arrivingScopesOf = arriving.map((event) => scopesOf(event, keys));
  arriving.forEach((event, i) => {
    const scopes = firstsIn(event.sessionId);
    for (const { key } of arrivingScopesOf[i] as Scope[]) {
      const known = scopes.get(key);
      if (!known || earlier(event, known)) scopes.set(key, event);
    }
  });

  const flagsOf = (event: CountedEvent, scopes: Scope[]): Flags => {
    const flags = { ...noFlags };
    const sessionFirsts = firsts.get(event.sessionId);
    for (const scope of scopes) {
      if (sessionFirsts?.get(scope.key) !== event) continue;
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
