import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startScriptEnv } from "../../bench/start-script.ts";

const root = join(import.meta.dir, "../..");

/**
 * The `NAME=value` pairs of the ENV instructions of the Dockerfile's last stage (the
 * image that runs), continuation lines included.
 */
async function imageEnv(): Promise<Record<string, string>> {
  const text = (await Bun.file(join(root, "Dockerfile")).text()).replaceAll("\\\n", " ");
  const lastStage = text.slice(text.lastIndexOf("\nFROM "));
  const env: Record<string, string> = {};
  for (const line of lastStage.split("\n")) {
    if (!line.startsWith("ENV ")) continue;
    for (const [, name, value] of line.slice(4).matchAll(/([A-Z_][A-Z0-9_]*)=(\S*)/g)) {
      env[name as string] = value as string;
    }
  }
  return env;
}

describe("the service's start-up settings", () => {
  test("the start script's leading NAME=value words are its settings; they end at the command", () => {
    expect(startScriptEnv("A=1 B_2= bun src/main.ts C=3")).toEqual({ A: "1", B_2: "" });
    expect(startScriptEnv("bun src/main.ts")).toEqual({});
    expect(() => startScriptEnv('A="1" bun src/main.ts')).toThrow('start script: A="1" is not a plain NAME=value');
  });

  test("the running image sets what `bun run start` sets (the allocator's purging)", async () => {
    const started = startScriptEnv();
    expect(started).toHaveProperty("MIMALLOC_PURGE_HOLES");
    const image = await imageEnv();
    for (const [name, value] of Object.entries(started)) expect({ name, value: image[name] }).toEqual({ name, value });
  });
});
