import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startScriptEnv } from "../../bench/start-script.ts";

const root = join(import.meta.dir, "../..");

/** The `NAME=value` pairs of the Dockerfile's ENV instructions, continuation lines included. */
async function dockerfileEnv(): Promise<Record<string, string>> {
  const text = (await Bun.file(join(root, "Dockerfile")).text()).replace(/\\\n/g, " ");
  const env: Record<string, string> = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith("ENV ")) continue;
    for (const [, name, value] of line.slice(4).matchAll(/([A-Z_][A-Z0-9_]*)=(\S*)/g))
      env[name as string] = value ?? "";
  }
  return env;
}

describe("the service's start-up settings", () => {
  test("the start script's leading assignments are read as the benches add them", () => {
    expect(startScriptEnv("A=1 B_2= bun src/main.ts C=3")).toEqual({ A: "1", B_2: "" });
    expect(startScriptEnv("bun src/main.ts")).toEqual({});
  });

  test("the container sets what `bun run start` sets (the allocator's purging)", async () => {
    const started = startScriptEnv();
    expect(started).toHaveProperty("MIMALLOC_PURGE_HOLES");
    const image = await dockerfileEnv();
    for (const [name, value] of Object.entries(started)) expect({ name, value: image[name] }).toEqual({ name, value });
  });
});
