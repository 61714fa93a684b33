import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdir } from "node:fs/promises";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { publishTxt } from "../support/domain-probe.ts";
import { createTestOrg, type TestOrg, uniqueDomain } from "../support/fixtures.ts";
import {
  callIdentity,
  identityTestApp,
  memberOf,
  type SignedInUser,
  signIn,
  signInOperatorAdmin,
  uniqueEmail,
} from "../support/identity.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

/**
 * The dashboard in a real Chromium (Debian's `chromium`; nothing is downloaded),
 * every request off the service's own address refused. DASHBOARD_SCREENSHOTS=<dir>
 * keeps screenshots there (docs/ holds the current ones).
 */
const chromium = process.env.CHROMIUM_PATH ?? Bun.which("chromium") ?? Bun.which("chromium-browser");
const screenshots = process.env.DASHBOARD_SCREENSHOTS;

let server: ReturnType<typeof Bun.serve> | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!chromium) return;
  const { app } = await identityTestApp();
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => app.handle(request) });
  browser = await puppeteer.launch({ executablePath: chromium, args: ["--no-sandbox", "--headless=new"] });
  if (screenshots) await mkdir(screenshots, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop(true);
});

if (!chromium) console.warn("skipped: the dashboard browser tests: no chromium binary (install Debian's `chromium`)");

const origin = () => (server as NonNullable<typeof server>).url.origin;

/** A page that may talk to the service only, signed in as `user` when given. */
async function openPage(
  user?: SignedInUser,
  width = 1200,
): Promise<{ page: Page; offSite: string[]; errors: string[] }> {
  const page = await (browser as Browser).newPage();
  await page.setViewport({ width, height: 900 });
  const offSite: string[] = [];
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    if (new URL(request.url()).origin === origin() || request.url().startsWith("data:")) return request.continue();
    offSite.push(request.url());
    return request.abort();
  });
  if (user) {
    const { hostname, port } = new URL(origin());
    await page.setCookie({ name: "svc_session", value: user.session, domain: hostname, path: "/", httpOnly: true });
    void port;
  }
  return { page, offSite, errors };
}

const textOf = (page: Page, selector: string) => page.$eval(selector, (element) => element.textContent ?? "");

async function shot(page: Page, name: string) {
  if (screenshots) await page.screenshot({ path: `${screenshots}/${name}.png`, fullPage: true });
}

describe.skipIf(!chromium)("the dashboard in Chromium", () => {
  test("signed out, it offers sign-in by email link and says where the link goes", async () => {
    const { page, offSite, errors } = await openPage();
    await page.goto(`${origin()}/app`);
    await page.waitForSelector("#email");
    await page.type("#email", `someone-${crypto.randomUUID()}@example.org`);
    await page.click("button[type=submit]");
    await page.waitForSelector(".notice");
    expect(await textOf(page, ".notice")).toContain("bun run cli mail list");
    expect({ offSite, errors }).toEqual({ offSite: [], errors: [] });
    await page.close();
  }, 60_000);

  test("an owner mints a key, sends events with it, and sees them in the tiles, the chart and top URLs", async () => {
    const owner: TestOrg = await createTestOrg();
    const user = await memberOf(owner.id, "owner");
    const { page, offSite, errors } = await openPage(user);

    await page.goto(`${origin()}/app?org=${owner.id}&view=keys`);
    await page.waitForSelector("#key-name");
    await page.type("#key-name", "browser test emitter");
    await page.click("form.card button[type=submit]");
    await page.waitForSelector("#raw-key");
    const key = await textOf(page, "#raw-key");
    expect(key).toMatch(/^svc_/);
    await shot(page, "dashboard-keys");

    const session = crypto.randomUUID();
    const domain = owner.domain as string;
    const events = [
      validEvents.retrieved(domain),
      validEvents.retrieved(domain, { content_url: `https://${domain}/other` }),
      validEvents.grounded(domain, { session_id: session }),
    ];
    const sent = await fetch(`${origin()}/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify(batch(events)),
    });
    expect(sent.status).toBe(200);

    await page.goto(`${origin()}/app?org=${owner.id}&view=overview&range=24h`);
    await page.waitForSelector("[data-kpi=Retrievals]");
    expect(await textOf(page, "[data-kpi=Retrievals]")).toBe("2");
    expect(await textOf(page, "[data-kpi=Groundings]")).toBe("1");
    expect(await textOf(page, "[data-kpi=Sessions]")).toBe("1");
    await page.waitForSelector(".uplot canvas");
    await page.waitForSelector("td.url");
    const urls = await page.$$eval("td.url", (cells) => cells.map((cell) => cell.textContent));
    expect(urls).toEqual([`https://${domain}/article`, `https://${domain}/other`]);
    await shot(page, "dashboard-overview");

    // The range lives in the URL: a reload shows the same view.
    await page.reload();
    await page.waitForSelector("[data-kpi=Retrievals]");
    expect(await page.$eval("#range", (select) => (select as unknown as { value: string }).value)).toBe("24h");
    expect({ offSite, errors }).toEqual({ offSite: [], errors: [] });
    await page.close();
  }, 60_000);

  test("a new user creates an owner, verifies its domain by DNS, and grants a partner, who then reads the owner's data as the owner sees it", async () => {
    const user = await signIn();
    const { page, offSite, errors } = await openPage(user);
    await page.goto(`${origin()}/app`);
    await page.waitForSelector("#org-name");
    const domain = uniqueDomain("journey");
    await page.type("#org-name", "Journey News");
    await page.type("#org-domain", domain);
    await page.click("form.card button[type=submit]");
    await page.waitForSelector(`[data-domain="${domain}"] code`);
    // Publish the TXT record the page asks for, then check it from the page.
    const [name, value] = await page.$$eval(`[data-domain="${domain}"] li:first-child code`, (codes) =>
      codes.map((code) => code.textContent ?? ""),
    );
    publishTxt(name as string, [value as string]);
    await shot(page, "dashboard-domains");
    await page.click(`[data-domain="${domain}"] li:first-child button`);
    await page.waitForSelector(`[data-domain="${domain}"] .badge.verified`);
    const ownerId = new URL(page.url()).searchParams.get("org") as string;

    // The owner's data: one retrieval on its domain, reported by the partner.
    const partner = await createTestOrg({ type: "platform" });
    const sent = await fetch(`${origin()}/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": partner.key },
      body: JSON.stringify(batch([validEvents.retrieved(domain)])),
    });
    expect(sent.status).toBe(200);

    await page.goto(`${origin()}/app?org=${ownerId}&view=delegations`);
    await page.waitForSelector("#grantee");
    await page.type("#grantee", partner.id);
    await page.click("form.card button[type=submit]");
    await page.waitForSelector("td code");
    expect(await textOf(page, "td code")).toBe(partner.id);

    const partnerUser = await memberOf(partner.id, "member");
    const partnerPage = await openPage(partnerUser);
    await partnerPage.page.goto(`${origin()}/app?org=${partner.id}&view=delegations`);
    await partnerPage.page.waitForSelector("td button");
    await partnerPage.page.click("td button");
    await partnerPage.page.waitForSelector("[data-kpi=Retrievals]");
    expect(await textOf(partnerPage.page, "[data-kpi=Retrievals]")).toBe("1");
    expect(await textOf(partnerPage.page, ".notice code")).toBe(ownerId);
    expect(new URL(partnerPage.page.url()).searchParams.get("as")).toBe(ownerId);
    await shot(partnerPage.page, "dashboard-partner");
    expect({ offSite, errors, partnerErrors: partnerPage.errors }).toEqual({
      offSite: [],
      errors: [],
      partnerErrors: [],
    });
    await partnerPage.page.close();
    await page.close();
  }, 60_000);

  test("an owner invites a member, changes a settings flag and creates a webhook endpoint whose secret is shown once", async () => {
    const owner = await createTestOrg();
    const user = await memberOf(owner.id, "owner");
    const { page, errors } = await openPage(user);
    await page.goto(`${origin()}/app?org=${owner.id}&view=members`);
    await page.waitForSelector("#invite-email");
    const invited = uniqueEmail("invited");
    await page.type("#invite-email", invited);
    await page.select("#invite-role", "admin");
    await page.click("form.card:has(#invite-email) button[type=submit]");
    await page.waitForFunction(`document.body.textContent.includes(${JSON.stringify(invited)})`);
    await page.waitForSelector("input[name=visible_in_click_token_lookups]");
    await page.click("input[name=visible_in_click_token_lookups]");
    await Promise.all([
      page.waitForResponse((response) => response.request().method() === "PATCH" && response.ok()),
      page.click("form.card:has(input[name=visible_in_click_token_lookups]) button[type=submit]"),
    ]);
    await page.reload();
    await page.waitForSelector("input[name=visible_in_click_token_lookups]");
    expect(
      await page.$eval(
        "input[name=visible_in_click_token_lookups]",
        (box) => (box as unknown as { checked: boolean }).checked,
      ),
    ).toBe(true);
    await shot(page, "dashboard-members");

    await page.goto(`${origin()}/app?org=${owner.id}&view=webhooks`);
    await page.waitForSelector("#webhook-url");
    await page.type("#webhook-url", "https://hooks.example.org/content-telemetry");
    await page.click("form.card button[type=submit]");
    await page.waitForSelector("#webhook-secret");
    expect((await textOf(page, "#webhook-secret")).length).toBeGreaterThan(20);
    await page.waitForSelector("article.card h3");
    expect(await textOf(page, "article.card h3")).toBe("https://hooks.example.org/content-telemetry");
    await page.reload();
    await page.waitForSelector("article.card h3");
    expect(await page.$("#webhook-secret")).toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("an operator admin approves an access request with a note and sees the new organisation listed", async () => {
    const requester = await signIn();
    const name = `Requested ${crypto.randomUUID().slice(0, 8)}`;
    const filed = await callIdentity("POST", "/api/v1/identity/platform-access-requests", {
      session: requester.session,
      body: { org_name: name, admin_email: requester.email, use_case: "We report retrievals." },
    });
    expect(filed.status).toBe(201);
    const admin = await signInOperatorAdmin();
    const { page, errors } = await openPage(admin);
    await page.goto(`${origin()}/app?view=admin`);
    const card = `[data-request="${filed.body.id}"]`;
    await page.waitForSelector(card);
    await page.type(`${card} input`, "Welcome aboard");
    await shot(page, "dashboard-operator");
    await page.click(`${card} button`);
    await page.waitForFunction(`document.querySelector(${JSON.stringify(card)}) === null`);
    await page.waitForFunction(
      `[...document.querySelectorAll("td")].some((td) => td.textContent === ${JSON.stringify(name)})`,
    );
    const reviewed = await callIdentity("GET", "/api/v1/identity/platform-access-requests", {
      session: requester.session,
    });
    expect(reviewed.body.items[0]).toMatchObject({ status: "approved", reviewer_note: "Welcome aboard" });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("an emitter sees its accepted and refused events per hour and the exact errors of its latest refusal", async () => {
    const { ctx } = await identityTestApp();
    const platform = await createTestOrg({ type: "platform" });
    const post = (events: unknown[]) =>
      fetch(`${origin()}/events`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": platform.key },
        body: JSON.stringify(batch(events)),
      });
    expect((await post([validEvents.retrieved("example.org"), validEvents.retrieved("example.org")])).status).toBe(200);
    const refused = await post([validEvents.retrieved("example.org", { source_role: "moon" })]);
    expect(refused.status).toBe(400);
    await ctx.ingestHealth.flush();
    const user = await memberOf(platform.id, "member");
    const { page, errors } = await openPage(user);
    await page.goto(`${origin()}/app?org=${platform.id}&view=ingest`);
    await page.waitForSelector("article.refusal");
    expect(await textOf(page, "main p")).toContain("2 events accepted, 1 refused");
    expect(await textOf(page, "article.refusal h3")).toContain("400 validation_failed");
    expect(await textOf(page, "article.refusal li code")).toBe("/events/0/source_role");
    await page.waitForSelector(".uplot canvas");
    await shot(page, "dashboard-ingest-health");
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("in every view of an owner, every form field has a label and every button and link says what it does", async () => {
    const owner = await createTestOrg();
    const user = await memberOf(owner.id, "owner");
    const { page, errors } = await openPage(user);
    for (const view of ["overview", "domains", "delegations", "members", "keys", "ingest", "webhooks"]) {
      await page.goto(`${origin()}/app?org=${owner.id}&view=${view}`);
      await page.waitForSelector("main h1");
      await page.waitForFunction(`document.querySelectorAll("[aria-busy=true]").length === 0`);
      // Page code as text: this project's types have no DOM (web/ has its own tsconfig).
      const unnamed = await page.evaluate(`[
        ...[...document.querySelectorAll("input, select, textarea")]
          .filter((field) => field.labels.length === 0 && !field.getAttribute("aria-label"))
          .map((field) => "field " + (field.id || field.name)),
        ...[...document.querySelectorAll("button, a")]
          .filter((control) => control.textContent.trim() === "" && !control.getAttribute("aria-label"))
          .map((control) => control.tagName),
      ]`);
      expect({ view, unnamed }).toEqual({ view, unnamed: [] });
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("an API error is shown in words beside the form it concerns", async () => {
    const owner = await createTestOrg();
    const user = await memberOf(owner.id, "owner");
    const { page } = await openPage(user);
    await page.goto(`${origin()}/app?org=${owner.id}&view=domains`);
    await page.waitForSelector("#new-domain");
    await page.type("#new-domain", "not a domain!");
    await page.click("form.card button[type=submit]");
    await page.waitForSelector("form.card .error");
    expect(await textOf(page, "form.card .error")).toContain("domain");
    await page.close();
  }, 60_000);

  test("on a phone-width screen the overview fits without sideways scrolling", async () => {
    const owner = await createTestOrg();
    const user = await memberOf(owner.id, "member");
    const { page } = await openPage(user, 390);
    await page.goto(`${origin()}/app?org=${owner.id}`);
    await page.waitForSelector("[data-kpi=Sessions]");
    await page.waitForSelector("td.url, .chart .muted");
    // Page code as text: this project's types have no DOM (web/ has its own tsconfig).
    const wide = await page.evaluate(`[...document.querySelectorAll("body *")]
      .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 1)
      .map((element) => element.tagName + "." + element.className)
      .slice(0, 5)`);
    expect(wide).toEqual([]);
    await shot(page, "dashboard-phone");
    await page.close();
  }, 60_000);
});
