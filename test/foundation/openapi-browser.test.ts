import { afterAll, beforeAll, expect, test } from "bun:test";
import puppeteer, { type Browser } from "puppeteer-core";
import { testRuntime } from "../support/runtime.ts";

/**
 * Loads /openapi in a real Chromium (Debian's `chromium` package; no browser is
 * downloaded) with every request off the service's own address refused, so the
 * page is shown to render offline.
 */
const chromium = process.env.CHROMIUM_PATH ?? Bun.which("chromium") ?? Bun.which("chromium-browser");
const skipReason = "no chromium binary (install Debian's `chromium` or set CHROMIUM_PATH)";

let server: ReturnType<typeof Bun.serve> | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!chromium) return;
  const { app } = await testRuntime();
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => app.handle(request) });
  browser = await puppeteer.launch({ executablePath: chromium, args: ["--no-sandbox", "--headless=new"] });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop(true);
});

if (!chromium) console.warn(`skipped: the API docs browser test: ${skipReason}`);

test.skipIf(!chromium)(
  "the API docs page renders every operation offline in Chromium",
  async () => {
    if (!browser || !server) throw new Error("set-up did not start the browser");
    const origin = server.url.origin;
    const page = await browser.newPage();
    const offSite: string[] = [];
    await page.setRequestInterception(true);
    page.on("request", (request) => {
      if (new URL(request.url()).origin === origin || request.url().startsWith("data:")) return request.continue();
      offSite.push(request.url());
      return request.abort();
    });
    await page.goto(`${origin}/openapi`, { waitUntil: "networkidle0" });
    await page.waitForSelector(".opblock", { timeout: 30_000 });
    const shown = await page.$$eval(".opblock-summary-path", (paths) => paths.map((path) => path.textContent));
    const spec = (await (await fetch(`${origin}/openapi/json`)).json()) as {
      paths: Record<string, object>;
      webhooks: Record<string, object>;
    };
    // The operations, and the webhooks the service sends, each with its block.
    const operations = [...Object.values(spec.paths), ...Object.values(spec.webhooks)].reduce(
      (count: number, methods) => count + Object.keys(methods).length,
      0,
    );
    expect(shown.length).toBe(operations);
    expect(shown).toContain("/api/v1/identity/keys");
    expect(shown).toContain("delegation.created");
    expect(offSite).toEqual([]);
  },
  60_000,
);
