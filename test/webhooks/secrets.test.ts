import { describe, expect, test } from "bun:test";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { decodeSecretBoxKey, SecretBox } from "../../src/core/secret-box.ts";
import { createLogger } from "../../src/log.ts";
import { loadWebhookSecretBox, secretKeyFileName } from "../../src/modules/webhooks/secret-key.ts";
import { recordingLogger } from "../support/logs.ts";
import { tempDir } from "../support/temp-dirs.ts";
import { testCertificate } from "../support/webhooks.ts";

const quiet = createLogger("error");
const key = () => crypto.getRandomValues(new Uint8Array(32));

describe("SecretBox (AES-256-GCM)", () => {
  test("opens what it sealed for the same row, and nothing else", () => {
    const box = new SecretBox(key());
    const sealed = box.seal("whsec_abc", "row-1");
    expect(box.open(sealed, "row-1")).toBe("whsec_abc");
    expect(Buffer.from(sealed).includes(Buffer.from("whsec_abc"))).toBe(false);
    // A fresh nonce each time: the same secret never seals the same way twice.
    expect(Buffer.from(box.seal("whsec_abc", "row-1")).equals(Buffer.from(sealed))).toBe(false);
    expect(() => box.open(sealed, "row-2")).toThrow();
    expect(() => new SecretBox(key()).open(sealed, "row-1")).toThrow();
    const tampered = Buffer.from(sealed);
    tampered[20] = (tampered[20] as number) ^ 1;
    expect(() => box.open(tampered, "row-1")).toThrow();
    expect(() => box.open(new Uint8Array(10), "row-1")).toThrow("not a sealed value");
  });

  test("a key id names the key without revealing it", () => {
    const raw = key();
    expect(new SecretBox(raw).keyId).toBe(new SecretBox(raw).keyId);
    expect(new SecretBox(raw).keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(new SecretBox(key()).keyId).not.toBe(new SecretBox(raw).keyId);
    expect(() => new SecretBox(new Uint8Array(16))).toThrow();
  });

  test("keys are read as base64 or base64url of exactly 32 bytes", () => {
    const raw = key();
    expect(decodeSecretBoxKey(Buffer.from(raw).toString("base64"))).toEqual(raw);
    expect(decodeSecretBoxKey(Buffer.from(raw).toString("base64url"))).toEqual(raw);
    expect(decodeSecretBoxKey(`${Buffer.from(raw).toString("base64")}\n`)).toEqual(raw);
    expect(decodeSecretBoxKey(Buffer.from(new Uint8Array(31)).toString("base64"))).toBeNull();
    expect(decodeSecretBoxKey("not a key")).toBeNull();
  });
});

describe("the webhook secret key", () => {
  test("WEBHOOK_SECRET_KEY is used when set, on either engine", () => {
    const raw = key();
    const configured = Buffer.from(raw).toString("base64");
    for (const kind of ["embedded", "server"] as const) {
      const box = loadWebhookSecretBox(
        { WEBHOOK_SECRET_KEY: configured, DATA_DIR: "/nonexistent" },
        { kind, inMemory: false },
        quiet,
      );
      expect(box?.keyId).toBe(new SecretBox(raw).keyId);
    }
  });

  test("the embedded default generates a key into DATA_DIR once (mode 0600), then reads it", () => {
    const dir = tempDir("webhook-key-");
    try {
      const log = recordingLogger();
      const first = loadWebhookSecretBox({ DATA_DIR: dir }, { kind: "embedded", inMemory: false }, log);
      const file = join(dir, secretKeyFileName);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(decodeSecretBoxKey(readFileSync(file, "utf8"))).not.toBeNull();
      expect(log.lines.some((l) => l.level === "info" && l.msg.includes("generated"))).toBe(true);
      const second = loadWebhookSecretBox({ DATA_DIR: dir }, { kind: "embedded", inMemory: false }, quiet);
      expect(second?.keyId).toBe(first?.keyId as string);
      const sealed = (first as SecretBox).seal("whsec_x", "row");
      expect((second as SecretBox).open(sealed, "row")).toBe("whsec_x");

      writeFileSync(file, "garbage\n");
      expect(() => loadWebhookSecretBox({ DATA_DIR: dir }, { kind: "embedded", inMemory: false }, quiet)).toThrow(
        ConfigError,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("an in-memory engine gets a key of its own; a server without the setting has none, and says so", () => {
    const memory = loadWebhookSecretBox({ DATA_DIR: "/nonexistent" }, { kind: "embedded", inMemory: true }, quiet);
    expect(memory).toBeInstanceOf(SecretBox);
    const log = recordingLogger();
    expect(
      loadWebhookSecretBox({ DATA_DIR: "/nonexistent" }, { kind: "server", inMemory: false }, log),
    ).toBeUndefined();
    expect(log.lines).toEqual([{ level: "warn", msg: expect.stringContaining("set WEBHOOK_SECRET_KEY") }]);
  });
});

describe("webhook configuration", () => {
  test("defaults", () => {
    expect(loadConfig({})).toMatchObject({
      WEBHOOK_SWEEP_CRON: "*/5 * * * * *",
      WEBHOOK_CONCURRENCY: 32,
      WEBHOOK_ENDPOINT_CONCURRENCY: 4,
      WEBHOOK_SECRET_OVERLAP_HOURS: 24,
      WEBHOOK_DISABLE_AFTER_DAYS: 5,
      WEBHOOK_RETENTION_DAYS: 30,
      WEBHOOK_ALLOW_LOOPBACK: false,
    });
    expect(loadConfig({}).WEBHOOK_SECRET_KEY).toBeUndefined();
  });

  test.each([
    ["WEBHOOK_SECRET_KEY", "short"],
    ["WEBHOOK_SECRET_KEY", Buffer.from(new Uint8Array(24)).toString("base64").padEnd(44, "A")],
    ["WEBHOOK_SWEEP_CRON", "every five seconds"],
    ["WEBHOOK_CONCURRENCY", "0"],
    ["WEBHOOK_ALLOW_LOOPBACK", "maybe"],
    ["WEBHOOK_CA_FILE", "/nonexistent/ca.pem"],
  ])("an invalid %s stops start-up naming the variable", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  test("WEBHOOK_CA_FILE must hold a PEM certificate", () => {
    const dir = tempDir("webhook-ca-");
    try {
      const notPem = join(dir, "ca.txt");
      writeFileSync(notPem, "hello");
      expect(() => loadConfig({ WEBHOOK_CA_FILE: notPem })).toThrow("WEBHOOK_CA_FILE holds no PEM certificate");
      expect(loadConfig({ WEBHOOK_CA_FILE: testCertificate().certFile }).WEBHOOK_CA_FILE).toBe(
        testCertificate().certFile,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
