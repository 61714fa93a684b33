import type { Queryable, Sql } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import { afterAttempt, idleAfterFailureMs } from "./schedule.ts";
import type { AttemptOutcome } from "./sender.ts";

/**
 * The delivery queue in SQL: outbox events become deliveries, due deliveries are
 * leased to one sweeper at a time, and attempts are recorded in batches. Every
 * time comes from the caller's clock (`now`), so tests can move it.
 */

/**
 * Turns up to `limit` undispatched outbox events into one delivery per subscribed
 * endpoint of the event's organisation (endpoints that existed when the event was
 * recorded) and marks them dispatched, in one statement. An endpoint disabled for
 * failing gets its deliveries dropped, unattempted, so that once enabled its
 * owner sees what it missed and can redeliver it; a deleted one gets none. Events
 * are locked with SKIP LOCKED, so two sweepers split the outbox between them.
 * `deliveries` counts those to send, `dropped` those kept as dropped.
 */
export async function dispatchOutbox(
  sql: Queryable,
  now: Date,
  limit = 1000,
): Promise<{ events: number; deliveries: number; dropped: number }> {
  const [row] = await sql<{ events: number; deliveries: number; dropped: number }[]>`
    WITH batch AS (
      SELECT id, org_id, event_type, data, created_at FROM event_outbox
      WHERE dispatched_at IS NULL
      ORDER BY created_at, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), marked AS (
      UPDATE event_outbox o SET dispatched_at = ${now} FROM batch WHERE o.id = batch.id RETURNING o.id
    ), inserted AS (
      INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, event_created_at, data, status, next_attempt_at)
      SELECT e.id, b.id, b.event_type, b.created_at, b.data,
             CASE WHEN e.status = 'active' THEN 'pending' ELSE 'dropped' END,
             CASE WHEN e.status = 'active' THEN ${now}::timestamptz END
      FROM batch b
      JOIN webhook_endpoints e
        ON e.org_id = b.org_id AND (e.status = 'active' OR e.disabled_reason = 'failing')
       AND b.event_type = ANY (e.event_types) AND e.created_at <= b.created_at
      ON CONFLICT (endpoint_id, event_id) DO NOTHING
      RETURNING status
    )
    SELECT (SELECT count(*) FROM marked)::int AS events,
           (SELECT count(*) FROM inserted WHERE status = 'pending')::int AS deliveries,
           (SELECT count(*) FROM inserted WHERE status = 'dropped')::int AS dropped`;
  return row ?? { events: 0, deliveries: 0, dropped: 0 };
}

/** A leased delivery with what it takes to send it. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  event_created_at: Date;
  data: Record<string, unknown>;
  attempt_count: number;
  lease_id: string;
  url: string;
  secret_ciphertext: Uint8Array;
  /** Set while a rotated-out secret still signs (its overlap has not ended). */
  previous_secret_ciphertext: Uint8Array | null;
}

export interface ClaimOptions {
  now: Date;
  limit: number;
  /** Deliveries one endpoint may have in flight at once (one while it is failing). */
  perEndpoint: number;
  leaseId: string;
  leaseMs: number;
  /** Only endpoints whose secrets this key opens. */
  keyId: string;
}

/**
 * Leases up to `limit` due deliveries. Each active endpoint that is not paused
 * offers its oldest due deliveries up to its free slots (`perEndpoint` less those
 * in flight anywhere; 1 while it is failing); the slots are then taken round by
 * round, so every endpoint gets its first before any gets a second, and failing
 * endpoints come last in each round: a slow or dead endpoint cannot take the
 * sweep from the others. `FOR UPDATE SKIP LOCKED` and the lease make two
 * sweepers (in one process or many) take disjoint deliveries; a lease that runs
 * out (its sweeper died between sending and recording) makes the delivery due
 * again, which is why delivery is at least once.
 */
export async function claimDue(sql: Queryable, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  const { now } = options;
  const leasedUntil = new Date(now.getTime() + options.leaseMs);
  return sql<ClaimedDelivery[]>`
    WITH candidates AS (
      SELECT c.id, c.next_attempt_at, e.failing_since IS NOT NULL AS failing,
             busy.n + row_number() OVER (PARTITION BY e.id ORDER BY c.next_attempt_at, c.id) AS slot
      FROM webhook_endpoints e
      CROSS JOIN LATERAL (
        SELECT count(*)::int AS n FROM webhook_deliveries x
        WHERE x.endpoint_id = e.id AND x.leased_until IS NOT NULL AND x.leased_until > ${now}
      ) busy
      CROSS JOIN LATERAL (
        SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= ${now}
          AND (d.leased_until IS NULL OR d.leased_until <= ${now})
        ORDER BY d.next_attempt_at, d.id
        LIMIT greatest(CASE WHEN e.failing_since IS NULL THEN ${options.perEndpoint}::int ELSE 1 END - busy.n, 0)
      ) c
      WHERE e.status = 'active' AND e.secret_key_id = ${options.keyId}
        AND (e.paused_until IS NULL OR e.paused_until <= ${now})
    ), ordered AS (
      -- The first few times the limit: enough to pass over rows other sweepers hold.
      SELECT coalesce(array_agg(id ORDER BY slot, failing, next_attempt_at, id), '{}') AS ids
      FROM (SELECT * FROM candidates ORDER BY slot, failing, next_attempt_at, id LIMIT ${options.limit * 4}) top
    ), locked AS (
      -- The limit applies after SKIP LOCKED, so rows another sweeper is taking are passed over, not counted.
      SELECT d.id FROM webhook_deliveries d
      WHERE d.id = ANY ((SELECT ids FROM ordered)::uuid[])
        AND d.status = 'pending' AND d.next_attempt_at <= ${now}
        AND (d.leased_until IS NULL OR d.leased_until <= ${now})
      ORDER BY array_position((SELECT ids FROM ordered), d.id)
      LIMIT ${options.limit}
      FOR UPDATE OF d SKIP LOCKED
    )
    UPDATE webhook_deliveries d SET leased_until = ${leasedUntil}, lease_id = ${options.leaseId}::uuid
    FROM locked, webhook_endpoints e
    WHERE d.id = locked.id AND e.id = d.endpoint_id
    RETURNING d.id, d.endpoint_id, d.event_id, d.event_type, d.event_created_at, d.data, d.attempt_count,
              d.lease_id, e.url, e.secret_ciphertext,
              CASE WHEN e.previous_secret_expires_at > ${now} THEN e.previous_secret_ciphertext END
                AS previous_secret_ciphertext`;
}

/** One finished attempt, to be recorded. */
export interface AttemptRecord {
  deliveryId: string;
  endpointId: string;
  leaseId: string;
  /** Attempts of the cycle before this one. */
  attemptsBefore: number;
  attemptedAt: Date;
  outcome: AttemptOutcome;
}

/** An endpoint the sweep disabled because its attempts have failed for too long. */
export interface DisabledEndpoint {
  id: string;
  org_id: string;
  url: string;
  failing_since: Date;
  dropped: number;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/**
 * Records a batch of attempts, in one statement: the attempt log, each
 * delivery's next state (delivered, retry at the schedule's time, or dead after
 * the 8th; only while this sweeper still holds its lease), and each endpoint's
 * health (last success, failing since, paused after no answer). Endpoints that
 * have been failing since before `disableBefore` are then disabled, their pending
 * deliveries dropped and the change audited (a second transaction, rarely needed).
 */
export async function recordAttempts(
  sql: Sql,
  records: readonly AttemptRecord[],
  options: { now: Date; pauseMs: number; disableBefore: Date },
): Promise<DisabledEndpoint[]> {
  if (records.length === 0) return [];
  const next = records.map((r) => afterAttempt(r.attemptsBefore, r.outcome.succeeded, r.attemptedAt));
  const health = endpointHealth(records, options.pauseMs);
  const endpoints = await sql<{ id: string; overdue: boolean }[]>`
    WITH r AS (
      SELECT * FROM unnest(
        ${records.map((r) => r.deliveryId)}::uuid[],
        ${records.map((r) => r.leaseId)}::uuid[],
        ${records.map((r) => r.attemptedAt.toISOString())}::timestamptz[],
        -- postgres.js cannot send a boolean array; text casts exactly.
        ${records.map((r) => (r.outcome.succeeded ? "t" : "f"))}::text[]::boolean[],
        ${records.map((r) => r.outcome.statusCode)}::int[],
        ${records.map((r) => r.outcome.latencyMs)}::int[],
        ${records.map((r) => r.outcome.error?.slice(0, 300) ?? null)}::text[],
        ${records.map((r) => r.outcome.responseSample)}::text[],
        ${next.map((n) => n.status)}::text[],
        ${next.map((n) => n.attemptCount)}::int[],
        ${next.map((n) => iso(n.nextAttemptAt))}::timestamptz[],
        ${next.map((n) => iso(n.deliveredAt))}::timestamptz[]
      ) AS r (id, lease_id, attempted_at, succeeded, status_code, latency_ms, error, response_sample,
              status, attempt_count, next_attempt_at, delivered_at)
    ), logged AS (
      INSERT INTO webhook_attempts
        (delivery_id, attempted_at, succeeded, status_code, latency_ms, error, response_sample)
      SELECT r.id, r.attempted_at, r.succeeded, r.status_code, r.latency_ms, r.error, r.response_sample FROM r
      -- A delivery deleted meanwhile (its organisation was) has no log to add to.
      WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = r.id)
    ), moved AS (
      -- A delivery dropped while in flight (its endpoint deleted or disabled) keeps its
      -- lease: received, it was delivered; else it stays dropped, its attempt counted.
      UPDATE webhook_deliveries d SET
        status = CASE WHEN d.status = 'dropped' AND NOT r.succeeded THEN 'dropped' ELSE r.status END,
        next_attempt_at = CASE WHEN d.status = 'dropped' THEN NULL ELSE r.next_attempt_at END,
        attempt_count = r.attempt_count, delivered_at = r.delivered_at, last_attempt_at = r.attempted_at,
        last_status_code = r.status_code, last_error = r.error, leased_until = NULL, lease_id = NULL
      FROM r
      WHERE d.id = r.id AND d.lease_id = r.lease_id AND d.status IN ('pending', 'dropped')
    )
    UPDATE webhook_endpoints e SET
      last_success_at = coalesce(h.last_success, e.last_success_at),
      last_failure_at = coalesce(h.last_failure, e.last_failure_at),
      -- An endpoint failing since before sql/081, its attempts purged since, has no
      -- last failure; it failed last no earlier than failing_since.
      failing_since = CASE WHEN h.last_success IS NOT NULL THEN h.first_failure
                           WHEN coalesce(e.last_failure_at, e.failing_since) < h.first_failure - ${idleAfterFailureMs}::int * interval '1 millisecond'
                             THEN h.first_failure
                           ELSE coalesce(e.failing_since, h.first_failure) END,
      paused_until = h.paused_until
    FROM unnest(
      ${health.map((h) => h.endpointId)}::uuid[],
      ${health.map((h) => iso(h.lastSuccess))}::timestamptz[],
      ${health.map((h) => iso(h.firstFailure))}::timestamptz[],
      ${health.map((h) => iso(h.lastFailure))}::timestamptz[],
      ${health.map((h) => iso(h.pausedUntil))}::timestamptz[]
    ) AS h (id, last_success, first_failure, last_failure, paused_until)
    WHERE e.id = h.id
    RETURNING e.id, e.status = 'active' AND e.failing_since <= ${options.disableBefore} AS overdue`;
  const overdue = endpoints.filter((row) => row.overdue).map((row) => row.id);
  return overdue.length > 0 ? disableFailing(sql, overdue, options) : [];
}

/** Disables endpoints that have failed for too long, drops their pending deliveries, and audits it. */
async function disableFailing(
  sql: Sql,
  endpointIds: string[],
  options: { now: Date; disableBefore: Date },
): Promise<DisabledEndpoint[]> {
  return sql.begin(async (tx) => {
    const disabled = await tx<DisabledEndpoint[]>`
      WITH disabled AS (
        UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'failing', disabled_at = ${options.now},
          paused_until = NULL
        WHERE id = ANY (${endpointIds}::uuid[]) AND status = 'active' AND failing_since <= ${options.disableBefore}
        RETURNING id, org_id, url, failing_since
      ), dropped AS (
        UPDATE webhook_deliveries d SET status = 'dropped', next_attempt_at = NULL
        FROM disabled WHERE d.endpoint_id = disabled.id AND d.status = 'pending'
        RETURNING d.endpoint_id
      )
      SELECT disabled.*, (SELECT count(*) FROM dropped WHERE dropped.endpoint_id = disabled.id)::int AS dropped
      FROM disabled`;
    for (const endpoint of disabled) {
      await recordAudit(tx, {
        actor: { type: "system", id: null, label: "webhook sweep" },
        orgId: endpoint.org_id,
        action: "webhook.disabled",
        targetType: "webhook",
        targetId: endpoint.id,
        details: { reason: "failing", failing_since: endpoint.failing_since, dropped_deliveries: endpoint.dropped },
      });
    }
    return disabled;
  });
}

interface EndpointHealth {
  endpointId: string;
  /** The latest successful attempt of the batch. */
  lastSuccess: Date | null;
  /** The first failed attempt after that (or of the batch, when none succeeded). */
  firstFailure: Date | null;
  /** The latest failed attempt of the batch. */
  lastFailure: Date | null;
  /** Set when the endpoint's latest attempt got no answer. */
  pausedUntil: Date | null;
}

function endpointHealth(records: readonly AttemptRecord[], pauseMs: number): EndpointHealth[] {
  const byEndpoint = new Map<string, AttemptRecord[]>();
  for (const record of records) {
    const list = byEndpoint.get(record.endpointId) ?? [];
    list.push(record);
    byEndpoint.set(record.endpointId, list);
  }
  return [...byEndpoint].map(([endpointId, list]) => {
    const ordered = [...list].sort((a, b) => a.attemptedAt.getTime() - b.attemptedAt.getTime());
    const lastSuccessIndex = ordered.findLastIndex((r) => r.outcome.succeeded);
    const lastSuccess = lastSuccessIndex >= 0 ? (ordered[lastSuccessIndex] as AttemptRecord).attemptedAt : null;
    const firstFailure = ordered.slice(lastSuccessIndex + 1).find((r) => !r.outcome.succeeded)?.attemptedAt ?? null;
    const lastFailure = ordered.findLast((r) => !r.outcome.succeeded)?.attemptedAt ?? null;
    const latest = ordered[ordered.length - 1] as AttemptRecord;
    const pausedUntil = latest.outcome.unreachable ? new Date(latest.attemptedAt.getTime() + pauseMs) : null;
    return { endpointId, lastSuccess, firstFailure, lastFailure, pausedUntil };
  });
}

/** Rows one purge statement deletes at most: a first purge of a large history is many short transactions. */
const purgeBatch = 10_000;

/**
 * Deletes finished deliveries (and their attempts) whose last attempt, or
 * creation when none was made, is older than `before`, and outbox events
 * dispatched before it, in batches. An event never dispatched by then goes too:
 * no instance has had the key to send it (WEBHOOK_SECRET_KEY unset), and one
 * set later should not send a backlog older than the retention.
 */
export async function purgeWebhookHistory(
  sql: Queryable,
  before: Date,
): Promise<{ deliveries: number; events: number }> {
  const inBatches = async (purge: () => Promise<{ count: number }>) => {
    let total = 0;
    for (;;) {
      const { count } = await purge();
      total += count;
      if (count < purgeBatch) return total;
    }
  };
  const deliveries = await inBatches(
    () => sql`
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries
        WHERE status <> 'pending' AND coalesce(last_attempt_at, created_at) < ${before}
        LIMIT ${purgeBatch})`,
  );
  // Two statements, so that each reads its own partial index of the outbox (sql/041).
  const dispatched = await inBatches(
    () => sql`
      DELETE FROM event_outbox WHERE id IN (
        SELECT id FROM event_outbox WHERE dispatched_at < ${before} LIMIT ${purgeBatch})`,
  );
  const neverDispatched = await inBatches(
    () => sql`
      DELETE FROM event_outbox WHERE id IN (
        SELECT id FROM event_outbox WHERE dispatched_at IS NULL AND created_at < ${before} LIMIT ${purgeBatch})`,
  );
  return { deliveries, events: dispatched + neverDispatched };
}
