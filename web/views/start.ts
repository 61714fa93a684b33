import { api } from "../api.ts";
import { h } from "../dom.ts";
import { submitting } from "../feedback.ts";
import { navigate } from "../state.ts";

/** A signed-in user without an organisation creates a content owner (platforms go through access requests). */
export function start(email: string): HTMLElement {
  const form = h(
    "form",
    { class: "card narrow" },
    h("h1", {}, "Create your organisation"),
    h("p", {}, `Signed in as ${email}. You belong to no organisation yet: create the content owner you publish as.`),
    h("label", { for: "org-name" }, "Organisation name"),
    h("input", { id: "org-name", name: "name", required: true, maxlength: 200 }),
    h("label", { for: "org-domain" }, "Your domain"),
    h("input", { id: "org-domain", name: "domain", required: true, maxlength: 253, placeholder: "news.example" }),
    h("button", { type: "submit" }, "Create"),
  );
  submitting(form, async () => {
    const data = new FormData(form);
    const created = await api<{ id: string }>("POST", "/api/v1/identity/organizations", {
      name: String(data.get("name") ?? ""),
      org_type: "content_owner",
      domain: String(data.get("domain") ?? ""),
    });
    navigate({ org: created.id, view: "domains" });
  });
  return form;
}
