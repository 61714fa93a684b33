/**
 * Latency of the identity control plane's hot paths through the real app and an
 * in-memory embedded database: session authentication, key-authenticated reads
 * and the public /resolve. Run: `bun bench/identity.ts [requests-per-case]` (or
 * `--requests N`).
 */
import { parseArgs } from "node:util";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { rateLimitsOff } from "../src/http/rate-limit.ts";
import { createLogger } from "../src/log.ts";
import { registerDomain, verifyDomain } from "../src/modules/domains/service.ts";
import { createApiKey } from "../src/modules/keys/service.ts";
import { addMember, createOrganization } from "../src/modules/organizations/service.ts";
import { startRuntime } from "../src/runtime.ts";
import { numberOption } from "./cli.ts";

const { values, positionals } = parseArgs({
  options: { requests: { type: "string", default: "300" } },
  allowPositionals: true,
});
// `bench:identity 50` as documented, or `--requests 50`.
const requests = numberOption({ requests: positionals[0] ?? values.requests }, "requests", 1);
// Raw links in the outbox: the bench signs in with the one it asks for.
const config = loadConfig({ ...rateLimitsOff, LOG_LEVEL: "error", MAIL_OUTBOX_RAW_LINKS: "true" });
const { ctx, db } = await startRuntime(config, createLogger("error"), { inMemory: true });
const app = createApp(ctx);

const send = (path: string, headers: Record<string, string> = {}, init: RequestInit = {}) =>
  app.handle(new Request(`http://bench.local${path}`, { headers, ...init }));

const org = await createOrganization(ctx.sql, { name: "Bench", orgType: "content_owner" });
await registerDomain(ctx.sql, org.id, "bench.example.com");
await verifyDomain(ctx.sql, org.id, "bench.example.com", "operator");
const { key } = await createApiKey(ctx.sql, { orgId: org.id, scopes: ["identity:read"] });

await send(
  "/api/v1/identity/auth/magic-link",
  { "content-type": "application/json" },
  {
    method: "POST",
    body: JSON.stringify({ email: "bench@people.test" }),
  },
);
const [mail] = await ctx.sql<{ link: string }[]>`SELECT link FROM mail_outbox ORDER BY created_at DESC LIMIT 1`;
const token = new URL(mail?.link ?? "").searchParams.get("token") ?? "";
const verified = await send(
  "/api/v1/identity/auth/magic-link/verify",
  { "content-type": "application/json" },
  { method: "POST", body: JSON.stringify({ token }) },
);
const signedIn = (await verified.json()) as {
  session_token: string;
  user: { id: string };
};
const session = signedIn.session_token;
await addMember(ctx.sql, org.id, signedIn.user.id, "owner");

async function measure(name: string, run: () => Promise<Response>) {
  for (let i = 0; i < 20; i++) await (await run()).arrayBuffer();
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < requests; i++) {
    const t0 = performance.now();
    const res = await run();
    await res.arrayBuffer();
    if (res.status >= 400) throw new Error(`${name}: status ${res.status}`);
    times.push(performance.now() - t0);
  }
  const total = performance.now() - started;
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]?.toFixed(2);
  console.log(
    `${name.padEnd(44)} n=${requests}  p50=${pct(50)} ms  p95=${pct(95)} ms  ${(requests / (total / 1000)).toFixed(0)} req/s (sequential)`,
  );
}

await measure("GET /auth/session (Bearer session)", () =>
  send("/api/v1/identity/auth/session", { authorization: `Bearer ${session}` }),
);
await measure("GET /keys (session, org_id)", () =>
  send(`/api/v1/identity/keys?org_id=${org.id}`, { authorization: `Bearer ${session}` }),
);
await measure("GET /keys (API key, cached)", () => send("/api/v1/identity/keys", { "x-api-key": key }));
await measure("GET /resolve?url= (subdomain of a verified domain)", () =>
  send(`/resolve?url=${encodeURIComponent("https://news.bench.example.com/a")}`),
);
await measure("POST /auth/magic-link (development mailer)", () =>
  send(
    "/api/v1/identity/auth/magic-link",
    { "content-type": "application/json" },
    {
      method: "POST",
      body: JSON.stringify({ email: `bench-${crypto.randomUUID()}@people.test` }),
    },
  ),
);
await db.close();
