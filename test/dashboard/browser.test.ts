import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdir } from "node:fs/promises";
import puppeteer, { type Browser, type HTTPRequest, type Page, type ResponseForRequest } from "puppeteer-core";
import { contentOwner, fileRequest, grant, identityBase, partner } from "../support/delegations.ts";
import { publishTxt } from "../support/domain-probe.ts";
import { createTestOrg, type TestOrg, uniqueDomain } from "../support/fixtures.ts";
import {
  callIdentity,
  identityTestApp,
  latestMagicToken,
  memberOf,
  type SignedInUser,
  signIn,
  signInOperatorAdmin,
  uniqueEmail,
} from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

/**
 * The dashboard in a real Chromium (Debian's `chromium`; nothing is downloaded),
 * every request off the service's own address refused. DASHBOARD_SCREENSHOTS=<dir>
 * keeps screenshots there (docs/ holds the current ones). DASHBOARD_CPU_SLOWDOWN=20
 * runs each page's scripts 20 times slower, as on a loaded machine: it brings out
 * tests that race the dashboard's redraws.
 */
const chromium = process.env.CHROMIUM_PATH ?? Bun.which("chromium") ?? Bun.which("chromium-browser");
const screenshots = process.env.DASHBOARD_SCREENSHOTS;
const cpuSlowdown = Number(process.env.DASHBOARD_CPU_SLOWDOWN ?? 0);

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

/**
 * What a page's requests get instead of the service's answer, where this gives one:
 * a service in a state the shared test app is not put in (rate limiting the dashboard,
 * or gone between two requests of one view).
 */
const answersInstead = new WeakMap<
  Page,
  (request: HTTPRequest) => Partial<ResponseForRequest> | "unreachable" | undefined
>();

/** A page that may talk to the service only, signed in as `user` when given. */
async function openPage(
  user?: SignedInUser,
  width = 1200,
): Promise<{ page: Page; offSite: string[]; errors: string[] }> {
  const page = await (browser as Browser).newPage();
  await page.setViewport({ width, height: 900 });
  if (cpuSlowdown) await page.emulateCPUThrottling(cpuSlowdown);
  const offSite: string[] = [];
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const instead = answersInstead.get(page)?.(request);
    if (instead === "unreachable") return request.abort("connectionrefused");
    if (instead) return request.respond(instead);
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

/** A new content owner (options as createTestOrg takes them) and a page signed in as one of its members. */
async function contentOwnerPage(
  role: "owner" | "member",
  options: { verified?: boolean; domain?: string } = {},
  width?: number,
) {
  const owner = await createTestOrg(options);
  return { owner, ...(await openPage(await memberOf(owner.id, role), width)) };
}

const textOf = (page: Page, selector: string) => page.$eval(selector, (element) => element.textContent ?? "");

/** Waits until the view is drawn and none of its regions is loading (each is aria-busy while it loads). */
const viewLoaded = (page: Page) => page.waitForFunction(`document.querySelector("[aria-busy=true]") === null`);

/** Opens a dashboard address and waits until its view has loaded. */
async function show(page: Page, path: string) {
  await page.goto(`${origin()}${path}`);
  await viewLoaded(page);
}

/**
 * Does `action` on a loaded view, where it ends in the dashboard drawing the view
 * again, and waits until that new view has loaded. Waiting for the network to go
 * quiet instead raced the redraw on a busy machine: the next click could land on an
 * element as it was replaced, or on one a region loading above had pushed aside.
 */
async function redrawn<T>(page: Page, action: () => Promise<T>): Promise<T> {
  await viewLoaded(page);
  await page.evaluate(`document.querySelector("#app > *").dataset.previous = ""`);
  const result = await action();
  await page.waitForFunction(
    `document.querySelector("[data-previous]") === null && document.querySelector("[aria-busy=true]") === null`,
  );
  return result;
}

/** Whether the page code `condition` (as text) holds now. */
const holds = (page: Page, condition: string) => page.evaluate(`Boolean(${condition})`);

/** Keeps a screenshot of the page once none of its regions is loading, when DASHBOARD_SCREENSHOTS asks for them. */
async function shot(page: Page, name: string) {
  if (!screenshots) return;
  await viewLoaded(page);
  await page.screenshot({ path: `${screenshots}/${name}.png`, fullPage: true });
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

  test("a mailed sign-in link opened in the browser signs in only when its button is pressed, and goes on to the dashboard", async () => {
    const email = uniqueEmail("link");
    expect((await callIdentity("POST", `${identityBase}/auth/magic-link`, { body: { email } })).status).toBe(202);
    const token = await latestMagicToken(email);
    const { page, offSite, errors } = await openPage();
    await page.goto(`${origin()}${identityBase}/auth/magic-link/verify?token=${encodeURIComponent(token)}`);
    expect(await textOf(page, "h1")).toBe("Sign in to Content Telemetry");
    expect(await page.cookies()).toEqual([]);
    await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
    expect(new URL(page.url()).pathname).toBe("/app");
    await page.waitForFunction(`document.body.textContent.includes(${JSON.stringify(email)})`);
    const cookie = (await page.cookies()).find((c) => c.name === "svc_session");
    const whoami = await callIdentity("GET", `${identityBase}/auth/session`, { session: cookie?.value as string });
    expect(whoami.body.user.email).toBe(email);
    // Reloading the dashboard posts nothing again: still signed in, no refusal page.
    await page.reload();
    await page.waitForFunction(`document.body.textContent.includes(${JSON.stringify(email)})`);
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
    // The chart says in words what it draws.
    expect(await page.$eval(".uplot canvas", (canvas) => canvas.getAttribute("aria-label"))).toContain("Events per");
    await page.waitForSelector("td.url");
    const urls = await page.$$eval("td.url", (cells) => cells.map((cell) => cell.textContent));
    expect(urls).toEqual([`https://${domain}/article`, `https://${domain}/other`]);
    await shot(page, "dashboard-overview");

    // The URL search asks the API (url_contains), and the page's address keeps it.
    await page.type("#url-search", "OTHER");
    await page.click("form[role=search] button");
    await page.waitForFunction(`document.querySelectorAll("td.url").length === 1`);
    expect(await textOf(page, "td.url")).toBe(`https://${domain}/other`);
    expect(new URL(page.url()).searchParams.get("url")).toBe("OTHER");
    expect(await textOf(page, 'section[aria-label="Top URLs"] h2')).toBe("Top URLs (1)");
    // Ranking by sessions is the API's too (sort), and kept in the address.
    await page.click("th button[aria-pressed=false]");
    await page.waitForFunction(`new URL(location.href).searchParams.get("sort") === "sessions"`);
    await page.waitForFunction(`document.querySelector("th button[aria-pressed=true]")?.textContent === "Sessions"`);

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

  test("reading as an owner that no longer delegates says so once, with no export links; an address naming none says that", async () => {
    const owner = await contentOwner();
    const platform = await partner();
    const granted = await grant(owner, { grantee_org_id: platform.id });
    expect(granted.status).toBe(201);
    const { page, errors } = await openPage(await memberOf(platform.id, "member"));
    await show(page, `/app?org=${platform.id}&as=${owner.id}`);
    expect(await holds(page, `document.querySelector("[data-kpi=Retrievals]") !== null`)).toBe(true);
    const revoked = await callIdentity("DELETE", `${identityBase}/delegations/${granted.body.id}`, {
      key: owner.writer,
    });
    expect(revoked.status).toBe(200);
    const refusals = async (path: string) => {
      await show(page, path);
      return {
        alerts: await page.$$eval("[role=alert]", (notes) => notes.map((note) => note.textContent)),
        exports: await page.$$eval("a[download]", (links) => links.length),
      };
    };
    const afterRevoking = await refusals(`/app?org=${platform.id}&as=${owner.id}&compare=1`);
    expect(afterRevoking.alerts).toHaveLength(1);
    expect(afterRevoking.exports).toBe(0);
    expect(await refusals(`/app?org=${platform.id}&as=not-a-uuid`)).toEqual({
      alerts: ["This address names no content owner to read as."],
      exports: 0,
    });
    // The way back to its own figures stays.
    await redrawn(page, () => page.click(".notice button.link"));
    expect(await holds(page, `document.querySelector("[data-kpi=Retrievals]") !== null`)).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("an owner invites a member, changes a settings flag and creates a webhook endpoint whose secret is shown once", async () => {
    const { owner, page, errors } = await contentOwnerPage("owner");
    await show(page, `/app?org=${owner.id}&view=members`);
    const invited = uniqueEmail("invited");
    await page.type("#invite-email", invited);
    await page.select("#invite-role", "admin");
    await redrawn(page, () => page.click("form.card:has(#invite-email) button[type=submit]"));
    expect(await holds(page, `document.body.textContent.includes(${JSON.stringify(invited)})`)).toBe(true);
    await page.click("input[name=visible_in_click_token_lookups]");
    await redrawn(page, () =>
      page.click("form.card:has(input[name=visible_in_click_token_lookups]) button[type=submit]"),
    );
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

  /** Page code (as text): colours as numbers, their luminance and contrast, and the background behind an element. */
  const contrastHelpers = `
  const rgba = (css) => (css.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => {
    const linear = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  };
  const contrast = (a, b) => {
    const [la, lb] = [luminance(a), luminance(b)];
    return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
  };
  const background = (element) => {
    for (let at = element; at; at = at.parentElement) {
      const color = rgba(getComputedStyle(at).backgroundColor);
      if (color.length === 3 || color[3] > 0) return color;
    }
    return [255, 255, 255];
  };`;

  /**
   * Page code (as text) listing every visible text whose contrast with the
   * background behind it is under WCAG AA: 4.5:1, or 3:1 for large text (24 px, or
   * 18.66 px bold). Disabled controls are exempt, as WCAG has them.
   */
  const lowContrastTexts = `(() => {${contrastHelpers}
  return [...document.querySelectorAll("body *")]
    .filter((element) => [...element.childNodes].some((node) => node.nodeType === 3 && node.textContent.trim()))
    .filter((element) => element.getClientRects().length > 0 && !element.closest(":disabled"))
    .flatMap((element) => {
      const style = getComputedStyle(element);
      const ratio = contrast(rgba(style.color), background(element));
      const size = parseFloat(style.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
      return ratio < (large ? 3 : 4.5) ? [element.tagName + " " + element.textContent.trim().slice(0, 30) + " " + ratio.toFixed(2)] : [];
    });
})()`;

  /**
   * Page code (as text): the focused control's outline, when its contrast with the
   * background it is drawn on (the parent's: the outline is offset from the control)
   * is under the 3:1 WCAG asks of a focus indicator (1.4.11), or there is none.
   */
  const faintFocus = `(() => {${contrastHelpers}
  const element = document.activeElement;
  const style = getComputedStyle(element);
  const name = element.tagName + " " + (element.id || element.textContent.trim().slice(0, 30));
  if (style.outlineStyle === "none" || parseFloat(style.outlineWidth) < 2) return name + " has no outline";
  const ratio = contrast(rgba(style.outlineColor), background(element.parentElement));
  return ratio < 3 ? name + " " + ratio.toFixed(2) : null;
})()`;

  test("in every view of an owner, every form field has a label, every button and link says what it does, and every text has AA contrast", async () => {
    const { owner, page, errors } = await contentOwnerPage("owner");
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
      expect({ view, lowContrast: await page.evaluate(lowContrastTexts) }).toEqual({ view, lowContrast: [] });
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("in every view, each control reached by Tab shows a focus outline that stands out from the page behind it", async () => {
    const { owner, page } = await contentOwnerPage("owner");
    const sent = await fetch(`${origin()}/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": owner.key },
      body: JSON.stringify(batch([validEvents.retrieved(owner.domain as string)])),
    });
    expect(sent.status).toBe(200);
    for (const view of ["overview", "domains", "delegations", "members", "keys", "ingest", "webhooks"]) {
      await show(page, `/app?org=${owner.id}&view=${view}`);
      const faint: string[] = [];
      const seen = new Set<unknown>();
      for (let step = 0; step < 60; step++) {
        await page.keyboard.press("Tab");
        const focused = await page.evaluate(
          `document.activeElement === document.body ? null : document.activeElement.outerHTML`,
        );
        if (focused === null || seen.has(focused)) break;
        seen.add(focused);
        const problem = await page.evaluate(faintFocus);
        if (problem) faint.push(problem as string);
      }
      expect({ view, faint }).toEqual({ view, faint: [] });
    }
    await page.close();
  }, 60_000);

  /** Page code (as text): the view's headings, as "h<level> <words>", in the order they are read. */
  const headings = `[...document.querySelectorAll("h1, h2, h3, h4, h5, h6")].map((heading) => heading.tagName.toLowerCase() + " " + heading.textContent)`;

  test("each region of the overview has a heading of its own under the view's, its captions kept", async () => {
    const { owner, page } = await contentOwnerPage("owner");
    await show(page, `/app?org=${owner.id}`);
    expect(await page.evaluate(headings)).toEqual([
      "h1 Overview",
      "h2 Totals",
      "h2 Events over time",
      "h2 Top URLs (0)",
      "h2 Sources, agents and domains",
    ]);
    // A region is found by its heading, and the heading is the region's own.
    const regions = await page.$$eval("main section[aria-label]", (sections) =>
      sections.map((section) => [section.getAttribute("aria-label"), section.querySelector("h2")?.textContent]),
    );
    expect(regions.filter(([label, heading]) => !heading?.startsWith(label ?? "?"))).toEqual([]);
    expect(await page.$$eval("caption", (all) => all.map((caption) => caption.textContent))).toEqual([
      "By source role",
      "By agent",
      "By domain",
    ]);
    await page.close();
  }, 60_000);

  /**
   * Page code (as text): what is amiss in the view's headings: not one h1, a level
   * skipped, a heading drawn no smaller to the eye than one of a higher level, a labelled region
   * whose first child is not a heading naming it, one level below the heading of
   * the region or card it is in.
   */
  const headingFaults = `(() => {
  const level = (element) => (/^H[1-6]$/.test(element?.tagName) ? Number(element.tagName[1]) : 0);
  const all = [...document.querySelectorAll("h1, h2, h3, h4, h5, h6")];
  const faults = [];
  const h1s = all.filter((heading) => level(heading) === 1).length;
  if (h1s !== 1) faults.push(h1s + " h1s");
  all.reduce((above, heading) => {
    if (level(heading) > above + 1) faults.push("from h" + above + " to " + heading.tagName + " " + heading.textContent);
    return level(heading);
  }, 0);
  const size = (heading) => parseFloat(getComputedStyle(heading).fontSize);
  for (const heading of all) {
    // At least a pixel: the browser's h3 (1.17em) was 0.05 px under the h2 (1.1rem), the same to the eye.
    const higher = all.find((other) => level(other) < level(heading) && size(other) - size(heading) < 1);
    if (higher) faults.push(heading.tagName + " " + heading.textContent + " not smaller than " + higher.tagName + " " + higher.textContent);
  }
  for (const region of document.querySelectorAll("section[aria-label]")) {
    const label = region.getAttribute("aria-label");
    const heading = region.firstElementChild;
    const around = region.parentElement.closest("section, article");
    const expected = (around ? level(around.firstElementChild) : 1) + 1;
    if (level(heading) !== expected || !heading.textContent.startsWith(label)) {
      faults.push("region " + label + ": " + (level(heading) ? heading.tagName + " " + heading.textContent : "no heading") + ", not h" + expected);
    }
  }
  return faults;
})()`;

  test("every view, signed out, new, owner's, partner's, operator's and suspended, has one h1, no level skipped, and a heading for each region", async () => {
    const { page, errors } = await openPage();
    const { hostname } = new URL(origin());
    const signedInAs = (user: SignedInUser) =>
      page.setCookie({ name: "svc_session", value: user.session, domain: hostname, path: "/", httpOnly: true });
    const seen: Record<string, string[]> = {};
    const faulty: Record<string, string[]> = {};
    const walk = async (name: string, path: string) => {
      await show(page, path);
      await page.waitForSelector("h1");
      seen[name] = (await page.evaluate(headings)) as string[];
      const faults = (await page.evaluate(headingFaults)) as string[];
      if (faults.length > 0) faulty[name] = faults;
    };
    // The pages share one browser's cookies: this one starts with none.
    await page.deleteCookie({ name: "svc_session", domain: hostname });
    await walk("sign-in", "/app");

    // Every region with something in it: cards, a webhook's deliveries, a refusal, an invitation, requests.
    const owner = await contentOwner();
    const ownerUser = await memberOf(owner.id, "owner");
    const platform = await partner();
    expect((await fileRequest(platform, { domain: owner.domain })).status).toBe(201);
    expect((await grant(owner, { grantee_org_id: platform.id })).status).toBe(201);
    const endpoint = await callIdentity("POST", `${identityBase}/webhooks`, {
      key: owner.writer,
      body: { url: "https://hooks.example.org/headings", event_types: ["delegation.created"] },
    });
    expect(endpoint.status).toBe(201);
    const refused = await fetch(`${origin()}/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": platform.key },
      body: JSON.stringify(batch([validEvents.retrieved("example.org", { source_role: "moon" })])),
    });
    expect(refused.status).toBe(400);
    await (await identityTestApp()).ctx.ingestHealth.flush();
    const newcomer = await signIn();
    const invited = await callIdentity("POST", `${identityBase}/invites?org_id=${owner.id}`, {
      session: ownerUser.session,
      body: { email: newcomer.email, role: "member" },
    });
    expect(invited.status).toBe(201);
    const asked = await callIdentity("POST", `${identityBase}/platform-access-requests`, {
      session: newcomer.session,
      body: {
        org_name: `Headings ${crypto.randomUUID().slice(0, 8)}`,
        admin_email: newcomer.email,
        use_case: "Headings.",
      },
    });
    expect(asked.status).toBe(201);

    await signedInAs(newcomer);
    await walk("start", "/app");
    const views = ["overview", "domains", "delegations", "members", "keys", "ingest", "webhooks"];
    await signedInAs(ownerUser);
    for (const view of views) await walk(`owner ${view}`, `/app?org=${owner.id}&view=${view}`);
    await signedInAs(await memberOf(platform.id, "owner"));
    for (const view of views.filter((view) => view !== "domains")) {
      await walk(`platform ${view}`, `/app?org=${platform.id}&view=${view}`);
    }
    await walk("platform as the owner", `/app?org=${platform.id}&as=${owner.id}`);
    await signedInAs(await signInOperatorAdmin());
    await walk("operator", "/app?view=admin");
    const suspended = await createTestOrg();
    const suspendedUser = await memberOf(suspended.id, "member");
    await (await testRuntime()).ctx.sql`UPDATE organizations SET suspended_at = now() WHERE id = ${suspended.id}::uuid`;
    await signedInAs(suspendedUser);
    await walk("suspended", `/app?org=${suspended.id}`);

    expect(faulty).toEqual({});
    // The walk met the regions within regions and cards.
    expect(seen.start).toContain("h2 Invitations for you");
    expect(seen["owner webhooks"]).toContain("h4 Deliveries");
    expect(seen["platform ingest"]).toContain("h2 Latest refused requests");
    expect(seen["platform as the owner"]).toContain("h3 Totals");
    expect(seen.operator?.some((heading) => heading.startsWith("h2 Access requests waiting"))).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  test("the first Tab reaches a link past the header, and Enter on it puts the keyboard in the view", async () => {
    const { owner, page } = await contentOwnerPage("owner");
    await show(page, `/app?org=${owner.id}&view=members`);
    await page.keyboard.press("Tab");
    const skip = await page.evaluate(`(() => {
      const link = document.activeElement;
      const box = link.getBoundingClientRect();
      return { text: link.textContent, visible: box.top >= 0 && box.bottom <= innerHeight && box.width > 0 };
    })()`);
    expect(skip).toEqual({ text: "Skip to the view", visible: true });
    await page.keyboard.press("Enter");
    expect(await page.evaluate("document.activeElement.tagName")).toBe("MAIN");
    // The next Tab goes on inside the view, not back to the header's controls.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(`!!document.activeElement.closest("main")`)).toBe(true);
    await page.close();
  }, 60_000);

  test("a redraw is not read out whole: live regions hold news (errors, a key or link just made), never the view", async () => {
    const { owner, page } = await contentOwnerPage("owner");
    for (const view of ["overview", "members", "keys", "webhooks"]) {
      await show(page, `/app?org=${owner.id}&view=${view}`);
      // A live region around the view would have a screen reader read every region as it draws, tables and all.
      const wrapping = await page.$$eval("[aria-live]", (regions) =>
        regions
          .filter((region) => region.getAttribute("aria-live") !== "off" && region.querySelector("main, h1, table"))
          .map((region) => region.tagName + (region.id ? `#${region.id}` : "")),
      );
      expect({ view, wrapping }).toEqual({ view, wrapping: [] });
    }
    await page.close();
  }, 60_000);

  /** Page code (as text): by how many pixels the chart is wider than its box, which cuts off its right edge. */
  const chartOverflow = `(() => {
  const figure = document.querySelector("figure.chart");
  const style = getComputedStyle(figure);
  const inside = figure.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return Math.max(0, Math.round(figure.querySelector(".uplot").getBoundingClientRect().width - inside));
})()`;

  test("the chart's figures are in a table beside it, and its legend shows and hides a line by keyboard", async () => {
    const { owner, page, errors } = await contentOwnerPage("owner");
    const domain = owner.domain as string;
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const sent = await fetch(`${origin()}/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": owner.key },
      body: JSON.stringify(
        batch([
          validEvents.retrieved(domain, { timestamp: hourAgo }),
          validEvents.retrieved(domain, { timestamp: hourAgo }),
          validEvents.grounded(domain, { timestamp: hourAgo, session_id: crypto.randomUUID() }),
        ]),
      ),
    });
    expect(sent.status).toBe(200);
    await show(page, `/app?org=${owner.id}&range=24h`);
    // Every table says what it holds (a caption, or the heading it is labelled by); the legend is no table.
    const unnamed = await page.$$eval("table", (tables) =>
      tables
        .filter((table) => table.getAttribute("role") !== "none")
        .filter((table) => !table.caption && !table.getAttribute("aria-labelledby"))
        .map((table) => table.outerHTML.slice(0, 80)),
    );
    expect(unnamed).toEqual([]);
    // The figures the chart draws, one row per non-empty hour, in words a screen reader reads.
    const hour = `${hourAgo.slice(0, 13).replace("T", " ")}:00`;
    const figures = await page.$$eval(".chart details tr", (rows) =>
      rows.map((row) => [...row.children].map((cell) => cell.textContent)),
    );
    expect(figures).toEqual([
      ["Hour (UTC)", "content_grounded", "content_retrieved"],
      [hour, "1", "2"],
    ]);
    expect(await page.evaluate(chartOverflow)).toBe(0);
    // Each line's name in the legend is a button, pressed while the line shows.
    const legend = await page.$$eval(".u-legend [role=button]", (buttons) =>
      buttons.map((button) => [button.textContent, button.getAttribute("aria-pressed")]),
    );
    expect(legend).toEqual([
      ["content_grounded", "true"],
      ["content_retrieved", "true"],
    ]);
    const tabsTo = async (name: string) => {
      for (let step = 0; step < 40; step++) {
        await page.keyboard.press("Tab");
        if (await holds(page, `document.activeElement.textContent === ${JSON.stringify(name)}`)) return true;
      }
      return false;
    };
    expect(await tabsTo("content_retrieved")).toBe(true);
    await page.keyboard.press("Enter");
    expect(await page.evaluate(`document.activeElement.getAttribute("aria-pressed")`)).toBe("false");
    expect(await holds(page, `document.activeElement.closest("tr").classList.contains("u-off")`)).toBe(true);
    await page.keyboard.press(" ");
    expect(await page.evaluate(`document.activeElement.getAttribute("aria-pressed")`)).toBe("true");
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("an owner revokes a key, changes a member's role and removes them, revokes an invitation, answers two delegation requests, pings, redelivers and deletes a webhook, and signs out", async () => {
    const owner = await contentOwner();
    const user = await memberOf(owner.id, "owner");
    const colleague = await memberOf(owner.id, "member");
    const { page, errors } = await openPage(user);
    page.on("dialog", (dialog) => void dialog.accept());

    await show(page, `/app?org=${owner.id}&view=keys`);
    await page.click("form.card button[type=submit]");
    await page.waitForSelector("#raw-key");
    const minted = await textOf(page, "#raw-key");
    // The row of the key just minted (the owner has others): its prefix is in the notice.
    const prefix = (await textOf(page, ".notice p")).split(" ")[1] as string;
    const row = `[...document.querySelectorAll("tr")].find((tr) => tr.querySelector("code")?.textContent === ${JSON.stringify(prefix)})`;
    await redrawn(page, () => page.evaluate(`${row}.querySelector("button.danger").click()`));
    expect(await holds(page, `${row}.textContent.includes("revoked")`)).toBe(true);
    expect((await fetch(`${origin()}/content-owners/summary`, { headers: { "x-api-key": minted } })).status).toBe(401);

    await show(page, `/app?org=${owner.id}&view=members`);
    const roleOf = `select[aria-label="Role of ${colleague.email}"]`;
    await redrawn(page, () => page.select(roleOf, "admin"));
    const members = await callIdentity("GET", `/api/v1/identity/members?org_id=${owner.id}`, {
      session: user.session,
    });
    expect(members.body.items.find((m: { email: string }) => m.email === colleague.email).role).toBe("admin");
    await redrawn(page, () => page.click(`tr:has(${roleOf}) button.danger`));
    expect(await page.$(roleOf)).toBeNull();
    const invited = uniqueEmail("invited");
    await page.type("#invite-email", invited);
    await redrawn(page, () => page.click("form.card:has(#invite-email) button[type=submit]"));
    const inviteRow = `[...document.querySelectorAll("td")].some((td) => td.textContent === ${JSON.stringify(invited)})`;
    expect(await holds(page, inviteRow)).toBe(true);
    await redrawn(page, () => page.click(`section[aria-label=Invitations] button.danger`));
    expect(await holds(page, inviteRow)).toBe(false);

    const [approved, denied] = [await partner(), await partner("agent")];
    await Promise.all(
      [approved, denied].map(async (grantee) =>
        expect((await fileRequest(grantee, { domain: owner.domain })).status).toBe(201),
      ),
    );
    await show(page, `/app?org=${owner.id}&view=delegations`);
    const answer = (from: string, label: "Approve" | "Deny") =>
      redrawn(page, () =>
        page.evaluate(`[...document.querySelectorAll("section[aria-label=Requests] tr")]
          .find((row) => row.textContent.includes(${JSON.stringify(from)}))
          .querySelector(${JSON.stringify(label === "Deny" ? "button.danger" : "button:not(.danger)")})
          .click()`),
      );
    await answer(approved.id, "Approve");
    await answer(denied.id, "Deny");
    expect(
      await holds(
        page,
        `[...document.querySelectorAll("section[aria-label='Delegations granted'] code")].some((code) => code.textContent === ${JSON.stringify(approved.id)})`,
      ),
    ).toBe(true);
    // Neither is pending any more; only the approved one holds a delegation.
    const held = await Promise.all(
      [approved, denied].map(async (grantee) => {
        const asked = (await callIdentity("GET", "/api/v1/identity/delegation-requests", { key: grantee.writer })).body;
        const granted = (
          await callIdentity("GET", "/api/v1/identity/delegations?role=grantee", { key: grantee.writer })
        ).body;
        return {
          pending: asked.total,
          delegations: granted.items.map((d: { grantor_org_id: string }) => d.grantor_org_id),
        };
      }),
    );
    expect(held).toEqual([
      { pending: 0, delegations: [owner.id] },
      { pending: 0, delegations: [] },
    ]);

    await show(page, `/app?org=${owner.id}&view=webhooks`);
    await page.type("#webhook-url", "https://hooks.example.org/ping-me");
    await page.click("form.card button[type=submit]");
    await page.waitForSelector("article.card button");
    // By keyboard: a row's button, disabled while its action runs, gets the focus back after the redraw.
    await page.focus("article.card button:not(.danger)");
    await redrawn(page, () => page.keyboard.press("Enter"));
    await page.waitForFunction(`document.activeElement?.textContent === "Send a test ping"`);
    expect(
      await holds(page, `[...document.querySelectorAll("article.card td")].some((td) => td.textContent === "ping")`),
    ).toBe(true);
    // A failed redelivery would leave the row as it was: check the API's answer.
    const [redelivered] = await redrawn(page, () =>
      Promise.all([
        page.waitForResponse((response) => response.url().includes("/redeliver")),
        page.click("article.card td button"),
      ]),
    );
    expect(redelivered.status()).toBe(202);
    await redrawn(page, () => page.click("article.card button.danger"));
    expect(await holds(page, `document.body.textContent.includes("No endpoints.")`)).toBe(true);

    await redrawn(page, () => page.click("header button.link"));
    expect(await page.$("#email")).not.toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("a new user joins by invitation; another asks for an agent organisation and sees the request pending", async () => {
    const owner = await createTestOrg();
    const invitee = await signIn();
    const invited = await callIdentity("POST", `/api/v1/identity/invites?org_id=${owner.id}`, {
      session: (await memberOf(owner.id, "owner")).session,
      body: { email: invitee.email, role: "member" },
    });
    expect(invited.status).toBe(201);
    const joining = await openPage(invitee);
    await joining.page.goto(`${origin()}/app`);
    await joining.page.waitForSelector("section[aria-label='Invitations for you'] button");
    await joining.page.click("section[aria-label='Invitations for you'] button");
    await joining.page.waitForFunction(
      `new URL(location.href).searchParams.get("org") === ${JSON.stringify(owner.id)}`,
    );
    await joining.page.waitForSelector("[data-kpi=Sessions]");

    const asking = await openPage(await signIn());
    await asking.page.goto(`${origin()}/app`);
    await asking.page.waitForSelector("#request-name");
    const name = `Agent ${crypto.randomUUID().slice(0, 8)}`;
    await asking.page.select("#request-type", "agent");
    await asking.page.type("#request-name", name);
    await asking.page.type("#request-email", uniqueEmail("agent-admin"));
    await asking.page.type("#request-use", "We cite news articles.");
    await asking.page.click("form.card:has(#request-name) button[type=submit]");
    await asking.page.waitForFunction(`document.body.textContent.includes(${JSON.stringify(`${name}: pending`)})`);
    expect({ joining: joining.errors, asking: asking.errors }).toEqual({ joining: [], asking: [] });
    await joining.page.close();
    await asking.page.close();
  }, 60_000);

  test("an API error is shown in words beside the form it concerns", async () => {
    const { owner, page } = await contentOwnerPage("owner");
    /** What a view's form answers when `field` is filled with `text` and sent. */
    const refusal = async (view: string, field: string, text: string) => {
      await page.goto(`${origin()}/app?org=${owner.id}&view=${view}`);
      await page.waitForSelector(field);
      await page.type(field, text);
      await page.click(`${field} ~ button[type=submit]`);
      await page.waitForSelector("form.card .error");
      return textOf(page, "form.card .error");
    };
    expect(await refusal("domains", "#new-domain", "not a domain!")).toContain("domain");
    // A field at fault is named in words, once, not by its JSON pointer.
    expect(await refusal("delegations", "#grantee", "not-a-uuid")).toBe("grantee org id must be a UUID");
    await page.close();
  }, 60_000);

  test("a custom period that is no period is refused in words, never shown as another period's figures", async () => {
    const { owner, page, errors } = await contentOwnerPage("member");
    await show(page, `/app?org=${owner.id}&range=custom&since=2026-11-20&until=2026-11-10`);
    expect(await textOf(page, "[role=alert]")).toContain("must start before it ends");
    expect(await holds(page, `document.querySelector("[data-kpi]") === null`)).toBe(true);
    // The days as asked for stay in the form, to be corrected.
    expect(await page.$eval("#since", (input) => (input as unknown as { value: string }).value)).toBe("2026-11-20");
    await show(page, `/app?org=${owner.id}&range=custom`);
    expect(await textOf(page, "[role=alert]")).toContain("Choose the first day");
    for (const [since, until] of [
      ["2026-11-20", "2026-11-20"],
      ["2026-02-30", "2026-03-05"],
      ["0000-01-01", "2026-01-01"],
    ]) {
      await show(page, `/app?org=${owner.id}&range=custom&since=${since}&until=${until}`);
      expect({ since, until, shown: await holds(page, `document.querySelector("[data-kpi]") !== null`) }).toEqual({
        since,
        until,
        shown: false,
      });
    }
    // Choosing Custom… starts from the whole days of the period shown.
    await show(page, `/app?org=${owner.id}&range=7d`);
    await redrawn(page, () => page.select("#range", "custom"));
    expect(await holds(page, `document.querySelector("[data-kpi]") !== null`)).toBe(true);
    expect(await holds(page, `new URL(location.href).searchParams.get("since")?.length === 10`)).toBe(true);
    // Decades are charted by month, within the reads' bucket limit.
    const intervals: string[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname.endsWith("/timeseries")) intervals.push(url.searchParams.get("interval") ?? "");
    });
    await show(page, `/app?org=${owner.id}&range=custom&since=2000-01-01&until=2026-11-28`);
    expect(intervals).toEqual(["month"]);
    expect(await holds(page, `document.querySelector("[data-kpi]") !== null`)).toBe(true);
    expect(await textOf(page, ".controls p.muted")).toBe(
      "2000-01-01 00:00 to 2026-11-28 00:00 UTC (the end not included)",
    );
    expect(await holds(page, `document.querySelector(".error") === null`)).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("an owner without a verified domain is told why it sees nothing, and every empty table says so", async () => {
    const { owner, page } = await contentOwnerPage("owner", { verified: false });
    await show(page, `/app?org=${owner.id}`);
    expect(await textOf(page, ".notice")).toContain("None of your domains is verified yet");
    const bodies = await page.$$eval("table:has(caption) tbody", (tbodies) => tbodies.map((t) => t.textContent));
    expect(bodies.filter((text) => text !== "None in this period.")).toEqual([]);
    expect(bodies.length).toBe(3);
    await redrawn(page, () => page.click(".notice button"));
    expect(await holds(page, `new URL(location.href).searchParams.get("view") === "domains"`)).toBe(true);
    await page.close();
  }, 60_000);

  test("top URLs say why a page holds none: none in the period, none matching, or past the last page", async () => {
    const { owner, page } = await contentOwnerPage("member");
    await show(page, `/app?org=${owner.id}`);
    expect(await textOf(page, "section[aria-label='Top URLs'] tbody")).toBe("No URLs in this period.");
    await show(page, `/app?org=${owner.id}&url=nowhere`);
    expect(await textOf(page, "section[aria-label='Top URLs'] tbody")).toBe(
      "No URL contains “nowhere” in this period.",
    );
    await show(page, `/app?org=${owner.id}&page=99`);
    expect(await textOf(page, "section[aria-label='Top URLs'] tbody")).toBe("Page 100 is past the last one (1).");
    await redrawn(page, () => page.click("#urls-previous"));
    expect(await holds(page, `new URL(location.href).searchParams.get("page") === "0"`)).toBe(true);
    // A search longer than the API takes, from an edited link, is cut to its 200 characters, not an error.
    await show(page, `/app?org=${owner.id}&url=${"x".repeat(250)}`);
    expect(await holds(page, `document.querySelector("section[aria-label='Top URLs'] .error") === null`)).toBe(true);
    expect(await page.$eval("#url-search", (input) => (input as unknown as { value: string }).value.length)).toBe(200);
    await page.close();
  }, 60_000);

  test("after a change redraws the view, the control used keeps the keyboard focus", async () => {
    const { owner, page } = await contentOwnerPage("member");
    await show(page, `/app?org=${owner.id}`);
    await redrawn(page, () => page.click("#compare"));
    expect(await holds(page, `document.activeElement?.id === "compare"`)).toBe(true);
    await page.focus("#url-search");
    await redrawn(page, async () => {
      await page.type("#url-search", "news");
      await page.keyboard.press("Enter");
    });
    await page.waitForFunction(`document.activeElement?.id === "url-search"`);
    // A control without an id is found again by its kind and words: a section link.
    await page.focus("nav[aria-label=Sections] a:nth-of-type(4)");
    await redrawn(page, () => page.keyboard.press("Enter"));
    await page.waitForFunction(`document.activeElement?.textContent === "Members"`);
    expect(await holds(page, `document.activeElement?.getAttribute("aria-current") === "page"`)).toBe(true);
    await page.close();
  }, 60_000);

  test("a button whose action removes its row hands the keyboard focus to its region, not the page's start", async () => {
    const { owner, page } = await contentOwnerPage("owner");
    expect((await fileRequest(await partner(), { domain: owner.domain })).status).toBe(201);
    await show(page, `/app?org=${owner.id}&view=delegations`);
    await page.focus("section[aria-label=Requests] button.danger");
    await redrawn(page, () => page.keyboard.press("Enter"));
    await page.waitForFunction(`document.activeElement?.getAttribute("aria-label") === "Requests"`);
    expect(await textOf(page, "section[aria-label=Requests] > :not(h2)")).toBe("No requests waiting.");
    await page.close();
  }, 60_000);

  test("an action after the session ended elsewhere says so and offers to sign in again", async () => {
    const owner = await createTestOrg();
    const user = await memberOf(owner.id, "owner");
    const { page } = await openPage(user);
    await show(page, `/app?org=${owner.id}&view=keys`);
    expect((await callIdentity("POST", `${identityBase}/auth/sign-out`, { session: user.session })).status).toBe(204);
    await page.type("#key-name", "after the session ended");
    await page.click("form.card button[type=submit]");
    await page.waitForSelector("form.card .error a");
    expect(await textOf(page, "form.card .error")).toBe("the session is unknown, expired or signed outSign in again");
    await Promise.all([page.waitForNavigation(), page.click("form.card .error a")]);
    await page.waitForSelector("#email");
    await page.close();
  }, 60_000);

  test("the chart starts at its first bucket, which begins before a preset period does", async () => {
    const { owner, page } = await contentOwnerPage("member");
    const sent = await fetch(`${origin()}/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": owner.key },
      body: JSON.stringify(batch([validEvents.retrieved(owner.domain as string)])),
    });
    expect(sent.status).toBe(200);
    // The last 30 days by day: the period starts within a day, its first bucket at that day's midnight.
    await show(page, `/app?org=${owner.id}&range=30d`);
    const firstDay = (await textOf(page, ".controls p.muted")).slice(0, 10);
    const plot = await page.waitForSelector(".uplot .u-over");
    const box = await plot?.boundingBox();
    if (!box) throw new Error("the chart has no drawing area");
    // The chart's legend names the bucket nearest the pointer: at the left edge, the first.
    await page.mouse.move(box.x + 1, box.y + box.height / 2);
    const shown = await textOf(page, ".u-legend tr:first-child .u-value");
    expect(shown.startsWith(firstDay)).toBe(true);
    await page.close();
  }, 60_000);

  test("an internationalised domain is shown as written, its stored punycode beside it", async () => {
    const domain = `xn--bcher-kva.${uniqueDomain()}`;
    const { owner, page } = await contentOwnerPage("owner", { domain });
    await show(page, `/app?org=${owner.id}&view=domains`);
    expect(await textOf(page, `[data-domain="${domain}"] h3`)).toStartWith(
      `${domain.replace("xn--bcher-kva", "bücher")} (${domain})`,
    );
    await page.close();
  }, 60_000);

  test("a tab left on the sign-in form shows the dashboard once the browser is signed in elsewhere", async () => {
    const { page } = await openPage();
    const { hostname } = new URL(origin());
    // The pages share one browser's cookies: this one starts with none.
    await page.deleteCookie({ name: "svc_session", domain: hostname });
    await show(page, "/app");
    await page.type("#email", "kept@example.org");
    // Back in this tab while still signed out: the form stays as it was typed.
    await page.evaluate(`dispatchEvent(new Event("focus"))`);
    await page.waitForNetworkIdle();
    expect(await page.$eval("#email", (input) => (input as unknown as { value: string }).value)).toBe(
      "kept@example.org",
    );
    // The link opened in another tab set the session cookie; back here, the dashboard shows.
    const owner = await createTestOrg();
    const user = await memberOf(owner.id, "member");
    await page.setCookie({ name: "svc_session", value: user.session, domain: hostname, path: "/", httpOnly: true });
    await page.evaluate(`dispatchEvent(new Event("focus"))`);
    await page.waitForSelector("nav[aria-label=Sections]");
    expect(await holds(page, `document.querySelector("#email") === null`)).toBe(true);
    await page.close();
  }, 60_000);

  test("a member of a suspended organisation is told so instead of seeing a view of refusals", async () => {
    const { owner, page, offSite, errors } = await contentOwnerPage("owner");
    const { ctx } = await testRuntime();
    await ctx.sql`UPDATE organizations SET suspended_at = now() WHERE id = ${owner.id}::uuid`;
    await show(page, `/app?org=${owner.id}&view=keys`);
    await page.waitForSelector("main .notice[role=status]");
    expect(await textOf(page, "main .notice")).toContain("is suspended by the service's operator");
    expect(await textOf(page, "#org")).toContain("suspended");
    expect(await page.$("#key-name")).toBeNull();
    expect({ offSite, errors }).toEqual({ offSite: [], errors: [] });
    await page.close();
  }, 60_000);

  /** The view's alerts and live regions with something to say, and what each region of the view shows. */
  const viewNews = (page: Page) =>
    page.evaluate(`({
      said: [...document.querySelectorAll("[role=alert], [aria-live]:not([aria-live=off])")]
        .filter((region) => region.textContent.trim() !== "")
        .map((region) => ({ inRegion: region.closest("main section") !== null, text: region.textContent })),
      regions: [...document.querySelectorAll("main section[aria-label]")].map(
        (region) => region.getAttribute("aria-label") + ": " + region.querySelector(":scope > :not(h2)")?.textContent,
      ),
    })`) as Promise<{ said: { inRegion: boolean; text: string }[]; regions: string[] }>;

  const notLoaded = ["Totals", "Events over time", "Top URLs", "Sources, agents and domains"].map(
    (region) => `${region}: Not loaded.`,
  );

  /** Whether a request is one of the overview's reads. */
  const reads = (request: HTTPRequest) => new URL(request.url()).pathname.startsWith("/content-owners/");

  /** A 429 problem as the service answers it. */
  const tooMany = (code: string, detail: string, headers: Record<string, string>) => ({
    status: 429,
    contentType: "application/problem+json",
    headers,
    body: JSON.stringify({ type: "about:blank", title: "Too Many Requests", status: 429, code, detail }),
  });

  test("when the service cannot be reached, the view says so once, and each region only that it did not load", async () => {
    const { owner, page, errors } = await contentOwnerPage("member");
    const cannotBeReached = {
      inRegion: false,
      text: "The service cannot be reached. Check your connection and try again.Try again",
    };
    // Gone after the view's frame was drawn: every region's request fails.
    answersInstead.set(page, (request) => (reads(request) ? "unreachable" : undefined));
    await show(page, `/app?org=${owner.id}`);
    expect(await viewNews(page)).toEqual({ said: [cannotBeReached], regions: notLoaded });
    // Gone before: the view cannot be drawn at all.
    answersInstead.delete(page);
    await page.setOfflineMode(true);
    await redrawn(page, () => page.select("#range", "7d"));
    expect(await viewNews(page)).toEqual({ said: [cannotBeReached], regions: [] });
    // Try again draws the view again, once the service answers.
    await page.setOfflineMode(false);
    await redrawn(page, () => page.click("[role=alert] button"));
    expect(await holds(page, `document.querySelector("[data-kpi=Retrievals]") !== null`)).toBe(true);
    expect((await viewNews(page)).said).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("when the service rate-limits the dashboard or has lost its database, the view says once when to try again", async () => {
    const { owner, page, errors } = await contentOwnerPage("owner");
    const rateLimited = (headers: Record<string, string>) => (request: HTTPRequest) =>
      reads(request)
        ? tooMany("rate_limited", "this API key sent more than 20 read requests per second", headers)
        : undefined;
    answersInstead.set(page, rateLimited({ "retry-after": "7" }));
    await show(page, `/app?org=${owner.id}`);
    expect(await viewNews(page)).toEqual({
      said: [{ inRegion: false, text: "Too many requests to the service just now. Try again in 7 seconds.Try again" }],
      regions: notLoaded,
    });
    // Without Retry-After, no number of seconds is made up.
    answersInstead.set(page, rateLimited({}));
    await show(page, `/app?org=${owner.id}&range=7d`);
    expect((await viewNews(page)).said).toEqual([
      { inRegion: false, text: "Too many requests to the service just now. Try again in a moment.Try again" },
    ]);
    // The service without its database is the same kind of trouble; a read past its time limit is the region's own.
    const unavailable = (code: string, detail: string) => (request: HTTPRequest) =>
      reads(request)
        ? {
            status: 503,
            contentType: "application/problem+json",
            headers: { "retry-after": "1" },
            body: JSON.stringify({ type: "about:blank", title: "Service Unavailable", status: 503, code, detail }),
          }
        : undefined;
    answersInstead.set(page, unavailable("database_unavailable", "the database is not reachable"));
    await show(page, `/app?org=${owner.id}&range=30d`);
    expect(await viewNews(page)).toEqual({
      said: [
        { inRegion: false, text: "The service cannot reach its database just now. Try again in 1 second.Try again" },
      ],
      regions: notLoaded,
    });
    answersInstead.set(page, unavailable("query_timeout", "the query took too long; narrow the range or retry"));
    await show(page, `/app?org=${owner.id}&range=7d`);
    const timedOut = (await viewNews(page)).said;
    expect(
      timedOut.map(({ inRegion, text }) => ({ inRegion, said: text.includes("the query took too long") })),
    ).toEqual(Array(notLoaded.length).fill({ inRegion: true, said: true }));
    // A limit of an operation's own is the request's: said beside its form, in the service's words.
    const ownLimit = "someone@example.org was invited 5 times in the last day, revoked invitations included";
    answersInstead.set(page, (request) =>
      request.method() === "POST" && new URL(request.url()).pathname.endsWith("/invites")
        ? tooMany("too_many_invitations", ownLimit, { "retry-after": "600" })
        : undefined,
    );
    await show(page, `/app?org=${owner.id}&view=members`);
    await page.type("#invite-email", "someone@example.org");
    await page.click("form.card button[type=submit]");
    await page.waitForSelector("form.card .error");
    expect((await viewNews(page)).said).toEqual([{ inRegion: false, text: ownLimit }]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("a platform's own overview has no table by domain: what it reported has none of its own", async () => {
    const platform = await createTestOrg({ type: "platform" });
    const { page } = await openPage(await memberOf(platform.id, "owner"));
    await show(page, `/app?org=${platform.id}`);
    const captions = await page.$$eval("caption", (all) => all.map((caption) => caption.textContent));
    expect(captions).toContain("By agent");
    expect(captions).not.toContain("By domain");
    await page.close();
  }, 60_000);

  test("on a phone-width screen no view scrolls sideways, and an address stays readable", async () => {
    const { owner, page } = await contentOwnerPage("owner", {}, 375);
    const domain = owner.domain as string;
    const sent = await fetch(`${origin()}/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": owner.key },
      body: JSON.stringify(
        batch([validEvents.retrieved(domain, { content_url: `https://${domain}/2026/11/a-long-article-address` })]),
      ),
    });
    expect(sent.status).toBe(200);
    await page.goto(`${origin()}/app?org=${owner.id}`);
    await page.waitForSelector("[data-kpi=Sessions]");
    await page.waitForSelector("td.url");
    // Not a few letters a line: the table scrolls in its box before an address gets that narrow.
    expect(await page.$eval("td.url", (cell) => cell.getBoundingClientRect().width)).toBeGreaterThanOrEqual(150);
    // Page code as text: this project's types have no DOM (web/ has its own tsconfig). A table may
    // scroll within its own box; nothing else may reach past the screen's edge.
    const tooWide = () =>
      page.evaluate(`[...document.querySelectorAll("body *")]
        .filter((element) => !element.closest("table") && element.getBoundingClientRect().right > window.innerWidth + 1)
        .map((element) => element.tagName + "." + element.className)
        .concat(document.documentElement.scrollWidth > window.innerWidth ? ["the page scrolls sideways"] : [])
        .slice(0, 5)`);
    expect(await tooWide()).toEqual([]);
    await page.waitForSelector(".uplot canvas");
    expect(await page.evaluate(chartOverflow)).toBe(0);
    await shot(page, "dashboard-phone");
    for (const view of ["domains", "keys", "members", "delegations", "webhooks"]) {
      await show(page, `/app?org=${owner.id}&view=${view}`);
      expect({ view, wide: await tooWide() }).toEqual({ view, wide: [] });
    }
    await page.close();
  }, 60_000);
});
