import { afterAll, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { claimDataDir, runningEngine } from "../../src/db/data-dir-lock.ts";
import { cliJson, serviceEnv, startService } from "../support/service-process.ts";
import { tempDir } from "../support/temp-dirs.ts";

const parent = tempDir("svc-claim-");
afterAll(() => rm(parent, { recursive: true, force: true }));

const lockModule = join(import.meta.dir, "../../src/db/data-dir-lock.ts");

/** Another process that claims `dataDir` as a starting service does, and holds it until killed. */
async function claimant(dataDir: string) {
  const proc = Bun.spawn(
    [
      process.execPath,
      "-e",
      `const { claimDataDir } = await import(${JSON.stringify(lockModule)}); claimDataDir(${JSON.stringify(dataDir)}); console.log("claimed"); await Bun.sleep(60_000);`,
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const reader = proc.stdout.getReader();
  await reader.read();
  return proc;
}

test("a new data directory is claimed before the engine starts, and stays empty for it", async () => {
  const dataDir = join(parent, "fresh");
  const holder = await claimant(dataDir);
  try {
    // The engine creates a cluster only in an empty directory: the claim is kept beside it.
    expect(readdirSync(dataDir)).toEqual([]);
    // A CLI started now waits for that engine instead of opening a second one …
    const seen = await Promise.race([runningEngine(dataDir), Bun.sleep(300).then(() => "still waiting")]);
    expect(seen).toBe("still waiting");
    // … and a second service is refused.
    expect(() => claimDataDir(dataDir)).toThrow(`DATA_DIR ${dataDir} is in use by the process with pid ${holder.pid}`);
  } finally {
    holder.kill();
    await holder.exited;
  }
  // A claim left by a process that died is taken over; once serving, the record moves into the directory.
  const claim = claimDataDir(dataDir);
  claim.serving(5432);
  expect(readdirSync(parent).filter((name) => name.startsWith(".fresh"))).toEqual([]);
  expect(readdirSync(dataDir)).toEqual(["engine.lock.json"]);
  claim.release();
});

test("a CLI started while the service migrates a new data directory waits for it, and both succeed", async () => {
  const dataDir = join(parent, "racing");
  const env = serviceEnv({ DATA_DIR: dataDir, DATABASE_URL: "" });
  const starting = startService(env);
  // As soon as the service has claimed the directory: it is starting its engine or migrating.
  while (!readdirSync(parent).some((name) => name.includes("racing"))) await Bun.sleep(10);
  const org = await cliJson(env, "org", "create", "--name", "Early bird", "--type", "agent");
  const service = await starting;
  try {
    expect(org.id).toBeString();
    expect(service.logs.filter((line) => line.level === "error")).toEqual([]);
  } finally {
    await service.stop();
  }
}, 120_000);
