import { type DataOf, identity, ok } from "../api.ts";
import { h } from "../dom.ts";
import { loaded, onPress, submitting } from "../feedback.ts";
import { shownDomain } from "../hosts.ts";
import { navigate, type Organisation } from "../state.ts";

type DomainRecord = DataOf<typeof identity.domains.get>["items"][number];

/** Domains: add one, follow the verification instructions, see its status. */
export function domains(org: Organisation): HTMLElement {
  const form = h(
    "form",
    { class: "card" },
    h("h2", {}, "Add a domain"),
    h("label", { for: "new-domain" }, "Domain"),
    h("input", { id: "new-domain", name: "domain", required: true, maxlength: 253, placeholder: "news.example" }),
    h("button", { type: "submit" }, "Add"),
  );
  submitting(form, async () => {
    await ok(
      identity.domains.post({ domain: String(new FormData(form).get("domain") ?? "") }, { query: { org_id: org.id } }),
    );
    navigate({});
  });
  return h(
    "div",
    {},
    form,
    loaded("Domains", async () => {
      const page = await ok(identity.domains.get({ query: { org_id: org.id, limit: 100 } }));
      if (page.items.length === 0) return h("p", { class: "muted" }, "No domains yet.");
      return h("div", {}, ...page.items.map((domain) => domainCard(org, domain)));
    }),
  );
}

function domainCard(org: Organisation, domain: DomainRecord): HTMLElement {
  const status =
    domain.state === "verified" ? `verified ${domain.verified_at?.slice(0, 10) ?? ""}` : "not verified yet";
  const verify = (method: "dns_txt" | "https_file", label: string) =>
    onPress(h("button", { type: "button" }, label), async () => {
      await ok(identity.domains({ domain: domain.domain }).verify.post({ method }, { query: { org_id: org.id } }));
      navigate({});
    });
  const steps = domain.verification;
  return h(
    "article",
    { class: "card", "data-domain": domain.domain },
    h("h3", {}, shownDomain(domain.domain), " ", h("span", { class: `badge ${domain.state}` }, status)),
    steps
      ? h(
          "div",
          {},
          h("p", {}, "Publish one of these, then check it:"),
          h(
            "ol",
            {},
            h(
              "li",
              {},
              "a DNS TXT record ",
              h("code", {}, steps.dns_txt.name),
              " with the value ",
              h("code", {}, steps.dns_txt.value),
              " ",
              verify("dns_txt", "Check DNS"),
            ),
            h(
              "li",
              {},
              "or the file ",
              h("code", {}, steps.https_file.url),
              " containing ",
              h("code", {}, steps.https_file.body),
              " ",
              verify("https_file", "Check file"),
            ),
          ),
        )
      : null,
  );
}
