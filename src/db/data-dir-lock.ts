import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The embedded engine is one process's files: two engines on one data directory
 * would corrupt it. The process serving it records its pid and loopback port
 * here, so a second process (the CLI) connects to that engine instead.
 */
interface LockRecord {
  pid: number;
  port: number;
}

const lockName = "engine.lock.json";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The engine another live process serves from `dataDir`, if any. */
export function runningEngine(dataDir: string): LockRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(join(dataDir, lockName), "utf8")) as LockRecord;
    return record.pid !== process.pid && isAlive(record.pid) ? record : undefined;
  } catch {
    return undefined;
  }
}

export function claimDataDir(dataDir: string, port: number): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, lockName);
  writeFileSync(path, JSON.stringify({ pid: process.pid, port } satisfies LockRecord));
  return () => rmSync(path, { force: true });
}
