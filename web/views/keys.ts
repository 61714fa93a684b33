import { identity, ok } from "../api.ts";
import { h, scrollBox } from "../dom.ts";
import { loaded, onPress, submitting } from "../feedback.ts";
import { navigate, type Organisation } from "../state.ts";

const scopes = ["telemetry:read", "telemetry:write", "identity:read", "identity:write"] as const;
const when = (at: string | null) => (at ? new Date(at).toISOString().replace("T", " ").slice(0, 16) : "never");

/** API keys: create with chosen scopes (the raw key shown once, with a copy button), list, revoke. */
export function keys(org: Organisation): HTMLElement {
  const fresh = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { class: "card" },
    h("h2", {}, "New key"),
    h("label", { for: "key-name" }, "Name"),
    h("input", { id: "key-name", name: "name", maxlength: 200, placeholder: "e.g. CDN edge emitter" }),
    h(
      "fieldset",
      {},
      h("legend", {}, "Scopes"),
      ...scopes.map((scope) =>
        h(
          "label",
          { class: "check" },
          h("input", { type: "checkbox", name: "scopes", value: scope, checked: scope.startsWith("telemetry") }),
          scope,
        ),
      ),
    ),
    h("button", { type: "submit" }, "Create key"),
  );
  submitting(form, async () => {
    const data = new FormData(form);
    const created = await ok(
      identity.keys.post(
        { name: String(data.get("name") ?? "") || null, scopes: data.getAll("scopes").map(String) },
        { query: { org_id: org.id } },
      ),
    );
    const raw = h("code", { id: "raw-key" }, created.key);
    const copy = h("button", { type: "button" }, "Copy");
    copy.addEventListener("click", async () => {
      await navigator.clipboard.writeText(created.key).catch(() => undefined);
      copy.textContent = "Copied";
    });
    fresh.replaceChildren(
      h(
        "div",
        { class: "notice" },
        h("p", {}, `Key ${created.prefix} created. Copy it now: it is shown only this once.`),
        h("p", {}, raw, " ", copy),
      ),
    );
    form.reset();
    list.replaceChildren(keyList(org));
  });
  const list = h("div", {}, keyList(org));
  return h("div", {}, form, fresh, list);
}

function keyList(org: Organisation): HTMLElement {
  return loaded("Keys", async () => {
    const page = await ok(identity.keys.get({ query: { org_id: org.id, limit: 100 } }));
    if (page.items.length === 0) return h("p", { class: "muted" }, "No keys yet.");
    return scrollBox(
      h(
        "table",
        {},
        h("caption", {}, `Keys (${page.total})`),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["Prefix", "Name", "Scopes", "Created", "Last used", ""].map((head) => h("th", { scope: "col" }, head)),
          ),
        ),
        h(
          "tbody",
          {},
          ...page.items.map((key) =>
            h(
              "tr",
              {},
              h("td", {}, h("code", {}, key.prefix)),
              h("td", {}, key.name ?? ""),
              h("td", {}, key.scopes.length > 0 ? key.scopes.join(", ") : "none (a key that may do nothing)"),
              h("td", {}, when(key.created_at)),
              h("td", {}, when(key.last_used_at)),
              h(
                "td",
                {},
                key.revoked_at
                  ? `revoked ${when(key.revoked_at)}`
                  : onPress(h("button", { type: "button", class: "danger" }, "Revoke"), async () => {
                      if (!confirm(`Revoke ${key.prefix}? Emitters using it are refused at once.`)) return;
                      await ok(identity.keys({ id: key.id }).delete(undefined, { query: { org_id: org.id } }));
                      navigate({});
                    }),
              ),
            ),
          ),
        ),
      ),
    );
  });
}
