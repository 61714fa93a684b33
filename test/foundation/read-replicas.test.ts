import { expect, test } from "bun:test";
import { freePort } from "../../bench/free-port.ts";
import { ReadReplicas } from "../../src/db/replicas.ts";
import { recordingLogger } from "../support/logs.ts";
import { testRuntime } from "../support/runtime.ts";

// Replicas in action, on real streaming replication: test/faults/read-replica.test.ts.
test("a replica that cannot be reached at start is named in a warning, and reads go to the primary", async () => {
  const { ctx } = await testRuntime();
  const log = recordingLogger();
  const unreachable = `postgres://postgres@127.0.0.1:${await freePort()}/svc`;
  const replicas = new ReadReplicas(ctx.sql, [unreachable], 1, 5, log);
  try {
    await replicas.start();
    expect(log.lines.filter((line) => line.level === "warn")).toEqual([
      {
        level: "warn",
        msg: "read replica not usable at start: reads go to the primary until it keeps up",
        fields: { replica: 1, max_lag_seconds: 5 },
      },
    ]);
    // Named by position: the URL may hold a password.
    expect(log.text()).not.toContain(unreachable);
    const target = replicas.pick();
    expect(target.sql).toBe(ctx.sql);
    expect(target.replica).toBeUndefined();
  } finally {
    await replicas.close();
  }
});

test("without replicas every read goes to the primary, as of the moment it is picked", async () => {
  const { ctx } = await testRuntime();
  const before = Date.now();
  const target = ctx.readReplicas.pick();
  expect(target.sql).toBe(ctx.sql);
  expect(target.asOf.getTime()).toBeGreaterThanOrEqual(before);
});
