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

  test.each([
    "postgres://u:p@h1:5432,h2:5432/db",
    "postgres:///db?host=/var/run/postgresql",
    "postgres://u:p%40ss@[::1]:5432/db",
    "postgresql://u@db.example.internal/telemetry?sslmode=require",
  ])("a DATABASE_URL postgres.js takes is taken: %s", (url) => {
    expect(loadConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
  });

  test("cron patterns are read in UTC whatever the process's time zone", () => {
    // A zone 5:30 from UTC: read there, 0 3 * * * would fire at 21:30 UTC.
    const run = Bun.spawnSync(
      [
        process.execPath,
        "-e",
        `import { scheduleJob } from "${join(import.meta.dir, "../../src/jobs/schedule.ts")}";
         const job = scheduleJob({ sql: null, log: { child: () => null } }, "probe", "0 3 * * *", async () => {});
         console.log(job.nextRun().toISOString().slice(11, 16)); job.stop();`,
      ],
      { env: { ...process.env, TZ: "Asia/Kolkata" } },
    );
    expect(run.stdout.toString().trim()).toBe("03:00");
  });

  test("operator admins and the sender are e-mail addresses, written as people write them", () => {
    const config = loadConfig({
      OPERATOR_ADMIN_EMAILS: " a@example.org, ,b@example.org ",
      MAIL_FROM: "Ops <ops@example.org>",
    });
    expect([config.OPERATOR_ADMIN_EMAILS, config.MAIL_FROM]).toEqual([
      " a@example.org, ,b@example.org ",
      "Ops <ops@example.org>",
    ]);
    expect(loadConfig({ MAIL_FROM: "ops@example.org" }).MAIL_FROM).toBe("ops@example.org");
    expect(loadConfig({ MAIL_FROM: "ops@example.org (Operations)" }).MAIL_FROM).toBe("ops@example.org (Operations)");
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
    ["RATE_LIMIT_READ_PER_SECOND", "2.5"],
    ["SHUTDOWN_GRACE_SECONDS", "2.9"],
    ["DATABASE_POOL_SIZE", "1e1"],
    ["INGEST_QUEUE", "0x10"],
    ["DATABASE_URL", "postgres://user:pw@[bad/x"],
    ["PUBLIC_INGEST_URL", "http://a b"],
    ["OPERATOR_ADMIN_EMAILS", "admin@example.org,not an email,,@"],
    ["MAIL_FROM", "nobody"],
    // Patterns that parse but never come round: their jobs would never run.
    ["WEBHOOK_PURGE_CRON", "0 0 30 2 *"],
    ["SIGN_IN_PURGE_CRON", "0 0 0 1 1 * 2020"],
  ])("an invalid %s stops start-up naming the variable", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  test.each([
    ["LOG_LEVEL", "verbose", "LOG_LEVEL must be one of debug, info, warn, error"],
    ["SESSION_COOKIE_SECURE", "maybe", "SESSION_COOKIE_SECURE must be true or false (or 1 or 0)"],
    ["MAGIC_LINK_TTL_MINUTES", "90", "MAGIC_LINK_TTL_MINUTES must be a whole number from 1 to 60"],
    ["WEBHOOK_SECRET_KEY", "short", "WEBHOOK_SECRET_KEY must be 32 random bytes, base64 (openssl rand -base64 32)"],
    ["PUBLIC_BASE_URL", "https://example.org/app", "PUBLIC_BASE_URL must be an origin: http:// or https://"],
    // postgres.js threw a URIError, with its stack, on a % that is no escape.
    ["DATABASE_URL", "postgres://svc:50%off@db/telemetry", "DATABASE_URL has a % not followed by two hex digits"],
  ])("an invalid %s says what it takes", (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  test("an origin written with a trailing slash is taken without it", () => {
    expect(loadConfig({ PUBLIC_BASE_URL: "https://telemetry.example.org/" }).PUBLIC_BASE_URL).toBe(
      "https://telemetry.example.org",
    );
  });

  test.each([
    ["DATABASE_URL", "mysql://user:hunter2@127.0.0.1/db"],
    ["DATABASE_URL", "postgres://user:hunter2@[bad/x"],
    ["SMTP_URL", "http://user:hunter2@mail"],
    ["WEBHOOK_SECRET_KEY", "hunter2"],
    ["DATABASE_URL", "postgres://user:hunter2%@127.0.0.1/db"],
  ])("an invalid %s is named without its value, which may hold a secret", (name, value) => {
    const message = (() => {
      try {
        loadConfig({ [name]: value });
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toContain(name);
    expect(message).not.toContain("hunter2");
  });
});
