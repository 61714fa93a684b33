import { afterAll } from "bun:test";
import { closeTestRuntime, testRuntime } from "./support/runtime.ts";

await testRuntime();
afterAll(closeTestRuntime);
