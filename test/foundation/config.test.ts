import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.ts";

describe("config", () => {
  test("defaults apply when nothing is set", () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(3000);
    expect(config.DATA_DIR).toBe(join(import.meta.dir, "../../data"));
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.LOG_LEVEL).toBe("info");
  });

  test("values are converted from strings", () => {
    expect(loadConfig({ PORT: "8080", LOG_LEVEL: "debug" })).toMatchObject({ PORT: 8080, LOG_LEVEL: "debug" });
  });

  test.each([
    ["PORT", "eighty"],
    ["PORT", "70000"],
    ["LOG_LEVEL", "loud"],
    ["DATABASE_URL", "mysql://x"],
    ["KEY_CACHE_TTL_SECONDS", "-1"],
    ["RATE_LIMIT_READ_PER_SECOND", "-1"],
    ["AGGREGATE_REFRESH_CRON", "every minute"],
  ])("an invalid %s stops start-up naming the variable", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
