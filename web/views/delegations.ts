import { type DataOf, identity, ok } from "../api.ts";
import { h, scrollBox } from "../dom.ts";
import { loaded, onPress, submitting } from "../feedback.ts";
import { shownDomain } from "../hosts.ts";
import { navigate, type Organisation } from "../state.ts";

const api = identity.delegations;
type DelegationRequest = DataOf<(typeof api)["delegation-requests"]["get"]>["items"][number];
const day = (at: string) => at.slice(0, 10);

/**
 * Delegations. A content owner grants and revokes them and answers the requests
 * addressed to it; a platform or agent asks for them and reads a grantor's data
 * exactly as the grantor sees it.
 */
export function delegations(org: Organisation): HTMLElement {
  return org.org_type === "content_owner" ? grantorView(org) : granteeView(org);
}

function table(caption: string, heads: string[], rows: HTMLElement[]): HTMLElement {
  return scrollBox(
    h(
      "table",
      {},
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, ...heads.map((head) => h("th", { scope: "col" }, head)))),
      h("tbody", {}, ...rows),
    ),
  );
}

type Role = "grantor" | "grantee";
const listQuery = (org: Organisation, role: Role) => ({ query: { org_id: org.id, role, limit: 100 } });
const delegationsOf = async (org: Organisation, role: Role) =>
  (await ok(api.delegations.get(listQuery(org, role)))).items;
const requestsOf = async (org: Organisation, role: Role) =>
  (await ok(api["delegation-requests"].get(listQuery(org, role)))).items;

function grantorView(org: Organisation): HTMLElement {
  const form = h(
    "form",
    { class: "card" },
    h("h2", {}, "Grant read access"),
    h("label", { for: "grantee" }, "Organisation id of the platform or agent"),
    h("input", { id: "grantee", name: "grantee", required: true, size: 40 }),
    h("button", { type: "submit" }, "Grant telemetry:read"),
  );
  submitting(form, async () => {
    await ok(
      api.delegations.post(
        { grantee_org_id: String(new FormData(form).get("grantee") ?? "").trim() },
        { query: { org_id: org.id } },
      ),
    );
    navigate({});
  });
  return h(
    "div",
    {},
    form,
    loaded("Delegations granted", async () => {
      const granted = await delegationsOf(org, "grantor");
      if (granted.length === 0) return h("p", { class: "muted" }, "No delegations granted.");
      return table(
        "Granted",
        ["Organisation", "Scopes", "Since", ""],
        granted.map((d) =>
          h(
            "tr",
            {},
            h("td", {}, h("code", {}, d.grantee_org_id)),
            h("td", {}, d.scopes.join(", ")),
            h("td", {}, day(d.created_at)),
            h(
              "td",
              {},
              onPress(h("button", { type: "button", class: "danger" }, "Revoke"), async () => {
                if (!confirm(`Revoke the read access of ${d.grantee_org_id}? Its reads are refused at once.`)) return;
                await ok(api.delegations({ id: d.id }).delete(undefined, { query: { org_id: org.id } }));
                navigate({});
              }),
            ),
          ),
        ),
      );
    }),
    loaded("Requests", async () => {
      const pending = (await requestsOf(org, "grantor")).filter((r) => r.status === "pending");
      if (pending.length === 0) return h("p", { class: "muted" }, "No requests waiting.");
      const answer = (request: DelegationRequest, verb: "approve" | "deny", label: string) =>
        onPress(h("button", { type: "button", class: verb === "deny" ? "danger" : "" }, label), async () => {
          await ok(api["delegation-requests"]({ id: request.id })[verb].post(undefined, { query: { org_id: org.id } }));
          navigate({});
        });
      return table(
        "Requests waiting for you",
        ["From", "Domain", "Expires", ""],
        pending.map((r) =>
          h(
            "tr",
            {},
            h("td", {}, h("code", {}, r.grantee_org_id)),
            h("td", {}, shownDomain(r.domain)),
            h("td", {}, day(r.expires_at)),
            h("td", {}, answer(r, "approve", "Approve"), " ", answer(r, "deny", "Deny")),
          ),
        ),
      );
    }),
  );
}

function granteeView(org: Organisation): HTMLElement {
  const form = h(
    "form",
    { class: "card" },
    h("h2", {}, "Ask a content owner for access"),
    h("label", { for: "request-domain" }, "A domain the owner has verified"),
    h("input", { id: "request-domain", name: "domain", required: true, maxlength: 253 }),
    h("button", { type: "submit" }, "Send request"),
  );
  submitting(form, async () => {
    await ok(
      api["delegation-requests"].post(
        { domain: String(new FormData(form).get("domain") ?? "").trim() },
        { query: { org_id: org.id } },
      ),
    );
    navigate({});
  });
  return h(
    "div",
    {},
    loaded("Delegations held", async () => {
      const held = await delegationsOf(org, "grantee");
      if (held.length === 0) return h("p", { class: "muted" }, "No owner has granted you access yet.");
      return table(
        "Owners whose data you may read",
        ["Owner", "Since", ""],
        held.map((d) =>
          h(
            "tr",
            {},
            h("td", {}, h("code", {}, d.grantor_org_id)),
            h("td", {}, day(d.created_at)),
            h(
              "td",
              {},
              h(
                "button",
                {
                  type: "button",
                  onclick: () => navigate({ view: "overview", as: d.grantor_org_id, page: undefined }),
                },
                "Read as this owner",
              ),
            ),
          ),
        ),
      );
    }),
    form,
    loaded("Requests filed", async () => {
      const filed = await requestsOf(org, "grantee");
      if (filed.length === 0) return h("p", { class: "muted" }, "No requests filed.");
      return table(
        "Your requests",
        ["Domain", "Status", "Expires"],
        filed.map((r) =>
          h("tr", {}, h("td", {}, shownDomain(r.domain)), h("td", {}, r.status), h("td", {}, day(r.expires_at))),
        ),
      );
    }),
  );
}
