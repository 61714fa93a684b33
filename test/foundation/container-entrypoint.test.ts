import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { serviceEnv, startService } from "../support/service-process.ts";
import { tempDir } from "../support/temp-dirs.ts";

// docker/entrypoint.sh runs inside the official TimescaleDB image, which cannot be
// built here. It is run instead with this machine's PostgreSQL 15 and the
// TimescaleDB bundle that the server test run installs (../shared/tsdb), a stand-in
// for the image's own docker-entrypoint.sh, and as the postgres user like the image.
const pgBin = "/usr/lib/postgresql/15/bin";
const available = existsSync(join(pgBin, "postgres")) && existsSync("/usr/lib/postgresql/15/lib/timescaledb.so");
const root = join(import.meta.dir, "../..");
const asRoot = process.getuid?.() === 0;

describe.skipIf(!available)("the container entrypoint", () => {
  let dir: string;
  let pgData: string;
  let bin: string;
  const port = String(56_000 + Math.floor(Math.random() * 900));

  const asPostgres = (command: string[]) => (asRoot ? ["runuser", "-u", "postgres", "--", ...command] : command);
  const run = async (command: string[]) => {
    const proc = Bun.spawn(asPostgres(command), { stdout: "pipe", stderr: "pipe" });
    const code = await proc.exited;
    if (code !== 0) throw new Error(`${command.join(" ")} failed: ${await new Response(proc.stderr).text()}`);
  };

  beforeAll(async () => {
    dir = tempDir("entrypoint-");
    pgData = join(dir, "pgdata");
    bin = join(dir, "bin");
    await Bun.$`mkdir -p ${bin}`;
    // The image's entrypoint initialises PGDATA and then runs postgres with the given arguments.
    writeFileSync(
      join(bin, "docker-entrypoint.sh"),
      `#!/bin/sh\nshift\nexec ${pgBin}/postgres -D "$PGDATA" -k "$PGDATA" "$@"\n`,
    );
    chmodSync(join(bin, "docker-entrypoint.sh"), 0o755);
    if (asRoot) await Bun.$`chown -R postgres: ${dir}`;
    await run([join(pgBin, "initdb"), "-D", pgData, "-U", "postgres", "--auth=trust", "-E", "UTF8"]);
    const conf = join(pgData, "postgresql.conf");
    writeFileSync(
      conf,
      `${await Bun.file(conf).text()}\nshared_preload_libraries = 'timescaledb'\ntimescaledb.telemetry_level = off\n`,
    );
    if (asRoot) chownSync(conf, 101, 104);
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const entrypointEnv = (overrides: Record<string, string> = {}) =>
    serviceEnv({
      PGDATA: pgData,
      PGPORT: port,
      APP_DIR: root,
      DATABASE_URL: "",
      PATH: `${bin}:${pgBin}:${process.env.PATH}`,
      HOME: dir,
      BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0",
      ...overrides,
    });
  const entrypointCommand = () => asPostgres(["sh", join(root, "docker/entrypoint.sh")]);
  const clusterState = () =>
    Bun.spawnSync([join(pgBin, "pg_controldata"), pgData])
      .stdout.toString()
      .match(/cluster state:\s+(.+)/)?.[1];

  test("starts the bundled database, then the service; SIGTERM stops both cleanly", async () => {
    const env = entrypointEnv();
    const service = await startService(env, { command: entrypointCommand() });
    try {
      const ready = await fetch(`${service.base}/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ database: "server" });
      // docker stop signals the entrypoint itself (runuser, standing in for USER postgres, would not pass it on).
      const entrypoint = asRoot
        ? Number(
            Bun.spawnSync(["pgrep", "-P", String(service.proc.pid)])
              .stdout.toString()
              .trim(),
          )
        : service.proc.pid;
      process.kill(entrypoint, "SIGTERM");
      expect(await service.proc.exited).toBe(0);
      expect(service.logs.some((line) => line.msg === "stopped")).toBe(true);
      // The database stopped too, cleanly: its control file says so.
      expect(clusterState()).toBe("shut down");
    } finally {
      service.proc.kill("SIGKILL");
    }
  }, 90_000);

  test("a service that stops by itself takes the database down with it, passing on its exit status", async () => {
    const proc = Bun.spawn(entrypointCommand(), {
      cwd: root,
      env: entrypointEnv({ PORT: "not-a-port" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await proc.exited).toBe(2);
    expect(clusterState()).toBe("shut down");
  }, 90_000);
});
