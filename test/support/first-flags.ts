import type { Sql } from "../../src/db/sql.ts";

export interface Flags {
  first_in: number;
  first_domain: number;
  first_domain_role: number;
  first_domain_reporter: number;
}

/** An event as stored, with its flags. */
export interface StoredFlags extends Flags {
  event_id: string;
  event_time: Date;
  org_id: string;
  session_id: string | null;
  content_url: string | null;
  content_host: string | null;
  source_role: string;
  agent_id: string | null;
}

/**
 * The flags by their definition (sql/030), computed from the raw events: within
 * each session, the earliest event (ties by organisation, then event id) of each
 * scope is first in it. Written apart from src/modules/ingest/first-flags.ts,
 * scope by scope and level by level, so that it checks it.
 */
export function referenceFlags(events: StoredFlags[]): Map<string, Flags> {
  const order = (a: StoredFlags, b: StoredFlags) =>
    a.event_time.getTime() - b.event_time.getTime() ||
    (a.org_id < b.org_id ? -1 : a.org_id > b.org_id ? 1 : 0) ||
    (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0);
  const firstOf = (key: (e: StoredFlags) => string | null) => {
    const firsts = new Map<string, StoredFlags>();
    for (const event of events) {
      const k = key(event);
      if (k === null || event.session_id === null) continue;
      const scope = `${event.session_id}|${k}`;
      const known = firsts.get(scope);
      if (!known || order(event, known) < 0) firsts.set(scope, event);
    }
    return new Set(firsts.values());
  };
  const url = (e: StoredFlags) => e.content_url;
  const bits: [number, Set<StoredFlags>][] = [
    [1, firstOf((e) => (url(e) === null ? null : `${url(e)}`))],
    [2, firstOf((e) => (url(e) === null ? null : `${e.org_id}|${url(e)}`))],
    [4, firstOf((e) => (url(e) === null ? null : `${e.org_id}|${e.agent_id}|${url(e)}`))],
    [8, firstOf((e) => e.org_id)],
    [16, firstOf((e) => `${e.org_id}|${e.agent_id}`)],
    [32, firstOf((e) => `${e.org_id}|${e.source_role}`)],
    [64, firstOf((e) => `${e.org_id}|${e.agent_id}|${e.source_role}`)],
  ];
  const suffixes = (host: string | null) => {
    const labels = host?.split(".") ?? [];
    return labels.slice(0, -1).map((_, i) => ({ labels: labels.length - i, domain: labels.slice(i).join(".") }));
  };
  const coarsest = (extra: (e: StoredFlags) => string) => {
    const result = new Map<StoredFlags, number>();
    const maxLevel = Math.max(0, ...events.map((e) => suffixes(e.content_host).length + 1));
    for (let labels = 2; labels <= maxLevel; labels++) {
      const atLevel = firstOf((e) => {
        const suffix = suffixes(e.content_host).find((s) => s.labels === labels);
        return suffix ? `${suffix.domain}|${extra(e)}` : null;
      });
      for (const event of atLevel) if (!result.has(event)) result.set(event, labels);
    }
    return result;
  };
  const domain = coarsest(() => "");
  const domainRole = coarsest((e) => e.source_role);
  const domainReporter = coarsest((e) => `${e.org_id}|${e.agent_id}`);
  return new Map(
    events.map((e) => [
      `${e.org_id}|${e.event_id}`,
      {
        first_in: bits.reduce((sum, [bit, set]) => sum | (set.has(e) ? bit : 0), 0),
        first_domain: domain.get(e) ?? 0,
        first_domain_role: domainRole.get(e) ?? 0,
        first_domain_reporter: domainReporter.get(e) ?? 0,
      },
    ]),
  );
}

/** The events of these organisations with their flags. */
export function storedFlags(sql: Sql, orgIds: string[]): Promise<StoredFlags[]> {
  return sql<StoredFlags[]>`
    SELECT event_id, event_time, org_id, session_id, content_url, content_host, source_role, agent_id,
           first_in, first_domain, first_domain_role, first_domain_reporter
    FROM events WHERE org_id = ANY (${orgIds}::uuid[])`;
}

/** The stored events whose flags differ from their definition, each with the flags it should have. */
export function flagMismatches(stored: StoredFlags[]) {
  const reference = referenceFlags(stored);
  return stored
    .map((event) => ({ ...event, want: reference.get(`${event.org_id}|${event.event_id}`) }))
    .filter(
      ({ want, ...event }) =>
        want?.first_in !== event.first_in ||
        want.first_domain !== event.first_domain ||
        want.first_domain_role !== event.first_domain_role ||
        want.first_domain_reporter !== event.first_domain_reporter,
    );
}
