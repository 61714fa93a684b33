import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { accessPlugin, admittedPrincipal } from "../../http/access.ts";
import { pageOf } from "../../http/paging.ts";
import { resolveOwnerScope, resolveReporterScope } from "./access.ts";
import { exportFormat, exportResponse } from "./export.ts";
import {
  AgentEventsQuery,
  AgentExportQuery,
  AgentSummaryQuery,
  AgentTimeseriesQuery,
  AgentUrlsQuery,
  EventPage,
  eventsPage,
  OwnerEventsQuery,
  OwnerExportQuery,
  OwnerSummaryQuery,
  OwnerTimeseriesQuery,
  OwnerUrlsQuery,
  Summary,
  Timeseries,
  UrlPage,
  urlsPage,
} from "./model.ts";
import { maxTimeseriesBuckets, parseRange, parseTimeseriesRange } from "./params.ts";
import { listEvents, listUrls, summarize, timeseries } from "./service.ts";

const exportDetail = {
  description:
    "Every event of the range, oldest first, without paging, streamed in constant memory. NDJSON (one event list item per line) or CSV with a header row (event_data as JSON), chosen by `format` or the Accept header.",
  responses: {
    200: {
      description: "The events",
      content: {
        "application/x-ndjson": { schema: { type: "string" as const } },
        "text/csv": { schema: { type: "string" as const } },
      },
    },
  },
};

/**
 * `read: "owner"` beside `key: "telemetry:read"` resolves whose data the read shows
 * (the key's own organisation, or a grantor's through `delegated_from`, narrowed by
 * `domain`; 403 otherwise); `read: "reporter"` the events the key's organisation reported.
 */
const readScope = (ctx: AppContext) =>
  new Elysia({ name: "reads.scope" }).macro({
    read: (view: "owner" | "reporter") => ({
      async resolve({ request, query }) {
        const principal = await admittedPrincipal(request);
        const params = query as { domain?: string; delegated_from?: string; agent_id?: string };
        return {
          scope:
            view === "owner"
              ? await resolveOwnerScope(ctx.sql, principal, params)
              : resolveReporterScope(principal, params),
        };
      },
    }),
  });

/**
 * Content-owner reads (/content-owners/*: own verified domains, or a grantor's
 * through a delegation) and agent dashboards (/agent/*: what the caller's
 * organisation reported). Both need telemetry:read.
 */
export const readsModule = (ctx: AppContext) =>
  new Elysia({ name: "reads" })
    .use(accessPlugin(ctx))
    .use(readScope(ctx))
    .group("/content-owners", { detail: { tags: ["Content-owner reads"] } }, (app) =>
      app
        .get("/summary", ({ scope, query }) => summarize(ctx.sql, scope, parseRange(query)), {
          key: "telemetry:read",
          read: "owner",
          query: OwnerSummaryQuery,
          response: Summary,
          detail: { summary: "Totals, sessions, event types, sources and agents over a period" },
        })
        .get(
          "/events",
          ({ scope, query }) => {
            const range = parseRange(query);
            const { limit, offset } = pageOf(query, eventsPage);
            return listEvents(ctx.sql, scope, range, limit, offset);
          },
          {
            key: "telemetry:read",
            read: "owner",
            query: OwnerEventsQuery,
            response: EventPage,
            detail: { summary: "Events, newest first (page size at most 1000)" },
          },
        )
        .get(
          "/urls",
          ({ scope, query }) => {
            const range = parseRange(query);
            const { limit, offset } = pageOf(query, urlsPage);
            return listUrls(ctx.sql, scope, range, limit, offset);
          },
          {
            key: "telemetry:read",
            read: "owner",
            query: OwnerUrlsQuery,
            response: UrlPage,
            detail: { summary: "Per-URL metrics by total_events descending, then URL (page size at most 200)" },
          },
        )
        .get(
          "/timeseries",
          ({ scope, query }) => {
            const interval = query.interval ?? "day";
            const range = parseTimeseriesRange(query, interval);
            return timeseries(ctx.sql, scope, range, interval);
          },
          {
            key: "telemetry:read",
            read: "owner",
            query: OwnerTimeseriesQuery,
            response: Timeseries,
            detail: {
              summary: "Events per bucket and type, and sessions per bucket (non-empty buckets only)",
              description: `interval hour, day (default), week or month (UTC). One request spans at most ${maxTimeseriesBuckets} buckets of its interval (422 naming since otherwise).`,
            },
          },
        )
        .get(
          "/export",
          ({ scope, query, headers }) => {
            const range = parseRange(query);
            return exportResponse(ctx.sql, scope, range, exportFormat(query.format, headers.accept));
          },
          {
            key: "telemetry:read",
            read: "owner",
            query: OwnerExportQuery,
            detail: { summary: "Export events", ...exportDetail },
          },
        ),
    )
    .group("/agent", { detail: { tags: ["Agent dashboard reads"] } }, (app) =>
      app
        .get("/summary", ({ scope, query }) => summarize(ctx.sql, scope, parseRange(query)), {
          key: "telemetry:read",
          read: "reporter",
          query: AgentSummaryQuery,
          response: Summary,
          detail: { summary: "Summary of the events the caller's organisation reported" },
        })
        .get(
          "/events",
          ({ scope, query }) => {
            const range = parseRange(query);
            const { limit, offset } = pageOf(query, eventsPage);
            return listEvents(ctx.sql, scope, range, limit, offset);
          },
          {
            key: "telemetry:read",
            read: "reporter",
            query: AgentEventsQuery,
            response: EventPage,
            detail: { summary: "Events the caller's organisation reported, newest first" },
          },
        )
        .get(
          "/urls",
          ({ scope, query }) => {
            const range = parseRange(query);
            const { limit, offset } = pageOf(query, urlsPage);
            return listUrls(ctx.sql, scope, range, limit, offset);
          },
          {
            key: "telemetry:read",
            read: "reporter",
            query: AgentUrlsQuery,
            response: UrlPage,
            detail: { summary: "Per-URL metrics of the events the caller's organisation reported" },
          },
        )
        .get(
          "/timeseries",
          ({ scope, query }) => {
            const interval = query.interval ?? "day";
            return timeseries(ctx.sql, scope, parseTimeseriesRange(query, interval), interval);
          },
          {
            key: "telemetry:read",
            read: "reporter",
            query: AgentTimeseriesQuery,
            response: Timeseries,
            detail: { summary: "Timeseries of the events the caller's organisation reported" },
          },
        )
        .get(
          "/export",
          ({ scope, query, headers }) =>
            exportResponse(ctx.sql, scope, parseRange(query), exportFormat(query.format, headers.accept)),
          {
            key: "telemetry:read",
            read: "reporter",
            query: AgentExportQuery,
            detail: { summary: "Export events", ...exportDetail },
          },
        ),
    );
