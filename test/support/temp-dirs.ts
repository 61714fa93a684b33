import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const created = new Set<string>();

/**
 * A fresh directory under the OS temporary directory, removed when the test run
 * ends (test/setup.ts), so a run leaves nothing behind (.ci/run checks it).
 */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.add(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of created) rmSync(dir, { recursive: true, force: true });
  created.clear();
}
