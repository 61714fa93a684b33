import { problem } from "../core/problem.ts";

/**
 * Load shedding: at most `concurrency` requests of a kind at work at once, up to
 * `queue` more waiting their turn, each for at most `maxWaitMs`. Past that, a
 * request is refused at once with 503 and Retry-After, so that the ones taken in
 * keep their latency instead of every request slowing down together, and memory
 * stays bounded. `concurrency` 0 turns the gate off.
 */
export class AdmissionGate {
  #active = 0;
  readonly #waiting: { admit: () => void; refuse: (error: Error) => void }[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
    private readonly maxWaitMs: number,
  ) {}

  /** Runs `work` once admitted; throws the 503 problem when the request is shed. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.concurrency <= 0) return work();
    await this.#enter();
    try {
      return await work();
    } finally {
      this.#leave();
    }
  }

  /**
   * Throws the 503 problem when a request arriving now would be refused at once:
   * every slot taken and the queue full. Checked before a request's body is read,
   * so a request that would be refused costs no parsing.
   */
  refuseWhenFull(): void {
    if (this.#full) throw overloaded(1);
  }

  get #full(): boolean {
    return this.concurrency > 0 && this.#active >= this.concurrency && this.#waiting.length >= this.queue;
  }

  #enter(): Promise<void> {
    if (this.#active < this.concurrency) {
      this.#active++;
      return Promise.resolve();
    }
    if (this.#full) return Promise.reject(overloaded(1));
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        admit: () => {
          clearTimeout(timer);
          resolve();
        },
        refuse: reject,
      };
      const timer = setTimeout(() => {
        const index = this.#waiting.indexOf(waiter);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(overloaded(Math.max(1, Math.ceil(this.maxWaitMs / 1000))));
      }, this.maxWaitMs);
      this.#waiting.push(waiter);
    });
  }

  #leave(): void {
    const next = this.#waiting.shift();
    // The slot passes to the next in line; otherwise it is freed.
    if (next) next.admit();
    else this.#active--;
  }
}

const overloaded = (retryAfterSeconds: number) =>
  problem(
    "ingest_overloaded",
    `the service is taking in events as fast as the database stores them; retry after ${retryAfterSeconds} s`,
    { retry_after_seconds: retryAfterSeconds },
    { "retry-after": String(retryAfterSeconds) },
  );
