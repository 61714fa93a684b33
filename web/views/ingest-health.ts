import { type DataOf, identity, ok } from "../api.ts";
import { countsChart, everyBucket } from "../chart.ts";
import { formatCount, h } from "../dom.ts";
import { loaded } from "../feedback.ts";
import { hourMs } from "../range.ts";
import type { Organisation } from "../state.ts";

type Health = DataOf<typeof identity.ingestHealth.get>;

const hours = 48;

/**
 * For emitters: what the service accepted and refused per hour, and the latest
 * refusals with their exact errors; two regions of one answer.
 */
export function ingestHealth(org: Organisation): HTMLElement {
  const health = ok(identity.ingestHealth.get({ query: { org_id: org.id, hours } }));
  return h(
    "div",
    {},
    loaded(`Last ${hours} hours`, async () => hourly(await health)),
    loaded("Latest refused requests", async () => refusalList((await health).refusals)),
  );
}

function hourly(health: Health): HTMLElement {
  const until = new Date(Math.ceil(Date.now() / hourMs) * hourMs);
  const period = { since: new Date(until.getTime() - hours * hourMs), until, interval: "hour" as const };
  const starts = everyBucket(period, "hour");
  const byHour = new Map(health.hours.map((row) => [Date.parse(row.hour), row]));
  const totals = health.hours.reduce(
    (sum, row) => ({ accepted: sum.accepted + row.accepted_events, refused: sum.refused + row.refused_events }),
    { accepted: 0, refused: 0 },
  );
  return h(
    "div",
    {},
    h(
      "p",
      {},
      `${formatCount(totals.accepted)} events accepted, ${formatCount(totals.refused)} refused. `,
      h("span", { class: "muted" }, `Counts are written every ${health.flushed_every_seconds} s.`),
    ),
    countsChart(
      starts,
      [
        { label: "accepted events", values: starts.map((s) => byHour.get(s)?.accepted_events ?? 0) },
        { label: "refused events", values: starts.map((s) => byHour.get(s)?.refused_events ?? 0) },
      ],
      period,
      "hour",
      "Events per hour (UTC)",
      "No ingest in the last 48 hours.",
    ),
  );
}

function refusalList(refusals: Health["refusals"]): HTMLElement {
  if (refusals.length === 0) return h("p", { class: "muted" }, "No refused requests in the last 7 days.");
  return h(
    "div",
    {},
    ...refusals.map((refusal) =>
      h(
        "article",
        { class: "card refusal" },
        h(
          "h3",
          {},
          `${refusal.status} ${refusal.code}`,
          h("span", { class: "muted" }, ` ${refusal.path}, ${refusal.received_at.replace("T", " ").slice(0, 19)} UTC`),
        ),
        refusal.detail ? h("p", {}, refusal.detail) : null,
        refusal.errors.length > 0
          ? h(
              "ul",
              {},
              // Kept as the refusal sent them: problem field errors, { path, message }.
              ...(refusal.errors as { path?: string; message?: string }[]).map((error) =>
                h("li", {}, h("code", {}, error.path ?? "/"), ` ${error.message ?? ""}`),
              ),
            )
          : null,
        h(
          "p",
          { class: "muted" },
          `${refusal.events} events in the request`,
          refusal.request_id ? `; request id ${refusal.request_id}` : "",
        ),
      ),
    ),
  );
}
