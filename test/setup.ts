import { afterAll } from "bun:test";
import { closeTestRuntime, testRuntime } from "./support/runtime.ts";

await testRuntime();
// Dropping a server database checkpoints, which takes seconds on a busy server.
afterAll(closeTestRuntime, 60_000);
