/**
 * The retry schedule (interface spec, delivery rule 6): after a failed attempt the
 * next comes 1 minute, 5 minutes, 30 minutes, 2 hours, then every 12 hours later;
 * the 8th failed attempt dead-letters the delivery. Pure, so that tests can check
 * it against their own arithmetic.
 */
export const maxAttempts = 8;

const minute = 60_000;
const hour = 60 * minute;
const retryDelaysMs = [minute, 5 * minute, 30 * minute, 2 * hour] as const;
const lastRetryDelayMs = 12 * hour;

/** The wait after the `attempt`-th failed attempt (1-based), or null when that attempt was the last. */
export function retryDelayAfter(attempt: number): number | null {
  if (attempt >= maxAttempts) return null;
  return retryDelaysMs[attempt - 1] ?? lastRetryDelayMs;
}

export type DeliveryStatus = "pending" | "delivered" | "dead" | "dropped";

export interface NextState {
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
}

/** Where a delivery stands after an attempt made at `at`, when `attemptsBefore` were made in its cycle. */
export function afterAttempt(attemptsBefore: number, succeeded: boolean, at: Date): NextState {
  const attemptCount = attemptsBefore + 1;
  if (succeeded) return { status: "delivered", attemptCount, nextAttemptAt: null, deliveredAt: at };
  const delay = retryDelayAfter(attemptCount);
  return delay === null
    ? { status: "dead", attemptCount, nextAttemptAt: null, deliveredAt: null }
    : { status: "pending", attemptCount, nextAttemptAt: new Date(at.getTime() + delay), deliveredAt: null };
}

/**
 * How long an endpoint is held back after an attempt that got no HTTP answer at
 * all (timeout, refused or reset connection, DNS or TLS failure): its other due
 * deliveries wait instead of each spending up to 10 s on a dead host.
 */
export const endpointPauseMs = minute;

/**
 * A failing endpoint with anything due is tried at least every
 * `lastRetryDelayMs`, so a longer spell without attempts had nothing to send: it
 * does not count towards WEBHOOK_DISABLE_AFTER_DAYS, and the next failure starts
 * `failing_since` afresh. The hour's margin covers late sweeps.
 */
export const idleAfterFailureMs = lastRetryDelayMs + hour;
