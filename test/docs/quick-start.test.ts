import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { run } from "../support/run.ts";
import { type ServiceProcess, serviceEnv, startService } from "../support/service-process.ts";
import { tempDir } from "../support/temp-dirs.ts";

/**
 * docs/quick-start.md, run as written: its `sh` blocks in order, in bash, from the
 * project directory, against a service started on a new embedded database (the
 * guide's `sh start` block, which this test does itself on a free port).
 * The quick start is the embedded engine's: the server suite leaves it to the other.
 */
const root = join(import.meta.dir, "../..");
let service: ServiceProcess | undefined;
afterAll(() => service?.stop());

/** The guide's shell blocks to run: fenced as ```sh exactly. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? "");
}

test.skipIf(Boolean(process.env.TEST_DATABASE_URL))(
  "the quick start works as written, from a new database to the first summary",
  async () => {
    const dataDir = tempDir("svc-quick-start-");
    const env = serviceEnv({ DATABASE_URL: "", DATA_DIR: dataDir });
    const started = performance.now();
    service = await startService(env);
    const blocks = shellBlocks(await Bun.file(join(root, "docs/quick-start.md")).text());
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const { stdout, stderr, exitCode } = await run(["bash", "-c", `set -euo pipefail\n${blocks.join("\n")}`], {
      cwd: root,
      env: { ...env, BASE: service.base },
    });
    console.log(`quick start: service start and every step in ${Math.round(performance.now() - started)} ms`);
    // On failure the output shows which step failed and the problem it got.
    expect({ exitCode, stderr, ...(exitCode === 0 ? {} : { stdout }) }).toEqual({ exitCode: 0, stderr: "" });
    expect(stdout).toContain('{"status":"ok","events_created":3}');
    expect(stdout).toContain('"total_events":3');
    expect(stdout).toContain('"total_sessions":1');
  },
  120_000,
);
