import { type DataOf, identity, ok } from "../api.ts";
import { h, scrollBox } from "../dom.ts";
import { loaded, onPress } from "../feedback.ts";
import { navigate } from "../state.ts";

const { admin: operator } = identity.accessRequests;
type AccessRequest = DataOf<(typeof operator)["access-requests"]["get"]>["items"][number];

/** Operator admins: the access-request queue (approve, or reject with a note) and every organisation. */
export function admin(): HTMLElement {
  return h(
    "div",
    {},
    loaded("Access requests", async (heading) => {
      const { items } = await ok(operator["access-requests"].get({ query: { limit: 100 } }));
      if (items.length === 0) return h("p", { class: "muted" }, "No access requests waiting.");
      heading.textContent = `Access requests waiting (${items.length})`;
      return h("div", {}, ...items.map(requestCard));
    }),
    loaded("Organisations", async () => {
      const page = await ok(identity.organizations.admin.organizations.get({ query: { limit: 100 } }));
      return scrollBox(
        h(
          "table",
          {},
          h("caption", {}, `Organisations (${page.total})`),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["Name", "Type", "Verified domains", "Members", "Created", "Id"].map((head) =>
                h("th", { scope: "col" }, head),
              ),
            ),
          ),
          h(
            "tbody",
            {},
            ...page.items.map((org) =>
              h(
                "tr",
                {},
                h("td", {}, org.name),
                h("td", {}, org.org_type),
                h("td", {}, org.verified_domains.join(", ")),
                h("td", { class: "num" }, org.members),
                h("td", {}, org.created_at.slice(0, 10)),
                h("td", {}, h("code", {}, org.id)),
              ),
            ),
          ),
        ),
      );
    }),
  );
}

function requestCard(request: AccessRequest): HTMLElement {
  const note = h("input", { id: `note-${request.id}`, maxlength: 4000, size: 40 });
  const review = (action: "approve" | "reject", label: string) =>
    onPress(h("button", { type: "button", class: action === "reject" ? "danger" : "" }, label), async () => {
      await ok(operator["access-requests"]({ id: request.id })[action].post(note.value ? { note: note.value } : {}));
      navigate({});
    });
  return h(
    "article",
    { class: "card", "data-request": request.id },
    h("h3", {}, `${request.org_name} (${request.org_type})`),
    h("p", {}, `Asked by ${request.admin_email} on ${request.created_at.slice(0, 10)}:`),
    h("blockquote", {}, request.use_case),
    h("label", { for: `note-${request.id}` }, "Note to the requester (optional)"),
    note,
    h("p", {}, review("approve", "Approve"), " ", review("reject", "Reject")),
  );
}
