import { storableText } from "../../core/storable-json.ts";
import type { Queryable, Sql } from "../../db/sql.ts";
import type { Logger } from "../../log.ts";

const hourMs = 3_600_000;
/** Field errors kept per refusal, refusals kept per organisation per flush, and in all. */
const maxErrors = 20;
const maxRefusalsPerOrg = 10;
const maxRefusals = 200;
const purgeEveryMs = hourMs;

export interface Refusal {
  orgId: string;
  path: string;
  status: number;
  code: string;
  detail: string | undefined;
  errors: unknown[];
  /** Events the refused request carried (0 when its body could not be read). */
  events: number;
  requestId: string | undefined;
}

/** A refusal as the process keeps it until its flush: with when it was answered. */
type KeptRefusal = Refusal & { at: Date };

interface HourCounts {
  orgId: string;
  hourMs: number;
  accepted: number;
  refusedRequests: number;
  refusedEvents: number;
}

/**
 * Ingest health as it happens: counts per organisation and hour and the latest
 * refusals, added up in memory and written every `flushMs` by one statement per
 * table (sql/064). A crash loses at most the last few seconds of these counts,
 * never an event.
 */
export class IngestHealth {
  #hours = new Map<string, HourCounts>();
  #refusals: KeptRefusal[] = [];
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Never, at first: a process restarted more often than hourly still purges. */
  #lastPurge = 0;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    readonly flushMs = 5_000,
  ) {}

  accepted(orgId: string, events: number, at = Date.now()): void {
    this.#countsOf(orgId, at).accepted += events;
  }

  refused(refusal: Refusal, at = Date.now()): void {
    const counts = this.#countsOf(refusal.orgId, at);
    counts.refusedRequests += 1;
    counts.refusedEvents += refusal.events;
    this.#keep({
      ...refusal,
      path: storableText(refusal.path),
      detail: refusal.detail === undefined ? undefined : storableText(refusal.detail),
      errors: JSON.parse(
        JSON.stringify(refusal.errors.slice(0, maxErrors), (_key, value) =>
          typeof value === "string" ? storableText(value) : value,
        ),
      ),
      at: new Date(at),
    });
  }

  /** Keeps a refusal, newest last; under a flood, the newest few per organisation and in all. */
  #keep(refusal: KeptRefusal): void {
    const ofOrg = this.#refusals.filter((kept) => kept.orgId === refusal.orgId);
    const dropped =
      ofOrg.length >= maxRefusalsPerOrg
        ? ofOrg[0]
        : this.#refusals.length >= maxRefusals
          ? this.#oldestOfBusiest()
          : undefined;
    if (dropped) this.#refusals.splice(this.#refusals.indexOf(dropped), 1);
    this.#refusals.push(refusal);
  }

  /**
   * Past the cap for all, the organisation holding the most refusals gives up its
   * oldest: one that sends many cannot push another's few out of its own view.
   */
  #oldestOfBusiest(): KeptRefusal | undefined {
    const held = new Map<string, number>();
    for (const kept of this.#refusals) held.set(kept.orgId, (held.get(kept.orgId) ?? 0) + 1);
    const most = Math.max(...held.values());
    // Kept oldest first: the first of the busiest is its oldest.
    return this.#refusals.find((kept) => held.get(kept.orgId) === most);
  }

  #countsOf(orgId: string, at: number): HourCounts {
    const hour = Math.floor(at / hourMs) * hourMs;
    const key = `${orgId}|${hour}`;
    let counts = this.#hours.get(key);
    if (!counts) {
      counts = { orgId, hourMs: hour, accepted: 0, refusedRequests: 0, refusedEvents: 0 };
      this.#hours.set(key, counts);
    }
    return counts;
  }

  /**
   * Writes what was added up since the last flush (and, once an hour, purges what
   * is past keeping). Each step stands alone, so that one failing repeats none
   * that succeeded: counts written are never written again.
   */
  async flush(): Promise<void> {
    const hours = [...this.#hours.values()];
    const refusals = this.#refusals;
    this.#hours = new Map();
    this.#refusals = [];
    try {
      await writeHours(this.sql, hours);
    } catch (error) {
      // The database may be away for a moment: counts and refusals are kept for the
      // next flush, older than what arrived meanwhile (within the same limits).
      for (const counts of hours) {
        const kept = this.#countsOf(counts.orgId, counts.hourMs);
        kept.accepted += counts.accepted;
        kept.refusedRequests += counts.refusedRequests;
        kept.refusedEvents += counts.refusedEvents;
      }
      const arrived = this.#refusals;
      this.#refusals = [];
      for (const refusal of [...refusals, ...arrived]) this.#keep(refusal);
      this.log.warn("ingest health could not be written; it is kept for the next try", { error: String(error) });
      return;
    }
    try {
      await writeRefusals(this.sql, refusals);
    } catch (error) {
      // Dropped, so that one the database refuses cannot block every later flush.
      this.log.warn("ingest refusals could not be written; they are dropped", {
        error: String(error),
        refusals_dropped: refusals.length,
      });
    }
    if (Date.now() - this.#lastPurge > purgeEveryMs) {
      this.#lastPurge = Date.now();
      await purgeHealth(this.sql).catch((error: unknown) =>
        this.log.warn("ingest health could not be purged; tried again in an hour", { error: String(error) }),
      );
    }
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), this.flushMs);
    this.#timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }
}

async function writeHours(sql: Queryable, hours: HourCounts[]) {
  if (hours.length > 0) {
    await sql`
      INSERT INTO ingest_hours AS h (org_id, hour, accepted_events, refused_requests, refused_events)
      SELECT c.* FROM unnest(
        ${hours.map((h) => h.orgId)}::uuid[],
        ${hours.map((h) => new Date(h.hourMs).toISOString())}::timestamptz[],
        ${hours.map((h) => h.accepted)}::bigint[],
        ${hours.map((h) => h.refusedRequests)}::bigint[],
        ${hours.map((h) => h.refusedEvents)}::bigint[]
      ) AS c (org_id, hour, accepted_events, refused_requests, refused_events)
      -- An organisation deleted meanwhile has nothing left to show.
      WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = c.org_id)
      ON CONFLICT (org_id, hour) DO UPDATE SET
        accepted_events = h.accepted_events + EXCLUDED.accepted_events,
        refused_requests = h.refused_requests + EXCLUDED.refused_requests,
        refused_events = h.refused_events + EXCLUDED.refused_events`;
  }
}

async function writeRefusals(sql: Queryable, refusals: KeptRefusal[]) {
  if (refusals.length > 0) {
    await sql`
      INSERT INTO ingest_refusals (org_id, received_at, path, status, code, detail, errors, events, request_id)
      SELECT r.org_id, r.received_at, r.path, r.status, r.code, r.detail, r.errors::jsonb, r.events, r.request_id
      FROM unnest(
        ${refusals.map((r) => r.orgId)}::uuid[],
        ${refusals.map((r) => r.at.toISOString())}::timestamptz[],
        ${refusals.map((r) => r.path)}::text[],
        ${refusals.map((r) => r.status)}::smallint[],
        ${refusals.map((r) => r.code)}::text[],
        ${refusals.map((r) => r.detail ?? null)}::text[],
        ${refusals.map((r) => JSON.stringify(r.errors))}::text[],
        ${refusals.map((r) => r.events)}::integer[],
        ${refusals.map((r) => r.requestId ?? null)}::text[]
      ) WITH ORDINALITY AS r (org_id, received_at, path, status, code, detail, errors, events, request_id, n)
      -- An organisation deleted meanwhile has nothing left to show. In arrival order,
      -- so that ids order refusals of the same millisecond.
      WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = r.org_id)
      ORDER BY r.n`;
  }
}

/** How long refusals are listed and kept: the purge runs hourly, so reads apply the bound themselves. */
const refusalsKept = "7 days";

async function purgeHealth(sql: Queryable) {
  await sql`DELETE FROM ingest_refusals WHERE received_at < now() - ${refusalsKept}::interval`;
  await sql`DELETE FROM ingest_hours WHERE hour < now() - interval '90 days'`;
}

/** Events one document carries: an event batch's or a session document's `events`, or one for a single event. */
function eventsOf(document: unknown): number {
  if (typeof document !== "object" || document === null || Array.isArray(document)) return 0;
  const events = (document as { events?: unknown }).events;
  if (Array.isArray(events)) return events.length;
  // A single-event document carries it under `event`; a bare event is one itself.
  return "event" in document || "type" in document ? 1 : 0;
}

/**
 * Events a refused ingest body carried: its document's, or each document's of a
 * bulk array (one level only: a refused body may be anything); none when the body
 * could not be read.
 */
export function eventsCarried(body: unknown): number {
  return Array.isArray(body) ? body.reduce((sum: number, document) => sum + eventsOf(document), 0) : eventsOf(body);
}

export interface IngestHealthView {
  hours: { hour: Date; accepted_events: number; refused_requests: number; refused_events: number }[];
  refusals: {
    received_at: Date;
    path: string;
    status: number;
    code: string;
    detail: string | null;
    errors: unknown[];
    events: number;
    request_id: string | null;
  }[];
}

/** The organisation's counts per hour since `since`, oldest first, and its latest refusals, newest first. */
export async function ingestHealthOf(
  sql: Queryable,
  orgId: string,
  since: Date,
  limit: number,
): Promise<IngestHealthView> {
  const hours = await sql<IngestHealthView["hours"]>`
    SELECT hour, accepted_events::float8 AS accepted_events, refused_requests::float8 AS refused_requests,
           refused_events::float8 AS refused_events
    FROM ingest_hours WHERE org_id = ${orgId}::uuid AND hour >= ${since} ORDER BY hour`;
  const refusals = await sql<IngestHealthView["refusals"]>`
    SELECT received_at, path, status, code, detail, errors, events, request_id
    FROM ingest_refusals WHERE org_id = ${orgId}::uuid AND received_at >= now() - ${refusalsKept}::interval
    ORDER BY received_at DESC, id DESC LIMIT ${limit}`;
  return { hours, refusals };
}
