import { randomUUID } from "node:crypto";
import type { SecretBox } from "../../core/secret-box.ts";
import type { Sql } from "../../db/sql.ts";
import { describeError, type Logger } from "../../log.ts";
import { type AttemptRecord, type ClaimedDelivery, claimDue, dispatchOutbox, recordAttempts } from "./queue.ts";
import { endpointPauseMs } from "./schedule.ts";
import type { AttemptOutcome, WebhookSender } from "./sender.ts";
import { deliveryHeaders, envelopeBody } from "./signing.ts";

export interface SweeperOptions {
  sql: Sql;
  log: Logger;
  secrets: SecretBox;
  sender: WebhookSender;
  /** Deliveries in flight at once in this process (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** …and to one endpoint, counted over every instance's leases (WEBHOOK_ENDPOINT_CONCURRENCY; 1 while it is failing). */
  perEndpoint: number;
  /** An endpoint failing for this long is disabled (WEBHOOK_DISABLE_AFTER_DAYS). */
  disableAfterMs: number;
  /** The clock schedules, leases, signatures' timestamps and the disable rule read; tests inject theirs. */
  clock?: () => Date;
  /** How long a claimed delivery stays this sweeper's: longer than an attempt and its recording. */
  leaseMs?: number;
  /** A sweep stops claiming after this long, so the next tick starts afresh. */
  maxSweepMs?: number;
  /** Finished attempts recorded per statement batch, at most. */
  recordBatch?: number;
  /**
   * While attempts are in flight, how often a sweep looks again for new outbox
   * events and newly due deliveries: the scheduler starts no sweep while one
   * runs, and one attempt may take the whole 10 s window.
   */
  pollMs?: number;
}

/** What one sweep did, logged as the `webhook sweep` line (src/jobs/index.ts). */
export interface SweepReport {
  events_dispatched: number;
  /** Deliveries made to be sent. */
  deliveries_created: number;
  /** Deliveries kept as dropped, never sent: their endpoint is disabled for failing. */
  deliveries_dropped: number;
  attempts: number;
  delivered: number;
  failed: number;
  endpoints_disabled: number;
}

const emptyReport = (): SweepReport => ({
  events_dispatched: 0,
  deliveries_created: 0,
  deliveries_dropped: 0,
  attempts: 0,
  delivered: 0,
  failed: 0,
  endpoints_disabled: 0,
});

const outboxBatch = 1000;
/** How long a sweep waits to gather finished attempts into one batch. */
const gatherMs = 20;

/**
 * Sends what the queue holds (queue.ts) with bounded concurrency. A sweep first
 * turns new outbox events into deliveries, then leases due deliveries as slots
 * free up, sends each (sender.ts) and records the attempts in batches, until
 * nothing is due or `maxSweepMs` has passed. One sweep runs at a time per
 * sweeper; any number of sweepers (instances) can run against one database.
 */
export class WebhookSweeper {
  readonly #options: Required<Omit<SweeperOptions, "clock">> & { clock: () => Date };
  readonly #inFlight = new Set<Promise<void>>();
  #done: AttemptRecord[] = [];
  #running: Promise<SweepReport> | undefined;
  #stopping = false;
  #checkedKeys = false;

  constructor(options: SweeperOptions) {
    this.#options = {
      ...options,
      clock: options.clock ?? (() => new Date()),
      leaseMs: options.leaseMs ?? 120_000,
      maxSweepMs: options.maxSweepMs ?? 300_000,
      recordBatch: options.recordBatch ?? 200,
      pollMs: options.pollMs ?? 1000,
    };
  }

  /** Runs a sweep, or joins the one already running. */
  sweep(): Promise<SweepReport> {
    if (this.#stopping) return Promise.resolve(emptyReport());
    this.#running ??= this.#sweep().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Stops claiming and waits for the attempts in flight to be sent and recorded. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#running?.catch(() => {});
  }

  async #sweep(): Promise<SweepReport> {
    const { log, concurrency } = this.#options;
    const report = emptyReport();
    const started = performance.now();
    if (!this.#checkedKeys) await this.#checkKeys();
    await this.#dispatch(report);
    let dispatchedAt = performance.now();
    try {
      while (!this.#stopping && performance.now() - started < this.#options.maxSweepMs) {
        if (performance.now() - dispatchedAt >= this.#options.pollMs) {
          await this.#dispatch(report);
          dispatchedAt = performance.now();
        }
        await this.#record(report);
        const free = concurrency - this.#inFlight.size;
        const claimed = free > 0 ? await this.#claim(free) : [];
        for (const delivery of claimed) this.#send(delivery);
        if (this.#inFlight.size === 0) {
          if (claimed.length === 0) break;
          continue;
        }
        await this.#slotsFreed();
      }
    } catch (error) {
      log.error("webhook sweep stopped early", describeError(error));
    } finally {
      await Promise.all(this.#inFlight);
      await this.#record(report).catch((error: unknown) =>
        log.error("webhook attempts could not be recorded; their deliveries will be sent again", {
          attempts: this.#done.length,
          ...describeError(error),
        }),
      );
      this.#done = [];
    }
    return report;
  }

  /** Turns new outbox events into deliveries. */
  async #dispatch(report: SweepReport): Promise<void> {
    const { sql, clock } = this.#options;
    for (;;) {
      const { events, deliveries, dropped } = await dispatchOutbox(sql, clock(), outboxBatch);
      report.events_dispatched += events;
      report.deliveries_created += deliveries;
      report.deliveries_dropped += dropped;
      if (events < outboxBatch) return;
    }
  }

  /**
   * Waits until an attempt in flight ends (or `pollMs`, to look for new work),
   * then briefly (at most `gatherMs`) for a quarter of the slots to be free:
   * attempts are then recorded, and slots filled, a batch at a time rather than
   * one statement per delivery.
   */
  async #slotsFreed(): Promise<void> {
    await Promise.race([...this.#inFlight, Bun.sleep(this.#options.pollMs)]);
    const { concurrency } = this.#options;
    const wanted = Math.max(1, Math.floor(concurrency / 4));
    const deadline = performance.now() + gatherMs;
    while (this.#inFlight.size > 0 && concurrency - this.#inFlight.size < wanted) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      await Promise.race([...this.#inFlight, Bun.sleep(left)]);
    }
  }

  #claim(limit: number): Promise<ClaimedDelivery[]> {
    const { sql, clock, perEndpoint, leaseMs, secrets } = this.#options;
    return claimDue(sql, { now: clock(), limit, perEndpoint, leaseId: randomUUID(), leaseMs, keyId: secrets.keyId });
  }

  #send(delivery: ClaimedDelivery): void {
    const { clock, secrets, sender } = this.#options;
    const running = (async () => {
      const attemptedAt = clock();
      let outcome: AttemptOutcome;
      try {
        const body = envelopeBody({
          id: delivery.event_id,
          type: delivery.event_type,
          created_at: delivery.event_created_at.toISOString(),
          data: delivery.data,
        });
        const headers = deliveryHeaders({
          deliveryId: delivery.id,
          eventType: delivery.event_type,
          timestamp: Math.floor(attemptedAt.getTime() / 1000),
          body,
          secret: secrets.open(delivery.secret_ciphertext, delivery.endpoint_id),
          previousSecret: delivery.previous_secret_ciphertext
            ? secrets.open(delivery.previous_secret_ciphertext, delivery.endpoint_id)
            : undefined,
        });
        outcome = await sender.send({ url: delivery.url, headers, body });
      } catch (error) {
        this.#options.log.error("webhook delivery could not be prepared", {
          delivery_id: delivery.id,
          ...describeError(error),
        });
        outcome = {
          succeeded: false,
          statusCode: null,
          latencyMs: 0,
          error: "the endpoint's secret cannot be opened with this instance's key",
          responseSample: null,
          unreachable: false,
        };
      }
      this.#done.push({
        deliveryId: delivery.id,
        endpointId: delivery.endpoint_id,
        leaseId: delivery.lease_id,
        attemptsBefore: delivery.attempt_count,
        attemptedAt,
        outcome,
      });
    })();
    const tracked = running.finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
  }

  /** Records the finished attempts, in batches. */
  async #record(report: SweepReport): Promise<void> {
    const { sql, log, clock, disableAfterMs, recordBatch } = this.#options;
    while (this.#done.length > 0) {
      const batch = this.#done.slice(0, recordBatch);
      const now = clock();
      const disabled = await recordAttempts(sql, batch, {
        now,
        pauseMs: endpointPauseMs,
        disableBefore: new Date(now.getTime() - disableAfterMs),
      });
      this.#done = this.#done.slice(batch.length);
      report.attempts += batch.length;
      for (const record of batch) {
        if (record.outcome.succeeded) report.delivered++;
        else report.failed++;
      }
      report.endpoints_disabled += disabled.length;
      for (const endpoint of disabled) {
        log.warn("webhook endpoint disabled: every attempt has failed since failing_since", {
          webhook_id: endpoint.id,
          org_id: endpoint.org_id,
          failing_since: endpoint.failing_since.toISOString(),
          dropped_deliveries: endpoint.dropped,
        });
      }
    }
  }

  /** Says once, loudly, when endpoints hold secrets this instance's key cannot open: it does not deliver to them. */
  async #checkKeys(): Promise<void> {
    const { sql, log, secrets } = this.#options;
    const [row] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM webhook_endpoints WHERE status = 'active' AND secret_key_id <> ${secrets.keyId}`;
    this.#checkedKeys = true;
    if (row && row.n > 0) {
      log.error(
        "some webhook endpoints' secrets were encrypted under another WEBHOOK_SECRET_KEY; this instance does not deliver to them",
        { endpoints: row.n, key_id: secrets.keyId },
      );
    }
  }
}
