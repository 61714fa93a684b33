import { identityEventTypes } from "../../src/modules/outbox/service.ts";
import { type DataOf, identity, ok } from "../api.ts";
import { h, scrollBox } from "../dom.ts";
import { loaded, onPress, submitting } from "../feedback.ts";
import { navigate, type Organisation } from "../state.ts";

const api = identity.webhooks;
type Endpoint = DataOf<typeof api.get>["items"][number];

/** Webhook endpoints (the signing secret shown once), their delivery log, redelivery and a test ping. */
export function webhooks(org: Organisation): HTMLElement {
  const inOrg = { query: { org_id: org.id } };
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
    const endpoint = await ok(
      api.post({ url: String(data.get("url") ?? ""), event_types: data.getAll("event_types").map(String) }, inOrg),
    );
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
      const { items } = await ok(api.get(inOrg));
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
          await ok(api({ id: endpoint.id }).ping.post(undefined, inOrg));
          navigate({});
        }),
        " ",
        onPress(h("button", { type: "button", class: "danger" }, "Delete"), async () => {
          if (!confirm(`Delete the endpoint ${endpoint.url}?`)) return;
          await ok(api({ id: endpoint.id }).delete(undefined, inOrg));
          navigate({});
        }),
      ),
      loaded(
        "Deliveries",
        async () => {
          const { items } = await ok(api({ id: endpoint.id }).deliveries.get({ query: { org_id: org.id, limit: 20 } }));
          if (items.length === 0) return h("p", { class: "muted" }, "No deliveries yet.");
          return scrollBox(
            h(
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
                        await ok(
                          api({ id: endpoint.id })
                            .deliveries({ delivery_id: delivery.id })
                            .redeliver.post(undefined, inOrg),
                        );
                        navigate({});
                      }),
                    ),
                  ),
                ),
              ),
            ),
          );
        },
        // A part of the endpoint's card, under its h3.
        4,
      ),
    );
  const list = h("div", {}, endpointList());
  return h("div", {}, form, created, list);
}
