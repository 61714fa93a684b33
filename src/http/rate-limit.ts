import type { Server } from "bun";
import type { Config } from "../config.ts";
import { ProblemError, problem } from "../core/problem.ts";

/**
 * What a request is limited as. Authenticated requests are counted per credential
 * (API key or signed-in user), the rest per client address.
 * - ingest: routes needing telemetry:write
 * - read: routes needing telemetry:read
 * - click_lookup: click-manifest lookups (GET /ctx/{token}), each a guess at a token
 * - control: the identity control plane and anything else a credential calls
 * - public: sign-in and /resolve, which take no credential
 * - failed_auth: credentials that fail to authenticate (401), per client address
 */
export type RateLimitClass = "ingest" | "read" | "click_lookup" | "control" | "public" | "failed_auth";

/**
 * Settings that turn every limit off: for the shared test app and the benchmarks,
 * which send requests as fast as the database answers them.
 */
export const rateLimitsOff = {
  RATE_LIMIT_INGEST_PER_SECOND: "0",
  RATE_LIMIT_READ_PER_SECOND: "0",
  RATE_LIMIT_CLICK_LOOKUP_PER_SECOND: "0",
  RATE_LIMIT_CONTROL_PER_SECOND: "0",
  RATE_LIMIT_PUBLIC_PER_SECOND: "0",
  RATE_LIMIT_FAILED_AUTH_PER_SECOND: "0",
} as const;

/** A credential may send this many seconds' worth of requests at once before the rate applies. */
export const burstSeconds = 2;

interface Bucket {
  tokens: number;
  /** performance.now() when `tokens` was last brought up to date. */
  at: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** Requests the bucket holds when full. */
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one more request is allowed (0 when this one was). */
  retryAfterSeconds: number;
}

/**
 * Past this many buckets, full ones are dropped (they carry no state a new bucket
 * would not), at most once a second so that many busy callers cost no scan each.
 */
const sweepAbove = 50_000;
const sweepIntervalMs = 1000;

/**
 * Token buckets in this process's memory: each (class, caller) pair holds up to
 * `rate × burstSeconds` requests and refills at `rate` per second. One container
 * enforces its limits exactly; several instances each enforce their own.
 * A rate of 0 means no limit for that class.
 */
export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  #sweptAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly perSecond: Readonly<Record<RateLimitClass, number>>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  static fromConfig(config: Config): RateLimiter {
    return new RateLimiter({
      ingest: config.RATE_LIMIT_INGEST_PER_SECOND,
      read: config.RATE_LIMIT_READ_PER_SECOND,
      click_lookup: config.RATE_LIMIT_CLICK_LOOKUP_PER_SECOND,
      control: config.RATE_LIMIT_CONTROL_PER_SECOND,
      public: config.RATE_LIMIT_PUBLIC_PER_SECOND,
      failed_auth: config.RATE_LIMIT_FAILED_AUTH_PER_SECOND,
    });
  }

  /** Takes one request from the caller's bucket; undefined when the class is unlimited. */
  take(kind: RateLimitClass, caller: string): RateLimitDecision | undefined {
    const rate = this.perSecond[kind];
    if (rate <= 0) return undefined;
    const capacity = rate * burstSeconds;
    const now = this.now();
    const key = `${kind}:${caller}`;
    const bucket = this.#buckets.get(key) ?? this.#newBucket(key, capacity, now);
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    bucket.at = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return {
      allowed,
      limit: capacity,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((capacity - bucket.tokens) / rate),
      retryAfterSeconds: allowed ? 0 : Math.ceil((1 - bucket.tokens) / rate),
    };
  }

  /** Returns a request taken by `take` that turned out not to count. */
  giveBack(kind: RateLimitClass, caller: string): void {
    const bucket = this.#buckets.get(`${kind}:${caller}`);
    if (bucket) bucket.tokens = Math.min(this.perSecond[kind] * burstSeconds, bucket.tokens + 1);
  }

  #newBucket(key: string, capacity: number, now: number): Bucket {
    if (this.#buckets.size >= sweepAbove && now - this.#sweptAt >= sweepIntervalMs) this.#sweep(now);
    const bucket = { tokens: capacity, at: now };
    this.#buckets.set(key, bucket);
    return bucket;
  }

  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [key, bucket] of this.#buckets) {
      const rate = this.perSecond[key.slice(0, key.indexOf(":")) as RateLimitClass];
      if (bucket.tokens + ((now - bucket.at) / 1000) * rate >= rate * burstSeconds) this.#buckets.delete(key);
    }
  }
}

const callerNames: Record<RateLimitClass, string> = {
  ingest: "this API key",
  read: "this API key",
  click_lookup: "this API key",
  control: "this credential",
  public: "this client address",
  failed_auth: "this client address",
};

const kindNames: Record<RateLimitClass, string> = {
  ingest: "ingest requests",
  read: "read requests",
  click_lookup: "click-manifest lookups",
  control: "control-plane requests",
  public: "requests without a credential",
  failed_auth: "credentials that failed to authenticate",
};

/**
 * Counts the request against the caller's bucket: sets the RateLimit-* headers,
 * or throws a 429 problem with Retry-After when the bucket is empty.
 */
export function admitRequest(
  limiter: RateLimiter,
  kind: RateLimitClass,
  caller: string,
  headers: Record<string, unknown>,
): void {
  const decision = limiter.take(kind, caller);
  if (!decision) return;
  if (!decision.allowed) throw rateLimited(limiter, kind, decision);
  Object.assign(headers, rateLimitHeaders(decision));
}

const rateLimitHeaders = (decision: RateLimitDecision) => ({
  "ratelimit-limit": String(decision.limit),
  "ratelimit-remaining": String(decision.remaining),
  "ratelimit-reset": String(decision.resetSeconds),
});

function rateLimited(limiter: RateLimiter, kind: RateLimitClass, decision: RateLimitDecision) {
  return problem(
    "rate_limited",
    `${callerNames[kind]} sent more than ${limiter.perSecond[kind]} ${kindNames[kind]} per second (bursts up to ${decision.limit}); retry after ${decision.retryAfterSeconds} s`,
    { limit_class: kind, retry_after_seconds: decision.retryAfterSeconds },
    { ...rateLimitHeaders(decision), "retry-after": String(decision.retryAfterSeconds) },
  );
}

/** What tells one client from another: the request and the server it came through. */
export interface RequestClient {
  server: Server<unknown> | null;
  request: Request;
}

/** The client's address: the TCP peer (behind a proxy, the proxy). "unknown" without a server (app.handle). */
export function clientAddress({ server, request }: RequestClient): string {
  return server?.requestIP(request)?.address ?? "unknown";
}

/**
 * Runs an authentication under the client address's failed_auth bucket, because
 * each guess at a key or session token costs a database lookup. A lookup takes a
 * token before it is made (429 when there is none, so parallel guesses are held
 * too) and gives it back only when the credential authenticates: wrong ones, and
 * lookups that fail while the database is in trouble, keep it. A credential served
 * from memory (a cached key), or one malformed or missing, looks nothing up and
 * neither needs nor takes a token. Parallel requests with the same credential
 * share one lookup and one token (SingleFlight in the authenticators).
 */
export async function authenticateCountingFailures<T>(
  limiter: RateLimiter,
  client: RequestClient,
  authenticate: (beforeLookup: () => void) => Promise<T>,
): Promise<T> {
  const address = clientAddress(client);
  let charged = false;
  const beforeLookup = () => {
    const decision = limiter.take("failed_auth", address);
    if (decision && !decision.allowed) throw rateLimited(limiter, "failed_auth", decision);
    charged = decision !== undefined;
  };
  try {
    const result = await authenticate(beforeLookup);
    if (charged) limiter.giveBack("failed_auth", address);
    return result;
  } catch (error) {
    // A real key of a suspended organisation is no guess: its refusal costs no token.
    if (charged && error instanceof ProblemError && error.code === "organization_suspended") {
      limiter.giveBack("failed_auth", address);
    }
    throw error;
  }
}
