import type { Sql } from "./sql.ts";
import { inReadTransaction, underReadSettings } from "./statement-timeout.ts";
import { isDatabaseUnavailable } from "./unavailable.ts";

/** What pg_export_snapshot returns, checked before it is written into SET TRANSACTION SNAPSHOT, which takes no parameters. */
const snapshotId = /^[0-9A-F]+-[0-9A-F]+-[0-9]+$/;

/**
 * One connection beside the pool, with which a read runs half of its heaviest
 * statement on a second core while its own transaction runs the other half, both
 * in one snapshot (the second transaction imports the first's). One read holds it
 * at a time: a read that asks while it is held is told so at once and runs its
 * work whole, so no read ever waits for it, and it never takes a connection that
 * ingest could use. A TimescaleDB server only: the embedded engine runs one
 * statement at a time.
 */
export class ReadCompanion {
  #held = false;
  #runs = 0;

  constructor(
    private readonly sql: Sql,
    private readonly timeoutMs: number,
  ) {}

  /** Reads that have run part of their work here. */
  get runs(): number {
    return this.#runs;
  }

  /**
   * Runs `here` in the read's transaction `tx` and, at the same time, `there` on
   * this connection in tx's snapshot, under the same statement timeout; undefined,
   * without running either, while another read holds the connection. `tx` must be
   * a repeatable-read transaction. Both plan without parallel workers, as every
   * read does: the two halves are the read's parallelism. The companion only saves
   * time: when its connection cannot be had or is lost, `there` runs after `here`
   * in tx instead, and the read is answered.
   */
  async alongside<Here, There>(
    tx: Sql,
    here: () => Promise<Here>,
    there: (sql: Sql) => Promise<There>,
  ): Promise<[Here, There] | undefined> {
    if (this.#held) return undefined;
    this.#held = true;
    try {
      const [exported] = await tx<{ id: string }[]>`SELECT pg_export_snapshot() AS id`;
      const id = exported?.id ?? "";
      if (!snapshotId.test(id)) throw new Error(`pg_export_snapshot returned an unexpected id: ${id}`);
      const beside = inReadTransaction(this.sql, (companion) => {
        // Sent ahead of the work without waiting: a failure fails the statements behind it.
        companion.unsafe(`SET TRANSACTION SNAPSHOT '${id}'`).execute();
        underReadSettings(companion, this.timeoutMs);
        return there(companion);
      });
      // Both settle before the connection is given up, so the next read never queues behind this one.
      const [mine, theirs] = await Promise.allSettled([here(), beside]);
      if (mine.status === "rejected") throw mine.reason;
      if (theirs.status === "rejected") {
        if (!isDatabaseUnavailable(theirs.reason)) throw theirs.reason;
        return [mine.value, await there(tx)];
      }
      this.#runs++;
      return [mine.value, theirs.value as There];
    } finally {
      this.#held = false;
    }
  }
}
