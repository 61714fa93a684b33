import { afterAll } from "bun:test";
import { closeTestRuntime, testRuntime } from "./support/runtime.ts";
import { removeTempDirs } from "./support/temp-dirs.ts";

await testRuntime();
// Dropping a server database checkpoints, which takes seconds on a busy server.
afterAll(async () => {
  await closeTestRuntime();
  removeTempDirs();
}, 60_000);
