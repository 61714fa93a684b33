import { describe, expect, test } from "bun:test";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { progressLine } from "../../src/cli/progress.ts";

const benchDir = join(import.meta.dir, "../../bench");

/** A stand-in for stderr that keeps what is written to it. */
function stream(isTTY: boolean) {
  const written: string[] = [];
  return { isTTY, written, write: (text: string) => written.push(text) };
}

describe("a bench's progress", () => {
  test("on a terminal, each line takes the place of the one before, and is cleared before the report goes on", () => {
    const terminal = stream(true);
    const progress = progressLine(terminal);
    progress.show("loading: 10 / 20 events");
    progress.show("loading: 20 / 20");
    progress.clear();
    expect(terminal.written).toEqual([
      "\rloading: 10 / 20 events",
      "\rloading: 20 / 20       ",
      `\r${" ".repeat(16)}\r`,
    ]);
  });

  test("to a file or a pipe, a line of its own now and then, never carriage returns", () => {
    const file = stream(false);
    let clock = 0;
    const progress = progressLine(file, 10_000, () => clock);
    progress.show("loading: 10 / 40 events");
    clock = 9_999;
    progress.show("loading: 20 / 40 events");
    clock = 10_000;
    progress.show("loading: 30 / 40 events");
    clock = 15_000;
    progress.show("loading: 40 / 40 events");
    progress.clear();
    expect(file.written).toEqual(["loading: 10 / 40 events\n", "loading: 30 / 40 events\n"]);
  });

  test("every bench shows its progress through progressLine, never as its own carriage returns or on stdout", async () => {
    const benches = (await readdir(benchDir)).filter((name) => name.endsWith(".ts"));
    const own: string[] = [];
    for (const name of benches) {
      const text = await Bun.file(join(benchDir, name)).text();
      if (text.includes("\\r")) own.push(`${name}: writes carriage returns itself`);
      if (/console\.log\([^;]*\/s\)/.test(text) && /setInterval|Bun\.sleep\(1000\)/.test(text)) {
        own.push(`${name}: prints a rate each second on stdout`);
      }
    }
    expect(own).toEqual([]);
  });
});

describe("a bench called wrongly or failing", () => {
  const benchNamed = (name: string, args: string[], env: Record<string, string> = {}) =>
    Bun.spawn(["bun", join(benchDir, name), ...args], {
      env: { ...process.env, ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
  const benchReads = (args: string[], env: Record<string, string> = {}) => benchNamed("reads.ts", args, env);

  test("a count that is no whole number is refused in one line (exit 2), not taken as NaN or a fraction", async () => {
    for (const given of ["abc", "1.5", "0x10", ""]) {
      const bench = benchReads(["--events", given]);
      expect(await bench.exited).toBe(2);
      expect(await new Response(bench.stdout).text()).toBe("");
      expect(await new Response(bench.stderr).text()).toBe(
        `error: --events must be a whole number at least 1, not ${JSON.stringify(given)}\n`,
      );
    }
  }, 60_000);

  test("bench:identity's count of requests, given as its one argument, is checked the same way", async () => {
    const bench = benchNamed("identity.ts", ["1.5"]);
    expect(await bench.exited).toBe(2);
    expect(await new Response(bench.stderr).text()).toBe(
      'error: --requests must be a whole number at least 1, not "1.5"\n',
    );
  }, 60_000);

  test("bench:webhooks refuses endpoints it cannot split into organisations, as bad input (exit 2)", async () => {
    const bench = benchNamed("webhooks.ts", ["--endpoints", "15"]);
    expect(await bench.exited).toBe(2);
    expect(await new Response(bench.stderr).text()).toBe("error: --endpoints must be a multiple of 10, not 15\n");
  }, 60_000);

  test("a database it cannot reach is said in one line (exit 1), not a stack trace", async () => {
    const bench = benchReads(["--events", "10"], {
      DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
      DATABASE_CONNECT_WAIT_SECONDS: "1",
    });
    expect(await bench.exited).toBe(1);
    expect(await new Response(bench.stdout).text()).toBe("");
    expect(await new Response(bench.stderr).text()).toMatch(/^error: cannot reach the database at [^\n]+\n$/);
  }, 60_000);
});
