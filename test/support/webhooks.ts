import type { LookupAddress } from "node:dns";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type WebhookEventType, webhookEventData } from "../../src/modules/outbox/model.ts";
import { createWebhookSender, type WebhookSender } from "../../src/modules/webhooks/sender.ts";
import { WebhookSweeper } from "../../src/modules/webhooks/sweep.ts";
import { testRuntime } from "./runtime.ts";
import { tempDir } from "./temp-dirs.ts";

export interface TestCertificate {
  cert: string;
  key: string;
  /** The certificate as a file, for WEBHOOK_CA_FILE. */
  certFile: string;
}

let certificate: TestCertificate | undefined;

/**
 * A self-signed certificate for localhost and *.hooks.test, made once per test
 * process with the openssl command-line tool, so the receivers below speak real TLS.
 */
export function testCertificate(): TestCertificate {
  if (certificate) return certificate;
  const dir = tempDir("webhook-cert-");
  const keyFile = join(dir, "key.pem");
  const certFile = join(dir, "cert.pem");
  const made = Bun.spawnSync([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost,DNS:hooks.test,DNS:*.hooks.test",
    "-keyout",
    keyFile,
    "-out",
    certFile,
  ]);
  if (made.exitCode !== 0) {
    throw new Error(`openssl could not make a test certificate: ${made.stderr.toString()}`);
  }
  certificate = { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8"), certFile };
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  return certificate;
}

export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  /** The raw body, as the receiver must verify it. */
  body: string;
}

type Behaviour = (request: Request, body: string) => Response | Promise<Response>;

/** A real HTTPS webhook receiver (Bun.serve with TLS) on a free loopback port, recording what it gets. */
export interface TestReceiver {
  port: number;
  /** https://localhost:{port}{path} */
  url(path: string): string;
  received: ReceivedRequest[];
  /** How `path` answers from now on (200 "ok" by default). */
  on(path: string, behaviour: Behaviour): void;
  stop(): void;
}

export function startReceiver(): TestReceiver {
  const { cert, key } = testCertificate();
  const received: ReceivedRequest[] = [];
  const behaviours = new Map<string, Behaviour>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert, key },
    idleTimeout: 30,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      const body = await request.text();
      received.push({ path, headers: Object.fromEntries(request.headers), body });
      const behaviour = behaviours.get(path);
      return behaviour ? behaviour(request, body) : new Response("ok");
    },
  });
  return {
    port: server.port as number,
    url: (path) => `https://localhost:${server.port}${path}`,
    received,
    on: (path, behaviour) => behaviours.set(path, behaviour),
    stop: () => server.stop(true),
  };
}

/**
 * Resolves `localhost` and names under hooks.test to 127.0.0.1, and nothing else:
 * tests never reach the real DNS, and deliveries other tests left behind fail fast.
 */
export const testResolver = async (hostname: string): Promise<LookupAddress[]> => {
  if (hostname === "localhost" || hostname === "hooks.test" || hostname.endsWith(".hooks.test")) {
    return [{ address: "127.0.0.1", family: 4 }];
  }
  throw Object.assign(new Error(`${hostname} is not a test host`), { code: "ENOTFOUND" });
};

/** A sender that trusts the test certificate and may reach loopback, as WEBHOOK_ALLOW_LOOPBACK allows. */
export function testSender(options: { timeoutMs?: number } = {}): WebhookSender {
  return createWebhookSender({
    allowLoopback: true,
    extraCa: testCertificate().cert,
    resolveHost: testResolver,
    timeoutMs: options.timeoutMs,
  });
}

/** A settable clock, starting a little after the database's now (routes stamp times with now()). */
export function testClock(start = new Date(Date.now() + 1000)) {
  let now = start;
  return {
    now: () => now,
    set(time: Date) {
      now = time;
    },
    advance(ms: number) {
      now = new Date(now.getTime() + ms);
    },
  };
}

/** A sweeper on the shared test database with the given clock and sender. */
export async function testSweeper(options: {
  clock: () => Date;
  sender?: WebhookSender;
  concurrency?: number;
  perEndpoint?: number;
  leaseMs?: number;
}): Promise<WebhookSweeper> {
  const { ctx } = await testRuntime();
  if (!ctx.webhookSecrets) throw new Error("the test runtime has no webhook key");
  return new WebhookSweeper({
    sql: ctx.sql,
    log: ctx.log,
    secrets: ctx.webhookSecrets,
    sender: options.sender ?? testSender(),
    clock: options.clock,
    concurrency: options.concurrency ?? 8,
    perEndpoint: options.perEndpoint ?? 4,
    disableAfterMs: 5 * 24 * 60 * 60 * 1000,
    leaseMs: options.leaseMs,
  });
}

/**
 * Where an event's `data` departs from what the OpenAPI document's `webhooks`
 * promise for its type (src/modules/outbox/model.ts): empty when it matches.
 */
export function undocumentedData(type: string, data: unknown): string[] {
  const schema = webhookEventData[type as WebhookEventType];
  if (!schema) return [`${type} is not a documented event type`];
  return [
    ...[...Value.Errors(schema, data)].map((error) => `${type} data${error.path}: ${error.message}`),
    ...membersNotDocumented(schema, data, "").map((path) => `${type} data${path}: not in the documented schema`),
  ];
}

/** Object members `value` holds that `schema` does not name (TypeBox objects let them pass by default). */
function membersNotDocumented(schema: TSchema, value: unknown, path: string): string[] {
  if (schema.type !== "object" || typeof value !== "object" || value === null) return [];
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  return Object.entries(value).flatMap(([name, member]) => {
    const documented = properties[name];
    return documented ? membersNotDocumented(documented, member, `${path}/${name}`) : [`${path}/${name}`];
  });
}
