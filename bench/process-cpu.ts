import { readFile } from "node:fs/promises";
import type { Sql } from "../src/db/sql.ts";

/** CPU time (user and system) a process has used, in ms; /proc counts it in 1/100 s (USER_HZ). */
export async function cpuMsOf(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  // The fields after the command name, which is in parentheses and may hold spaces: utime is the 14th of all.
  const fields = stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields ? (Number(fields[11]) + Number(fields[12])) * 10 : undefined;
}

/**
 * CPU used so far by each backend of `sql`'s database (their pids from
 * pg_stat_activity, read in /proc); undefined when the server is not on this
 * machine (the embedded engine runs inside the service).
 */
export async function backendCpuMs(sql: Sql): Promise<Map<number, number> | undefined> {
  const pids = await sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`;
  const backends = new Map<number, number>();
  for (const { pid } of pids) {
    // No such process: it ended since (a TimescaleDB job), or the server is elsewhere.
    const comm = await readFile(`/proc/${pid}/comm`, "utf8").catch(() => undefined);
    if (comm === undefined) continue;
    // Another program under a backend's pid: the server is elsewhere.
    if (comm.trim() !== "postgres") return undefined;
    const used = await cpuMsOf(pid);
    if (used !== undefined) backends.set(pid, used);
  }
  // The bench's own connection is always one of them when the server is here.
  return backends.size > 0 ? backends : undefined;
}

/**
 * The backends' CPU between two readings, in ms. A backend that started in between
 * counts whole; one that ended in between (a finished TimescaleDB job) is missed.
 */
export function backendCpuBetween(before: Map<number, number> | undefined, after: Map<number, number>): number {
  let used = 0;
  for (const [pid, ms] of after) used += ms - (before?.get(pid) ?? 0);
  return used;
}
