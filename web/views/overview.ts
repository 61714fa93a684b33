import { isUuid } from "../../src/core/uuid.ts";
import { ok, query, reads, type SummaryAnswer } from "../api.ts";
import { eventsChart } from "../chart.ts";
import { formatCount, h, readable, scrollBox } from "../dom.ts";
import { loaded } from "../feedback.ts";
import { shownDomain } from "../hosts.ts";
import { type Period, type PeriodProblem, periodOf, presets, previousOf } from "../range.ts";
import { navigate, type Organisation, param } from "../state.ts";

const tiles = [
  ["Retrievals", "content_retrieved"],
  ["Groundings", "content_grounded"],
  ["Citations", "content_cited"],
  ["Presentations", "content_presented"],
  ["Engagements", "content_engaged"],
] as const;

/**
 * Whose data the overview shows: an owner's own; for a platform or agent, what it
 * reported, or (`as` in the URL) a grantor's, through its delegation, exactly as
 * the grantor sees it.
 */
const showsOwnersData = (org: Organisation) => org.org_type === "content_owner" || Boolean(param("as"));
const readsOf = (org: Organisation) => (showsOwnersData(org) ? reads["content-owners"] : reads.agent);
type Reads = ReturnType<typeof readsOf>;
const periodQuery = (org: Organisation, period: Period) => ({
  org_id: org.id,
  delegated_from: org.org_type === "content_owner" ? undefined : (param("as") ?? undefined),
  since: period.since.toISOString(),
  until: period.until.toISOString(),
});

/** The overview: KPI tiles (with the previous period), the chart, top URLs, sources and agents, export. */
export function overview(org: Organisation): HTMLElement {
  const period = periodOf(param("range"), param("since"), param("until"));
  const compare = param("compare") === "1";
  const grantor = org.org_type === "content_owner" ? null : param("as");
  return h(
    "div",
    {},
    grantor
      ? h(
          "p",
          { class: "notice" },
          "Reading the data of content owner ",
          h("code", {}, grantor),
          " through its delegation, as it sees it. ",
          h(
            "button",
            { type: "button", class: "link", onclick: () => navigate({ as: undefined }) },
            "Back to your own",
          ),
        )
      : null,
    rangeControls(period, compare),
    // Never another period's figures under this one's name.
    "problem" in period
      ? h("p", { class: "notice", role: "alert" }, period.problem)
      : grantor
        ? delegatedFigures(org, grantor, period, compare)
        : figures(org, period, compare),
  );
}

const summaryOf = (org: Organisation, period: Period) =>
  ok(readsOf(org).summary.get({ query: periodQuery(org, period) }));

/**
 * A grantor's figures, once its summary shows the delegation still reads: one
 * refusal (revoked, never granted, no such owner) said once, with no export links
 * that would be refused too, instead of the same refusal in every region.
 */
function delegatedFigures(org: Organisation, grantor: string, period: Period, compare: boolean): HTMLElement {
  if (!isUuid(grantor)) {
    return h("p", { class: "notice", role: "alert" }, "This address names no content owner to read as.");
  }
  const current = summaryOf(org, period);
  return loaded("The owner's figures", async () => {
    await current;
    return h("div", {}, ...figures(org, period, compare, 3, current));
  });
}

/**
 * Everything the overview shows of one period, each region under a heading of
 * `level`; `current`, its summary when already asked for.
 */
function figures(
  org: Organisation,
  period: Period,
  compare: boolean,
  level: 2 | 3 = 2,
  current = summaryOf(org, period),
): HTMLElement[] {
  const api = readsOf(org);
  const part = (title: string, load: () => Promise<Node>) => loaded(title, load, level);
  return [
    part("Totals", async () => {
      const [now, before] = await Promise.all([current, compare ? summaryOf(org, previousOf(period)) : null]);
      const unverified = org.org_type === "content_owner" && now.domains.length === 0;
      return h("div", {}, unverified ? verifyFirst() : null, kpiTiles(now, before));
    }),
    part("Events over time", async () =>
      eventsChart(
        await ok(api.timeseries.get({ query: { ...periodQuery(org, period), interval: period.interval } })),
        period,
      ),
    ),
    topUrls(api, org, period, level),
    part("Sources, agents and domains", async () => {
      const summary = await current;
      // What an agent reported has no domains of its own: its reads never list any.
      if (!showsOwnersData(org)) return breakdowns(summary, null);
      // Per domain: the same summary narrowed with `domain`, for each of the owner's (at most a few dozen).
      const perDomain = await Promise.all(
        summary.domains.slice(0, maxDomainBreakdown).map(async (domain) => ({
          domain,
          summary: await ok(api.summary.get({ query: { ...periodQuery(org, period), domain } })),
        })),
      );
      return breakdowns(summary, perDomain);
    }),
    exportLinks(api, org, period),
  ];
}

function rangeControls(period: Period | PeriodProblem, compare: boolean): HTMLElement {
  // The days as asked for, even when they make no period, so that they can be corrected.
  const day = (date: Date | undefined, asked: string | null) =>
    date ? date.toISOString().slice(0, 10) : (asked ?? "");
  const shown = "problem" in period ? undefined : period;
  const chosen = param("range") ?? "30d";
  const select = h(
    "select",
    {
      id: "range",
      // Custom starts from the whole days of the period shown (its first and last day,
      // named in the period line): a preset ends on the hour, so the figures move by
      // the hours that rounding to days adds or leaves out.
      onchange: (e: Event) => {
        const range = (e.target as HTMLSelectElement).value;
        const days =
          range === "custom" && shown ? { since: day(shown.since, null), until: day(shown.until, null) } : {};
        navigate({ range, ...days, page: undefined });
      },
    },
    ...Object.entries(presets).map(([value, preset]) =>
      h("option", { value, selected: value === chosen }, `Last ${preset.label}`),
    ),
    h("option", { value: "custom", selected: chosen === "custom" }, "Custom…"),
  );
  const custom = h(
    "form",
    { class: "inline", hidden: chosen !== "custom" },
    h("label", { for: "since" }, "From"),
    h("input", {
      id: "since",
      name: "since",
      type: "date",
      min: "0001-01-01",
      max: "9999-12-31",
      value: day(shown?.since, param("since")),
      required: true,
    }),
    h("label", { for: "until" }, "to (exclusive)"),
    h("input", {
      id: "until",
      name: "until",
      type: "date",
      min: "0001-01-02",
      max: "9999-12-31",
      value: day(shown?.until, param("until")),
      required: true,
    }),
    h("button", { type: "submit" }, "Show"),
  );
  custom.addEventListener("submit", (event) => {
    event.preventDefault();
    const form = new FormData(custom);
    navigate({ range: "custom", since: String(form.get("since")), until: String(form.get("until")), page: undefined });
  });
  return h(
    "div",
    { class: "controls" },
    h("label", { for: "range" }, "Period"),
    select,
    custom,
    h(
      "label",
      { class: "check" },
      h("input", {
        type: "checkbox",
        id: "compare",
        checked: compare,
        onchange: (e: Event) => navigate({ compare: (e.target as HTMLInputElement).checked ? "1" : undefined }),
      }),
      "Compare with the previous period",
    ),
    shown
      ? h("p", { class: "muted" }, `${readable(shown.since)} to ${readable(shown.until)} UTC (the end not included)`)
      : null,
  );
}

/** Why an owner without a verified domain sees only zeros, and where to go about it. */
function verifyFirst(): HTMLElement {
  return h(
    "p",
    { class: "notice" },
    "None of your domains is verified yet: telemetry on a domain shows here once it is. ",
    h("button", { type: "button", class: "link", onclick: () => navigate({ view: "domains" }) }, "Verify a domain"),
  );
}

function kpiTiles(current: SummaryAnswer, previous: SummaryAnswer | null): HTMLElement {
  const countOf = (summary: SummaryAnswer, type: string) =>
    summary.events_by_type.find((t) => t.event_type === type)?.count ?? 0;
  const tile = (label: string, now: number, before: number | undefined) =>
    h(
      "div",
      { class: "tile" },
      h("span", { class: "label" }, label),
      h("strong", { class: "value", "data-kpi": label }, formatCount(now)),
      before === undefined ? null : h("span", { class: "delta" }, change(now, before)),
    );
  return h(
    "div",
    { class: "tiles" },
    ...tiles.map(([label, type]) =>
      tile(label, countOf(current, type), previous ? countOf(previous, type) : undefined),
    ),
    tile("Sessions", current.total_sessions, previous?.total_sessions),
  );
}

function change(now: number, before: number): string {
  if (before === 0) return now === 0 ? "no change" : "new in this period";
  const percent = ((now - before) / before) * 100;
  return `${percent >= 0 ? "+" : ""}${percent.toFixed(1)}% on the previous period`;
}

const pageSize = 20;

function topUrls(api: Reads, org: Organisation, period: Period, level: 2 | 3): HTMLElement {
  const page = Math.max(0, Number(param("page") ?? 0) || 0);
  // At most what the API takes (url_contains, 1 to 200 characters): an edited link's longer text is cut there.
  const search = param("url")?.slice(0, 200) || undefined;
  const sort = param("sort") === "sessions" ? "sessions" : "events";
  return loaded(
    "Top URLs",
    async (heading) => {
      // Ranked, searched and paged by the API (sort, url_contains), over every URL of the period.
      const answer = await ok(
        api.urls.get({
          query: { ...periodQuery(org, period), sort, url_contains: search, limit: pageSize, offset: page * pageSize },
        }),
      );
      const searchForm = h(
        "form",
        { class: "inline", role: "search" },
        h("label", { for: "url-search" }, "Search URLs"),
        h("input", { type: "search", id: "url-search", name: "url", value: search ?? "", maxlength: 200 }),
        h("button", { type: "submit" }, "Search"),
      );
      searchForm.addEventListener("submit", (event) => {
        event.preventDefault();
        const text = String(new FormData(searchForm).get("url") ?? "").trim();
        navigate({ url: text || undefined, page: undefined });
      });
      const last = Math.max(0, Math.ceil(answer.total / pageSize) - 1);
      // Why a page holds no URL: none in the period, none containing the search, or a page past the last.
      const none =
        page > last
          ? `Page ${page + 1} is past the last one (${last + 1}).`
          : search
            ? `No URL contains “${search}” in this period.`
            : "No URLs in this period.";
      const body = h(
        "tbody",
        {},
        answer.items.length === 0 ? h("tr", {}, h("td", { colspan: 4, class: "muted" }, none)) : null,
        ...answer.items.map((item) =>
          h(
            "tr",
            {},
            h("td", { class: "url" }, item.content_url),
            h("td", { class: "num" }, formatCount(item.total_events)),
            h("td", { class: "num" }, formatCount(item.unique_sessions)),
            h("td", {}, item.event_types.map((t) => `${t.event_type} ${formatCount(t.count)}`).join(", ")),
          ),
        ),
      );
      const sortButton = (label: string, key: typeof sort) =>
        h(
          "button",
          {
            type: "button",
            id: `sort-${key}`,
            class: "link",
            "aria-pressed": String(key === sort),
            onclick: () => navigate({ sort: key === "events" ? undefined : key, page: undefined }),
          },
          label,
        );
      // The count, once the API has told it; the table is named by the heading, count and all.
      heading.textContent = `Top URLs (${formatCount(answer.total)})`;
      heading.id = "top-urls";
      return h(
        "div",
        {},
        searchForm,
        scrollBox(
          h(
            "table",
            { "aria-labelledby": "top-urls" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                h("th", { scope: "col" }, "URL"),
                h("th", { scope: "col" }, sortButton("Events", "events")),
                h("th", { scope: "col" }, sortButton("Sessions", "sessions")),
                h("th", { scope: "col" }, "By type"),
              ),
            ),
            body,
          ),
        ),
        h(
          "nav",
          { class: "pager", "aria-label": "URL pages" },
          h(
            "button",
            {
              type: "button",
              id: "urls-previous",
              disabled: page === 0,
              // From past the last page, back to the last.
              onclick: () => navigate({ page: String(Math.min(page - 1, last)) }),
            },
            "Previous",
          ),
          h("span", {}, `Page ${page + 1} of ${last + 1}`),
          h(
            "button",
            {
              type: "button",
              id: "urls-next",
              disabled: page >= last,
              onclick: () => navigate({ page: String(page + 1) }),
            },
            "Next",
          ),
        ),
      );
    },
    level,
  );
}

const maxDomainBreakdown = 25;

/** The breakdowns by source, agent and (`perDomain`, an owner's view only) domain. */
function breakdowns(
  summary: SummaryAnswer,
  perDomain: { domain: string; summary: SummaryAnswer }[] | null,
): HTMLElement {
  const table = (caption: string, heads: string[], rows: (string | number)[][]) =>
    scrollBox(
      h(
        "table",
        {},
        h("caption", {}, caption),
        h("thead", {}, h("tr", {}, ...heads.map((head) => h("th", { scope: "col" }, head)))),
        h(
          "tbody",
          {},
          rows.length === 0
            ? h("tr", {}, h("td", { colspan: heads.length, class: "muted" }, "None in this period."))
            : null,
          ...rows.map((row) =>
            h(
              "tr",
              {},
              ...row.map((cell) =>
                h(
                  "td",
                  { class: typeof cell === "number" ? "num" : "" },
                  typeof cell === "number" ? formatCount(cell) : cell,
                ),
              ),
            ),
          ),
        ),
      ),
    );
  return h(
    "div",
    { class: "columns" },
    table(
      "By source role",
      ["Source", "Events", "Sessions"],
      summary.events_by_source.map((s) => [s.source_role, s.count, s.sessions]),
    ),
    table(
      "By agent",
      ["Platform (organisation id)", "Agent", "Events", "Sessions"],
      summary.agents.map((a) => [a.platform_id, a.agent_id ?? "(none)", a.event_count, a.session_count]),
    ),
    perDomain
      ? table(
          "By domain",
          ["Domain", "Events", "Sessions"],
          perDomain.map((d) => [shownDomain(d.domain), d.summary.total_events, d.summary.total_sessions]),
        )
      : null,
  );
}

function exportLinks(api: Reads, org: Organisation, period: Period): HTMLElement {
  const link = (format: "csv" | "ndjson") =>
    h(
      "a",
      {
        href: `${api.export["~path"]}?${query({ ...periodQuery(org, period), format })}`,
        download: `events.${format}`,
      },
      format.toUpperCase(),
    );
  return h("p", {}, "Export the events of this period: ", link("csv"), " · ", link("ndjson"));
}
