import type { Logger } from "../log.ts";
import { connect } from "./client.ts";
import type { ReadCompanion } from "./read-companion.ts";
import type { Sql } from "./sql.ts";
import { isDatabaseUnavailable } from "./unavailable.ts";

/** Where one read runs, and the moment up to which it includes everything acknowledged. */
export interface ReadTarget {
  sql: Sql;
  asOf: Date;
  /** The replica's position in READ_REPLICA_URLS (1-based), or undefined for the primary. */
  replica?: number;
  /** The primary's companion connection, when it has one (read-companion.ts); replicas have none. */
  companion?: ReadCompanion;
}

interface ReplicaState {
  position: number;
  sql: Sql;
  /** Everything committed on the primary before this was replayed here, as of the last check. */
  includesUpTo?: Date;
  /** When the last check succeeded. */
  checkedAt?: number;
  /** Usable at the last check; a change is logged. */
  inUse?: boolean;
}

const checkIntervalMs = 1000;

/**
 * Read replicas (PostgreSQL streaming standbys of the primary) and the choice of
 * one for each read. Every second each replica is asked how far it has replayed,
 * against the primary's WAL position taken just before: a replica that has
 * replayed that position includes everything committed before the check began;
 * one still behind includes what its last replayed transaction committed. A read
 * goes to the replica that includes the most, when that is within `maxLagSeconds`
 * of now and its check is recent; otherwise to the primary, which includes
 * everything up to the read itself. The figure is the read's `as_of`.
 */
export class ReadReplicas {
  private readonly replicas: ReplicaState[];
  private timer: ReturnType<typeof setInterval> | undefined;
  private checking = false;

  constructor(
    private readonly primary: Sql,
    urls: string[],
    poolSize: number,
    private readonly maxLagSeconds: number,
    private readonly log: Logger,
    private readonly companion?: ReadCompanion,
    private readonly now: () => number = Date.now,
  ) {
    this.replicas = urls.map((url, index) => ({ position: index + 1, sql: connect(url, poolSize) }));
  }

  get count(): number {
    return this.replicas.length;
  }

  /** Checks each replica once (start-up warns about any that cannot serve), then every second. */
  async start(): Promise<void> {
    if (this.replicas.length === 0) return;
    await this.check();
    for (const replica of this.replicas) {
      if (!this.usable(replica)) {
        this.log.warn("read replica not usable at start: reads go to the primary until it keeps up", {
          replica: replica.position,
          max_lag_seconds: this.maxLagSeconds,
        });
      }
    }
    this.timer = setInterval(() => void this.check(), checkIntervalMs);
  }

  /** The replica to read from, or the primary. */
  pick(): ReadTarget {
    let best: ReplicaState | undefined;
    for (const replica of this.replicas) {
      if (!this.usable(replica)) continue;
      if (!best || (replica.includesUpTo?.getTime() ?? 0) > (best.includesUpTo?.getTime() ?? 0)) best = replica;
    }
    if (!best?.includesUpTo) return this.primaryTarget();
    return { sql: best.sql, asOf: best.includesUpTo, replica: best.position };
  }

  /**
   * Runs `read` on the chosen target; when a replica fails because it is away, marks
   * it down and runs the read again on the primary, so reads keep answering.
   */
  async read<T>(read: (target: ReadTarget) => Promise<T>): Promise<T> {
    const target = this.pick();
    if (target.replica === undefined) return read(target);
    try {
      return await read(target);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const replica = this.replicas[target.replica - 1];
      if (replica) {
        replica.checkedAt = undefined;
        replica.inUse = false;
      }
      this.log.warn("read replica failed: read again on the primary", {
        replica: target.replica,
        error: String(error),
      });
      return read(this.primaryTarget());
    }
  }

  private primaryTarget(): ReadTarget {
    return { sql: this.primary, asOf: new Date(this.now()), companion: this.companion };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.replicas.map((replica) => replica.sql.end({ timeout: 5 })));
  }

  private usable(replica: ReplicaState): boolean {
    if (replica.checkedAt === undefined || replica.includesUpTo === undefined) return false;
    const now = this.now();
    return (
      now - replica.checkedAt <= 3 * checkIntervalMs &&
      now - replica.includesUpTo.getTime() <= this.maxLagSeconds * 1000
    );
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const [position] = await this.primary<{ lsn: string; at: Date }[]>`
        SELECT pg_current_wal_lsn()::text AS lsn, clock_timestamp() AS at`;
      if (!position) return;
      await Promise.all(this.replicas.map((replica) => this.checkReplica(replica, position.lsn, position.at)));
    } catch (error) {
      // The primary is away: nothing to compare with; replicas keep their last state until it ages out.
      if (!isDatabaseUnavailable(error)) this.log.warn("read replica check failed", { error: String(error) });
    } finally {
      this.checking = false;
    }
  }

  private async checkReplica(replica: ReplicaState, primaryLsn: string, primaryAt: Date): Promise<void> {
    let problem: string | undefined;
    try {
      const [state] = await replica.sql<{ caught_up: boolean | null; replayed_at: Date | null; standby: boolean }[]>`
        SELECT pg_is_in_recovery() AS standby,
               pg_last_wal_replay_lsn() >= ${primaryLsn}::pg_lsn AS caught_up,
               pg_last_xact_replay_timestamp() AS replayed_at`;
      if (state?.standby) {
        replica.includesUpTo = state.caught_up ? primaryAt : (state.replayed_at ?? undefined);
        replica.checkedAt = this.now();
      } else {
        problem = "not a standby (pg_is_in_recovery() is false)";
        replica.checkedAt = undefined;
      }
    } catch (error) {
      problem = String(error);
      replica.checkedAt = undefined;
    }
    // Logged when it changes, not every second.
    const usable = this.usable(replica);
    if (replica.inUse && !usable) {
      this.log.warn("read replica skipped: reads go to the primary", {
        replica: replica.position,
        reason: problem ?? `more than ${this.maxLagSeconds} s behind`,
      });
    } else if (replica.inUse === false && usable) {
      this.log.info("read replica back in use", { replica: replica.position });
    }
    // Not usable at start is said once by start().
    replica.inUse = usable;
  }
}
