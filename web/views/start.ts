import { identity, ok } from "../api.ts";
import { h } from "../dom.ts";
import { loaded, onPress, submitting } from "../feedback.ts";
import { navigate } from "../state.ts";

const accessRequestTypes = ["platform", "agent"] as const;

/**
 * A signed-in user without an organisation: claim an invitation, create a content
 * owner, or ask the operators for a platform or agent organisation.
 */
export function start(email: string): HTMLElement {
  return h(
    "div",
    {},
    h("p", {}, `Signed in as ${email}. You belong to no organisation yet.`),
    loaded("Invitations for you", async () => {
      const { items } = await ok(identity.members.me.invites.get());
      if (items.length === 0) return null;
      return h(
        "div",
        { class: "card" },
        ...items.map((invite) =>
          h(
            "p",
            {},
            `${invite.organization_name} (as ${invite.role}) `,
            onPress(h("button", { type: "button" }, "Join"), async () => {
              const claimed = await ok(identity.members.invites({ id: invite.id }).claim.post());
              navigate({ org: claimed.organization_id });
            }),
          ),
        ),
      );
    }),
    ownerForm(),
    accessRequestForm(),
  );
}

function ownerForm(): HTMLElement {
  const form = h(
    "form",
    { class: "card" },
    h("h2", {}, "Create a content owner"),
    h("p", { class: "muted" }, "For publishers: you verify your domains and see what agents do with your content."),
    h("label", { for: "org-name" }, "Organisation name"),
    h("input", { id: "org-name", name: "name", required: true, maxlength: 200 }),
    h("label", { for: "org-domain" }, "Your domain"),
    h("input", { id: "org-domain", name: "domain", required: true, maxlength: 253, placeholder: "news.example" }),
    h("button", { type: "submit" }, "Create"),
  );
  submitting(form, async () => {
    const data = new FormData(form);
    const created = await ok(
      identity.organizations.organizations.post({
        name: String(data.get("name") ?? ""),
        org_type: "content_owner",
        domain: String(data.get("domain") ?? ""),
      }),
    );
    navigate({ org: created.id, view: "domains" });
  });
  return form;
}

function accessRequestForm(): HTMLElement {
  const form = h(
    "form",
    { class: "card" },
    h("h2", {}, "Ask for a platform or agent organisation"),
    h("p", { class: "muted" }, "For AI platforms, agents and emitters; an operator reviews the request."),
    h("label", { for: "request-type" }, "Kind"),
    h(
      "select",
      { id: "request-type", name: "type" },
      ...accessRequestTypes.map((type) => h("option", { value: type }, type)),
    ),
    h("label", { for: "request-name" }, "Organisation name"),
    h("input", { id: "request-name", name: "org_name", required: true, maxlength: 200 }),
    h("label", { for: "request-email" }, "Administrator's email"),
    h("input", { id: "request-email", name: "admin_email", type: "email", required: true }),
    h("label", { for: "request-use" }, "What you will report"),
    h("input", { id: "request-use", name: "use_case", required: true, maxlength: 4000, size: 50 }),
    h("button", { type: "submit" }, "Send request"),
  );
  submitting(form, async () => {
    const data = new FormData(form);
    const request = {
      org_name: String(data.get("org_name") ?? ""),
      admin_email: String(data.get("admin_email") ?? ""),
      use_case: String(data.get("use_case") ?? ""),
    };
    const api = identity.accessRequests;
    await ok(
      data.get("type") === "agent"
        ? api["agent-access-requests"].post(request)
        : api["platform-access-requests"].post(request),
    );
    navigate({});
  });
  return h(
    "div",
    {},
    form,
    loaded("Your requests", async () => {
      const api = identity.accessRequests;
      const [platform, agent] = await Promise.all([
        ok(api["platform-access-requests"].get()),
        ok(api["agent-access-requests"].get()),
      ]);
      const requests = [...platform.items, ...agent.items];
      if (requests.length === 0) return null;
      return h(
        "ul",
        {},
        ...requests.map((r) =>
          h("li", {}, `${r.org_name}: ${r.status}${r.reviewer_note ? ` (${r.reviewer_note})` : ""}`),
        ),
      );
    }),
  );
}
