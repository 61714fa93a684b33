import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseStartupError } from "./startup-errors.ts";

/**
 * The embedded engine is one process's files: two engines on one data directory
 * would corrupt it. The process serving it records its pid here before the engine
 * starts, and its loopback port once it listens, so a second process (the CLI)
 * connects to that engine instead of opening the files again.
 */
interface LockRecord {
  pid: number;
  /** 0 while the engine is starting. */
  port: number;
}

const lockName = "engine.lock.json";
const startWaitMs = 120_000;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readRecord(dataDir: string): LockRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(join(dataDir, lockName), "utf8")) as LockRecord;
    return record.pid !== process.pid && isAlive(record.pid) ? record : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The engine another live process serves from `dataDir`, if any; while that
 * process is still starting its engine, waits until it listens.
 */
export async function runningEngine(dataDir: string): Promise<LockRecord | undefined> {
  const deadline = Date.now() + startWaitMs;
  for (;;) {
    const record = readRecord(dataDir);
    if (record?.port !== 0) return record;
    if (Date.now() > deadline) {
      throw new DatabaseStartupError(
        `the process ${record.pid} has been starting the embedded engine in ${dataDir} for too long`,
      );
    }
    await Bun.sleep(100);
  }
}

/** Whether `dataDir` already holds a database cluster (an engine creates one only in an empty directory). */
export function holdsCluster(dataDir: string): boolean {
  return existsSync(join(dataDir, "PG_VERSION"));
}

/** Takes `dataDir` for this process (atomically: a live claimant elsewhere wins), before its engine starts. */
export function claimDataDir(dataDir: string): { serving(port: number): void; release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, lockName);
  const write = (port: number, flag: "wx" | "w") =>
    writeFileSync(path, JSON.stringify({ pid: process.pid, port } satisfies LockRecord), { flag });
  try {
    write(0, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const holder = readRecord(dataDir);
    if (holder) throw new DatabaseStartupError(`DATA_DIR ${dataDir} is in use by the process with pid ${holder.pid}`);
    // Left behind by a process that died: take it over.
    write(0, "w");
  }
  return {
    serving: (port) => write(port, "w"),
    release: () => rmSync(path, { force: true }),
  };
}
