/**
 * Dashboard benchmark: how fast the overview renders in Chromium, served over
 * loopback by the service, for the large owner that `bench:reads` loaded.
 *
 *   DATABASE_URL=… bun run bench:dashboard [--events N] [--runs R]
 *
 * Needs the data set of `bench:reads --events N` on DATABASE_URL's server (the
 * issue-17 figure is at 20 million events) and Debian's `chromium`. Signs a new
 * member of the large owner in (a session made directly, no mail), then loads
 * /app for the last 24 hours and for 12 months R times each, after one warm-up,
 * and prints p50 and worst of: interactive (the KPI tiles shown) and complete
 * (tiles, chart and top URLs all shown); then the size of the script it served.
 */
import { parseArgs } from "node:util";
import puppeteer from "puppeteer-core";
import { createApp } from "../src/app.ts";
import { progressLine } from "../src/cli/progress.ts";
import { loadConfig } from "../src/config.ts";
import { rateLimitsOff } from "../src/http/rate-limit.ts";
import { createLogger } from "../src/log.ts";
import { createSession } from "../src/modules/auth/sessions.ts";
import { findOrCreateUser } from "../src/modules/auth/users.ts";
import { addMember } from "../src/modules/organizations/service.ts";
import { startRuntime } from "../src/runtime.ts";
import { failInOneLine, numberOption } from "./cli.ts";

failInOneLine();
const { values } = parseArgs({
  options: { events: { type: "string", default: "20000000" }, runs: { type: "string", default: "5" } },
});
const runs = numberOption(values, "runs", 1);
const chromium = process.env.CHROMIUM_PATH ?? Bun.which("chromium") ?? Bun.which("chromium-browser");
if (!process.env.DATABASE_URL || !chromium) {
  console.error("bench:dashboard needs DATABASE_URL (with the bench:reads data set) and Debian's chromium");
  process.exit(2);
}

const config = loadConfig({ ...process.env, ...rateLimitsOff, LOG_LEVEL: "error" });
const { ctx, db } = await startRuntime(config, createLogger("error"), { inMemory: false });
const bigDomain = `big-e${values.events}.example.com`;
const [owner] = await ctx.sql<{ org_id: string }[]>`
  SELECT org_id FROM domains WHERE domain = ${bigDomain} AND state = 'verified'`;
if (!owner) {
  console.error(`no data set for ${bigDomain}: run bench:reads --events ${values.events} on this database first`);
  await db.close();
  process.exit(2);
}
const user = await findOrCreateUser(ctx.sql, `dashboard-bench-${crypto.randomUUID()}@bench.test`);
await addMember(ctx.sql, owner.org_id, user.id, "member");
const session = await createSession(ctx.sql, user.id, 1);

const app = createApp(ctx);
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => app.handle(request) });
const browser = await puppeteer.launch({ executablePath: chromium, args: ["--no-sandbox", "--headless=new"] });
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 900 });
await page.setCookie({ name: "svc_session", value: session.token, domain: "127.0.0.1", path: "/", httpOnly: true });

/** Milliseconds from navigation to the tiles, and to everything, for one load of `range`. */
async function load(range: string): Promise<{ interactive: number; complete: number }> {
  await page.goto(`${server.url.origin}/app?org=${owner?.org_id}&range=${range}`, { waitUntil: "domcontentloaded" });
  await page.waitForSelector("[data-kpi=Sessions]", { timeout: 60_000 });
  const interactive = await page.evaluate(() => performance.now());
  // Page code as text: this project's types have no DOM (web/ has its own tsconfig).
  await page.waitForFunction(
    `document.querySelector(".uplot canvas, .chart .muted") !== null &&
     document.querySelector("td.url") !== null &&
     document.querySelectorAll("[aria-busy=true]").length === 0`,
    { timeout: 60_000 },
  );
  const complete = await page.evaluate(() => performance.now());
  if (await page.$(".error"))
    throw new Error(`the overview showed an error: ${await page.$eval(".error", (e) => e.textContent)}`);
  return { interactive, complete };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] as number;
console.log(`database: ${ctx.db.kind}; owner ${bigDomain}; ${runs} loads each after one warm-up\n`);
console.log("| overview | interactive p50 ms | complete p50 ms | complete worst ms |");
console.log("|---|---:|---:|---:|");
const progress = progressLine();
for (const range of ["24h", "12m"]) {
  progress.show(`loading the ${range} overview`);
  await load(range);
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await load(range));
  const complete = times.map((t) => t.complete);
  progress.clear();
  console.log(
    `| ${range} | ${median(times.map((t) => t.interactive)).toFixed(0)} | ${median(complete).toFixed(0)} | ${Math.max(...complete).toFixed(0)} |`,
  );
}
const script = await (await fetch(`${server.url.origin}/app/assets/app.js`)).text();
console.log(
  `\nscript: ${(script.length / 1024).toFixed(1)} KB, ${(Bun.gzipSync(script).length / 1024).toFixed(1)} KB gzipped (first-load budget 250 KB gzipped)`,
);
await browser.close();
await server.stop(true);
await db.close();
