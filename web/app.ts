import { ApiError, type DataOf, identity, ok } from "./api.ts";
import { h } from "./dom.ts";
import { onPress, takePressed, viewErrorNote } from "./feedback.ts";
import { navigate, type Organisation, param, type ViewName, viewNames } from "./state.ts";
import { admin } from "./views/admin.ts";
import { delegations } from "./views/delegations.ts";
import { domains } from "./views/domains.ts";
import { ingestHealth } from "./views/ingest-health.ts";
import { keys } from "./views/keys.ts";
import { members } from "./views/members.ts";
import { overview } from "./views/overview.ts";
import { signIn } from "./views/sign-in.ts";
import { start } from "./views/start.ts";
import { webhooks } from "./views/webhooks.ts";

type WhoAmI = DataOf<typeof identity.auth.session.get>;

const titles: Record<ViewName | "admin", string> = {
  overview: "Overview",
  domains: "Domains",
  delegations: "Delegations",
  members: "Members",
  keys: "API keys",
  ingest: "Ingest health",
  webhooks: "Webhooks",
  admin: "Operator",
};
const views: Record<ViewName, (org: Organisation) => HTMLElement> = {
  overview,
  domains,
  delegations,
  members,
  keys,
  ingest: ingestHealth,
  webhooks,
};

const root = document.getElementById("app") as HTMLElement;

async function render(): Promise<void> {
  // Every change redraws the view: the control just used gets the focus back, so that
  // a keyboard or screen-reader user goes on from where they were.
  const pressed = takePressed();
  const active = root.contains(document.activeElement) ? document.activeElement : pressed;
  const focused = active && root.contains(active) ? markOf(active) : undefined;
  stopRefocusing();
  root.setAttribute("aria-busy", "true");
  try {
    root.replaceChildren(await page());
  } catch (error) {
    root.replaceChildren(viewErrorNote(error));
  } finally {
    root.setAttribute("aria-busy", "false");
  }
  if (focused) refocus(focused);
}

/** The wait for a control to focus again, while its region loads; one at a time. */
let refocusing: MutationObserver | undefined;

function stopRefocusing(): void {
  refocusing?.disconnect();
  refocusing = undefined;
}

// Whatever the user does meanwhile wins over giving the focus back.
root.addEventListener("pointerdown", stopRefocusing);
root.addEventListener("keydown", stopRefocusing);

/**
 * A focused control, found again in the redrawn view: by its id, or, for one
 * without (a section link, a row's button), as the same kind of element with the
 * same words, the how-manieth of its likes it was.
 */
interface FocusMark {
  id: string;
  tag: string;
  words: string;
  nth: number;
  /** The labelled region it was in, to stand in for a control its action removed. */
  region: string | null;
}

const wordsOf = (element: Element) => element.textContent?.trim() ?? "";

const likesOf = (mark: Pick<FocusMark, "tag" | "words">) =>
  [...root.querySelectorAll<HTMLElement>(mark.tag)].filter((element) => wordsOf(element) === mark.words);

function markOf(element: Element): FocusMark {
  const mark = { id: element.id, tag: element.tagName, words: wordsOf(element) };
  const region = element.closest("section[aria-label]")?.getAttribute("aria-label") ?? null;
  return { ...mark, nth: likesOf(mark).indexOf(element as HTMLElement), region };
}

const findMarked = (mark: FocusMark) =>
  mark.id ? document.getElementById(mark.id) : (likesOf(mark)[mark.nth] ?? null);

/**
 * Where the focus goes when the control is gone once every region has drawn (its
 * action removed its row): the region it was in, or else the page's heading, so
 * that it does not fall back to the start of the document.
 */
function standIn(mark: FocusMark): HTMLElement | null {
  const region = [...root.querySelectorAll<HTMLElement>("section[aria-label]")].find(
    (section) => section.getAttribute("aria-label") === mark.region,
  );
  const target = region ?? root.querySelector<HTMLElement>("main h1");
  target?.setAttribute("tabindex", "-1");
  return target;
}

/**
 * Focuses the marked control once the view's regions have drawn it (they load on
 * their own); a control now disabled (Next on the last page) hands the focus to an
 * enabled button beside it.
 */
function refocus(mark: FocusMark): void {
  const focus = () => {
    const busy = root.querySelector("[aria-busy=true]") !== null;
    // By words and place, only once every region has drawn: a row of a region still
    // loading would shift the place, and another row's control would take the focus.
    if (!mark.id && busy) return false;
    const element = findMarked(mark) ?? (busy ? null : standIn(mark));
    if (!element) return !busy;
    const usable = (element as HTMLButtonElement).disabled
      ? element.parentElement?.querySelector<HTMLElement>("button:not([disabled])")
      : element;
    usable?.focus();
    return true;
  };
  if (focus()) return;
  const watch = new MutationObserver(() => focus() && stopRefocusing());
  refocusing = watch;
  watch.observe(root, { childList: true, subtree: true, attributeFilter: ["aria-busy"] });
  // A region that never finishes loading is not waited for.
  setTimeout(() => refocusing === watch && stopRefocusing(), 10_000);
}

/** Whether the page shows the sign-in form: the browser had no session when it was drawn. */
let signedOut = false;

async function page(): Promise<Node> {
  let me: WhoAmI;
  try {
    me = await ok(identity.auth.session.get());
    signedOut = false;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      signedOut = true;
      return signIn();
    }
    throw error;
  }
  const { items: orgs } = await ok(identity.organizations.organizations.get({ query: { limit: 100 } }));
  const org = orgs.find((o) => o.id === param("org")) ?? orgs[0];
  if (me.is_operator_admin && param("view") === "admin") return frame(me, orgs, org, "admin", admin());
  if (!org) return frame(me, orgs, undefined, undefined, start(me.user.email));
  const view = viewsOf(org).find((name) => name === param("view")) ?? "overview";
  if (org.suspended_at) return frame(me, orgs, org, view, suspended(org, org.suspended_at));
  return frame(me, orgs, org, view, views[view](org));
}

/** What a member of a suspended organisation sees instead of a view: every request for it would be refused. */
const suspended = (org: Organisation, since: Date | string) =>
  h(
    "p",
    { class: "notice", role: "status" },
    `${org.name} is suspended by the service's operator since ${new Date(since).toUTCString()}. Its telemetry, keys and settings are out of reach until the operator resumes it.`,
  );

/** The views an organisation has: domains are for content owners only. */
const viewsOf = (org: Organisation): ViewName[] =>
  viewNames.filter((name) => name !== "domains" || org.org_type === "content_owner");

/** The header (organisation, sections, the user) around a view. */
function frame(
  me: WhoAmI,
  orgs: Organisation[],
  org: Organisation | undefined,
  view: ViewName | "admin" | undefined,
  content: HTMLElement,
): Node {
  const sections: (ViewName | "admin")[] = org ? viewsOf(org) : [];
  if (me.is_operator_admin) sections.push("admin");
  const title = view ? titles[view] : "Welcome";
  document.title = `${title}${org ? ` · ${org.name}` : ""} · Content Telemetry`;
  return h(
    "div",
    {},
    // The first Tab stop: past the header's organisation menu, sections and sign-out.
    h(
      "a",
      {
        class: "skip",
        href: "#main",
        onclick: (e: Event) => {
          e.preventDefault();
          document.getElementById("main")?.focus();
        },
      },
      "Skip to the view",
    ),
    h(
      "header",
      {},
      h("strong", { class: "brand" }, "Content Telemetry"),
      orgs.length > 0
        ? [
            h("label", { for: "org" }, "Organisation"),
            h(
              "select",
              {
                id: "org",
                onchange: (e: Event) =>
                  navigate({
                    org: (e.target as HTMLSelectElement).value,
                    page: undefined,
                    as: undefined,
                    url: undefined,
                    sort: undefined,
                  }),
              },
              ...orgs.map((o) =>
                h(
                  "option",
                  { value: o.id, selected: o.id === org?.id },
                  `${o.name} (${o.org_type}${o.suspended_at ? ", suspended" : ""})`,
                ),
              ),
            ),
          ]
        : null,
      h(
        "nav",
        { "aria-label": "Sections" },
        ...sections.map((name) =>
          h(
            "a",
            {
              href: `?${new URLSearchParams({ ...(org ? { org: org.id } : {}), view: name })}`,
              "aria-current": name === view ? "page" : undefined,
              onclick: (e: Event) => {
                e.preventDefault();
                navigate({
                  view: name,
                  page: undefined,
                  url: undefined,
                  sort: undefined,
                  as: name === "overview" ? (param("as") ?? undefined) : undefined,
                });
              },
            },
            titles[name],
          ),
        ),
      ),
      h("span", { class: "muted" }, me.user.email),
      onPress(h("button", { type: "button", class: "link" }, "Sign out"), async () => {
        // A session already over (expired, or ended in another tab) is signed out too: its refusal cleared the cookie.
        await ok(identity.auth["sign-out"].post()).catch((error: unknown) => {
          if (!(error instanceof ApiError && error.status === 401)) throw error;
        });
        navigate({ org: undefined, view: undefined, as: undefined });
      }),
    ),
    h("main", { id: "main", tabindex: "-1" }, h("h1", {}, title), content),
  );
}

addEventListener("popstate", () => void render());

// The emailed link signs the browser in from another tab: back in this one, the
// dashboard shows instead of the form, which is kept while there is still no session.
addEventListener("focus", async () => {
  if (signedOut && (await identity.auth.session.get()).status === 200) void render();
});

void render();
