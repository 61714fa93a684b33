import { ApiError, api } from "./api.ts";
import { h } from "./dom.ts";
import { errorNote, onPress } from "./feedback.ts";
import { navigate, type Organisation, param, type ViewName, viewNames } from "./state.ts";
import { delegations } from "./views/delegations.ts";
import { domains } from "./views/domains.ts";
import { keys } from "./views/keys.ts";
import { overview } from "./views/overview.ts";
import { signIn } from "./views/sign-in.ts";
import { start } from "./views/start.ts";

interface WhoAmI {
  user: { id: string; email: string };
}

const titles: Record<ViewName, string> = {
  overview: "Overview",
  domains: "Domains",
  delegations: "Delegations",
  keys: "API keys",
};
const views: Record<ViewName, (org: Organisation) => HTMLElement> = { overview, domains, delegations, keys };

const root = document.getElementById("app") as HTMLElement;

async function render(): Promise<void> {
  root.setAttribute("aria-busy", "true");
  try {
    root.replaceChildren(await page());
  } catch (error) {
    root.replaceChildren(errorNote(error));
  } finally {
    root.setAttribute("aria-busy", "false");
  }
}

async function page(): Promise<Node> {
  let me: WhoAmI;
  try {
    me = await api<WhoAmI>("GET", "/api/v1/identity/auth/session");
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return signIn();
    throw error;
  }
  const { items: orgs } = await api<{ items: Organisation[] }>("GET", "/api/v1/identity/organizations?limit=100");
  const org = orgs.find((o) => o.id === param("org")) ?? orgs[0];
  if (!org) return start(me.user.email);
  const available = viewNames.filter((name) => name !== "domains" || org.org_type === "content_owner");
  const view = available.find((name) => name === param("view")) ?? "overview";
  document.title = `${titles[view]} · ${org.name} · Content Telemetry`;
  return h(
    "div",
    {},
    h(
      "header",
      {},
      h("strong", { class: "brand" }, "Content Telemetry"),
      h("label", { for: "org" }, "Organisation"),
      h(
        "select",
        {
          id: "org",
          onchange: (e: Event) =>
            navigate({ org: (e.target as HTMLSelectElement).value, page: undefined, as: undefined }),
        },
        ...orgs.map((o) => h("option", { value: o.id, selected: o.id === org.id }, `${o.name} (${o.org_type})`)),
      ),
      h(
        "nav",
        { "aria-label": "Sections" },
        ...available.map((name) =>
          h(
            "a",
            {
              href: `?${new URLSearchParams({ org: org.id, view: name })}`,
              "aria-current": name === view ? "page" : undefined,
              onclick: (e: Event) => {
                e.preventDefault();
                navigate({
                  org: org.id,
                  view: name,
                  page: undefined,
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
        await api("POST", "/api/v1/identity/auth/sign-out");
        navigate({ org: undefined, view: undefined });
      }),
    ),
    h("main", {}, h("h1", {}, titles[view]), views[view](org)),
  );
}

addEventListener("popstate", () => void render());
void render();
