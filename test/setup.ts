import { afterAll } from "bun:test";
import { closeTestRuntime, testRuntime } from "./support/runtime.ts";

await testRuntime();
// Dropping a server database waits for its TimescaleDB background workers to stop.
afterAll(closeTestRuntime, 30_000);
