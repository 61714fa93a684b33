import { type DataOf, identity, ok } from "../api.ts";
import { h, scrollBox } from "../dom.ts";
import { errorNote, loaded, onPress, submitting } from "../feedback.ts";
import { navigate, type Organisation } from "../state.ts";

type Settings = DataOf<typeof identity.settings.get>;

const api = identity.members;
const roles = ["member", "admin", "owner"] as const;
/** A role picked from a select whose options are `roles`. */
const picked = (value: FormDataEntryValue | null) => roles.find((role) => role === value) ?? "member";

/** Members and their roles, invitations, and the organisation's settings flags. */
export function members(org: Organisation): HTMLElement {
  const inOrg = { query: { org_id: org.id } };
  const inviteForm = h(
    "form",
    { class: "card" },
    h("h2", {}, "Invite someone"),
    h("label", { for: "invite-email" }, "Email address"),
    h("input", { id: "invite-email", name: "email", type: "email", required: true }),
    h("label", { for: "invite-role" }, "Role"),
    h("select", { id: "invite-role", name: "role" }, ...roles.map((role) => h("option", { value: role }, role))),
    h("button", { type: "submit" }, "Send invitation"),
  );
  submitting(inviteForm, async () => {
    const data = new FormData(inviteForm);
    await ok(api.invites.post({ email: String(data.get("email")), role: picked(data.get("role")) }, inOrg));
    navigate({});
  });
  return h(
    "div",
    {},
    loaded("Members", async () => {
      const { items } = await ok(api.members.get({ query: { org_id: org.id, limit: 100 } }));
      return scrollBox(
        h(
          "table",
          {},
          h("caption", {}, `Members (${items.length})`),
          h("thead", {}, h("tr", {}, ...["Email", "Role", "Since", ""].map((head) => h("th", { scope: "col" }, head)))),
          h(
            "tbody",
            {},
            ...items.map((member) => {
              const role = h(
                "select",
                { "aria-label": `Role of ${member.email}` },
                ...roles.map((r) => h("option", { value: r, selected: r === member.role }, r)),
              );
              role.addEventListener("change", () =>
                ok(api.members({ user_id: member.user_id }).patch({ role: picked(role.value) }, inOrg))
                  .then(() => navigate({}))
                  .catch((error: unknown) => role.after(errorNote(error))),
              );
              return h(
                "tr",
                {},
                h("td", {}, member.email),
                h("td", {}, role),
                h("td", {}, member.created_at.slice(0, 10)),
                h(
                  "td",
                  {},
                  onPress(h("button", { type: "button", class: "danger" }, "Remove"), async () => {
                    if (!confirm(`Remove ${member.email} from ${org.name}?`)) return;
                    await ok(api.members({ user_id: member.user_id }).delete(undefined, inOrg));
                    navigate({});
                  }),
                ),
              );
            }),
          ),
        ),
      );
    }),
    inviteForm,
    loaded("Invitations", async () => {
      const { items } = await ok(api.invites.get(inOrg));
      if (items.length === 0) return h("p", { class: "muted" }, "No open invitations.");
      return scrollBox(
        h(
          "table",
          {},
          h("caption", {}, "Open invitations"),
          h(
            "tbody",
            {},
            ...items.map((invite) =>
              h(
                "tr",
                {},
                h("td", {}, invite.email),
                h("td", {}, invite.role),
                h("td", {}, `expires ${invite.expires_at.slice(0, 10)}`),
                h(
                  "td",
                  {},
                  onPress(h("button", { type: "button", class: "danger" }, "Revoke"), async () => {
                    await ok(api.invites({ id: invite.id }).delete(undefined, inOrg));
                    navigate({});
                  }),
                ),
              ),
            ),
          ),
        ),
      );
    }),
    loaded("Settings", async () => settingsForm(org, await ok(identity.settings.get(inOrg)))),
  );
}

/** Each flag applies to one kind of organisation (the API refuses the other's). */
const flags = {
  share_sessions_via_click_tokens: {
    label: "Let GET /ctx/{token} answer for our click tokens",
    appliesTo: ["platform", "agent"],
  },
  visible_in_click_token_lookups: {
    label: "Let our URLs appear in click manifests",
    appliesTo: ["content_owner"],
  },
} as const;

function settingsForm(org: Organisation, settings: Settings): HTMLElement {
  const applicable = (Object.keys(flags) as (keyof typeof flags)[]).filter((name) =>
    (flags[name].appliesTo as readonly string[]).includes(org.org_type),
  );
  const form = h(
    "form",
    { class: "card" },
    ...applicable.map((name) =>
      h(
        "label",
        { class: "check" },
        h("input", { type: "checkbox", name, checked: settings[name] }),
        flags[name].label,
      ),
    ),
    h("p", {}, h("button", { type: "submit" }, "Save settings")),
  );
  submitting(form, async () => {
    const data = new FormData(form);
    await ok(
      identity.settings.patch(Object.fromEntries(applicable.map((name) => [name, data.has(name)])), {
        query: { org_id: org.id },
      }),
    );
    navigate({});
  });
  return form;
}
