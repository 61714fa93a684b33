import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { isAlive } from "../core/process-alive.ts";
import { DatabaseStartupError } from "./startup-errors.ts";

/**
 * The embedded engine is one process's files: two engines on one data directory
 * would corrupt it. The process serving it records its pid before the engine
 * starts, its loopback port once it listens, and that it is ready once its
 * migrations are applied, so a second process (the CLI) connects to that engine
 * when it is ready instead of opening the files again. The record lives in the
 * directory; while a new cluster is being created there (the engine creates one
 * only in an empty directory) it lives beside it instead.
 */
interface LockRecord {
  pid: number;
  /** 0 while the engine is starting. */
  port: number;
  /**
   * False until the serving process has applied its migrations. The engine is
   * one backend session shared by every connection, so a client arriving during
   * them would interleave its statements with theirs (and share their advisory lock).
   */
  ready: boolean;
}

const lockName = "engine.lock.json";
const startWaitMs = 120_000;

/** Where the record is kept: in the directory, or beside it while its cluster is created. */
function lockPaths(dataDir: string): { inside: string; beside: string } {
  const absolute = resolve(dataDir);
  return { inside: join(absolute, lockName), beside: join(dirname(absolute), `.${basename(absolute)}.${lockName}`) };
}

function readAt(path: string): LockRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(path, "utf8")) as LockRecord;
    return record.pid !== process.pid && isAlive(record.pid) ? record : undefined;
  } catch {
    return undefined;
  }
}

/** The live record of another process, wherever it is kept. */
function readRecord(dataDir: string): LockRecord | undefined {
  const { inside, beside } = lockPaths(dataDir);
  return readAt(inside) ?? readAt(beside);
}

/**
 * The engine another live process serves from `dataDir`, if any; while that
 * process is still starting its engine or migrating, waits until it is ready.
 */
export async function runningEngine(dataDir: string): Promise<LockRecord | undefined> {
  const deadline = Date.now() + startWaitMs;
  for (;;) {
    const record = readRecord(dataDir);
    if (!record || record.ready) return record;
    if (Date.now() > deadline) {
      throw new DatabaseStartupError(
        `the process ${record.pid} has been starting the embedded engine in ${dataDir} for too long`,
      );
    }
    await Bun.sleep(100);
  }
}

/** Whether `dataDir` already holds a database cluster (an engine creates one only in an empty directory). */
function holdsCluster(dataDir: string): boolean {
  return existsSync(join(dataDir, "PG_VERSION"));
}

/** Whether opening `dataDir` would create a new, empty database: none there, and no live process creating one. */
export function wouldCreateDatabase(dataDir: string): boolean {
  return !holdsCluster(dataDir) && !readRecord(dataDir);
}

/**
 * Takes `dataDir` for this process before its engine starts (atomically: a live
 * claimant elsewhere wins), beside the directory when it holds no cluster yet.
 */
export function claimDataDir(dataDir: string): { serving(port: number): void; ready(): void; release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const { inside, beside } = lockPaths(dataDir);
  const path = holdsCluster(dataDir) ? inside : beside;
  const write = (at: string, port: number, flag: "wx" | "w", ready = false) =>
    writeFileSync(at, JSON.stringify({ pid: process.pid, port, ready } satisfies LockRecord), { flag });
  let servingPort = 0;
  const inUse = (holder: LockRecord) =>
    new DatabaseStartupError(`DATA_DIR ${dataDir} is in use by the process with pid ${holder.pid}`);
  try {
    write(path, 0, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const holder = readAt(path);
    if (holder) throw inUse(holder);
    // Left behind by a process that died: take it over.
    write(path, 0, "w");
  }
  // A process that saw the directory in the other state (a cluster just created) claims the other path.
  const other = readRecord(dataDir);
  if (other) {
    rmSync(path, { force: true });
    throw inUse(other);
  }
  const release = () => {
    rmSync(inside, { force: true });
    rmSync(beside, { force: true });
    process.off("exit", release);
  };
  // A process that exits before it closes its engine (a signal while starting) leaves no claim behind.
  process.on("exit", release);
  return {
    serving(port) {
      servingPort = port;
      write(inside, port, "w");
      if (path === beside) rmSync(beside, { force: true });
    },
    ready() {
      write(inside, servingPort, "w", true);
    },
    release,
  };
}
