import { identityEventTypes } from "../../src/modules/outbox/service.ts";
import { api, query } from "../api.ts";
import { h } from "../dom.ts";
import { loaded, onPress, submitting } from "../feedback.ts";
import { navigate, type Organisation } from "../state.ts";

interface Endpoint {
  id: string;
  url: string;
  event_types: string[];
  last_success_at: string | null;
  failing_since: string | null;
}

interface Delivery {
  id: string;
  event_type: string;
  event_created_at: string;
  status: string;
  attempt_count: number;
}

const base = "/api/v1/identity";

/** Webhook endpoints (the signing secret shown once), their delivery log, redelivery and a test ping. */
export function webhooks(org: Organisation): HTMLElement {
  const inOrg = (path: string, extra: Record<string, string | number> = {}) =>
    `${base}/${path}?${query({ org_id: org.id, ...extra })}`;
  const created = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { class: "card" },
    h("h2", {}, "New endpoint"),
    h("label", { for: "webhook-url" }, "https URL"),
    h("input", { id: "webhook-url", name: "url", type: "url", required: true, size: 50 }),
    h(
      "fieldset",
      {},
      h("legend", {}, "Events"),
      ...identityEventTypes.map((type) =>
        h(
          "label",
          { class: "check" },
          h("input", { type: "checkbox", name: "event_types", value: type, checked: true }),
          type,
        ),
      ),
    ),
    h("button", { type: "submit" }, "Create endpoint"),
  );
  submitting(form, async () => {
    const data = new FormData(form);
    const endpoint = await api<Endpoint & { secret: string }>("POST", inOrg("webhooks"), {
      url: String(data.get("url") ?? ""),
      event_types: data.getAll("event_types").map(String),
    });
    created.replaceChildren(
      h(
        "div",
        { class: "notice" },
        h("p", {}, `Endpoint created. Its signing secret is shown only this once:`),
        h("p", {}, h("code", { id: "webhook-secret" }, endpoint.secret)),
      ),
    );
    form.reset();
    list.replaceChildren(endpointList());
  });
  const endpointList = () =>
    loaded("Endpoints", async () => {
      const { items } = await api<{ items: Endpoint[] }>("GET", inOrg("webhooks"));
      if (items.length === 0) return h("p", { class: "muted" }, "No endpoints.");
      return h("div", {}, ...items.map((endpoint) => endpointCard(endpoint)));
    });
  const endpointCard = (endpoint: Endpoint) =>
    h(
      "article",
      { class: "card" },
      h("h3", {}, endpoint.url),
      h(
        "p",
        { class: "muted" },
        `${endpoint.event_types.join(", ")}; last success ${endpoint.last_success_at ?? "never"}`,
        endpoint.failing_since ? `; failing since ${endpoint.failing_since}` : "",
      ),
      h(
        "p",
        {},
        onPress(h("button", { type: "button" }, "Send a test ping"), async () => {
          await api("POST", inOrg(`webhooks/${endpoint.id}/ping`));
          navigate({});
        }),
        " ",
        onPress(h("button", { type: "button", class: "danger" }, "Delete"), async () => {
          if (!confirm(`Delete the endpoint ${endpoint.url}?`)) return;
          await api("DELETE", inOrg(`webhooks/${endpoint.id}`));
          navigate({});
        }),
      ),
      loaded("Deliveries", async () => {
        const { items } = await api<{ items: Delivery[] }>(
          "GET",
          inOrg(`webhooks/${endpoint.id}/deliveries`, { limit: 20 }),
        );
        if (items.length === 0) return h("p", { class: "muted" }, "No deliveries yet.");
        return h(
          "table",
          {},
          h("caption", {}, "Latest deliveries"),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["Event", "Created", "Status", "Attempts", ""].map((head) => h("th", { scope: "col" }, head)),
            ),
          ),
          h(
            "tbody",
            {},
            ...items.map((delivery) =>
              h(
                "tr",
                {},
                h("td", {}, delivery.event_type),
                h("td", {}, delivery.event_created_at.replace("T", " ").slice(0, 19)),
                h("td", {}, delivery.status),
                h("td", { class: "num" }, delivery.attempt_count),
                h(
                  "td",
                  {},
                  onPress(h("button", { type: "button" }, "Redeliver"), async () => {
                    await api("POST", inOrg(`webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver`));
                    navigate({});
                  }),
                ),
              ),
            ),
          ),
        );
      }),
    );
  const list = h("div", {}, endpointList());
  return h("div", {}, form, created, list);
}
