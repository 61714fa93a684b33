import type { DatabaseKind, Sql } from "../../db/sql.ts";
import type { FlagUpdates } from "./event-store.ts";
import { type WritePlan, writeIngest } from "./service.ts";

interface Pending {
  plan: WritePlan;
  resolve: (created: number) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for ingest: requests that arrive while the database is busy with
 * earlier writes share the next transaction. A transaction's fixed costs (its
 * round trips, statements, plans and the WAL flush of its commit) are then paid
 * once for several requests, which is most of what a 100-event batch costs; a
 * request that finds a writer free is written at once, alone.
 *
 * At most `transactions` run at a time, each with at most `eventsPerTransaction`
 * events (a single larger request still goes alone). A request's acknowledgement
 * still waits for the commit of the transaction that holds it. When a shared
 * transaction fails (two organisations create a session of one new name, say), each
 * of its requests is written again alone, so one refusal never refuses the others.
 */
export class GroupWriter {
  readonly #queue: Pending[] = [];
  #running = 0;

  constructor(
    readonly sql: Sql,
    readonly transactions: number,
    readonly eventsPerTransaction: number,
    readonly flagUpdates: FlagUpdates,
  ) {}

  /** Writes the plan (service.ts writeIngest); resolves with the events it inserted, once committed. */
  write(plan: WritePlan): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ plan, resolve, reject });
      this.#drain();
    });
  }

  #drain(): void {
    while (this.#running < this.transactions && this.#queue.length > 0) {
      const group = this.#nextGroup();
      this.#running++;
      void this.#commit(group).finally(() => {
        this.#running--;
        this.#drain();
      });
    }
  }

  /** The oldest requests, in order, up to the event limit; a session header goes alone. */
  #nextGroup(): Pending[] {
    const group = [this.#queue.shift() as Pending];
    if (group[0]?.plan.header) return group;
    let events = group[0]?.plan.events.length ?? 0;
    for (;;) {
      const next = this.#queue[0];
      if (!next || next.plan.header || events + next.plan.events.length > this.eventsPerTransaction) return group;
      events += next.plan.events.length;
      group.push(this.#queue.shift() as Pending);
    }
  }

  async #commit(group: Pending[]): Promise<void> {
    try {
      const created = await writeIngest(
        this.sql,
        group.map((pending) => pending.plan),
        this.flagUpdates,
      );
      for (const [i, pending] of group.entries()) pending.resolve(created[i] as number);
    } catch (error) {
      if (group.length === 1) return (group[0] as Pending).reject(error);
      for (const pending of group) {
        await writeIngest(this.sql, [pending.plan], this.flagUpdates).then(
          ([created]) => pending.resolve(created as number),
          pending.reject,
        );
      }
    }
  }
}

/**
 * INGEST_TRANSACTIONS when unset. A server runs transactions side by side: at
 * half the saturating rate, two of them left requests queued behind each other
 * (bench:ingest, README "Group commit"). The embedded engine runs one statement
 * at a time, so more writers there would only split the queue into smaller groups.
 */
export function ingestTransactionsFor(kind: DatabaseKind, configured: number | undefined): number {
  return configured ?? (kind === "server" ? 4 : 2);
}
