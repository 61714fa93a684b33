import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { accessPlugin } from "../../http/access.ts";
import { resolveOwnerScope, resolveReporterScope } from "./access.ts";
import { exportFormat, exportResponse } from "./export.ts";
import {
  AgentEventsQuery,
  AgentExportQuery,
  AgentSummaryQuery,
  AgentTimeseriesQuery,
  AgentUrlsQuery,
  EventPage,
  maxEventsPageSize,
  maxUrlsPageSize,
  OwnerEventsQuery,
  OwnerExportQuery,
  OwnerSummaryQuery,
  OwnerTimeseriesQuery,
  OwnerUrlsQuery,
  Summary,
  Timeseries,
  UrlPage,
} from "./model.ts";
import { maxTimeseriesBuckets, parsePage, parseRange, parseTimeseriesRange } from "./params.ts";
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
 * Content-owner reads (/content-owners/*: own verified domains, or a grantor's
 * through a delegation) and agent dashboards (/agent/*: what the caller's
 * organisation reported). Both need telemetry:read.
 */
export const readsModule = (ctx: AppContext) =>
  new Elysia({ name: "reads" })
    .use(accessPlugin(ctx))
    .group("/content-owners", { detail: { tags: ["Content-owner reads"] } }, (app) =>
      app
        .get(
          "/summary",
          async ({ principal, query }) => {
            const range = parseRange(query);
            return summarize(ctx.sql, await resolveOwnerScope(ctx.sql, principal, query), range);
          },
          {
            key: "telemetry:read",
            query: OwnerSummaryQuery,
            response: Summary,
            detail: { summary: "Totals, sessions, event types, sources and agents over a period" },
          },
        )
        .get(
          "/events",
          async ({ principal, query }) => {
            const range = parseRange(query);
            const { limit, offset } = parsePage(query, 100, maxEventsPageSize);
            const scope = await resolveOwnerScope(ctx.sql, principal, query);
            return listEvents(ctx.sql, scope, range, limit, offset);
          },
          {
            key: "telemetry:read",
            query: OwnerEventsQuery,
            response: EventPage,
            detail: { summary: "Events, newest first (page size at most 1000)" },
          },
        )
        .get(
          "/urls",
          async ({ principal, query }) => {
            const range = parseRange(query);
            const { limit, offset } = parsePage(query, 20, maxUrlsPageSize);
            const scope = await resolveOwnerScope(ctx.sql, principal, query);
            return listUrls(ctx.sql, scope, range, limit, offset);
          },
          {
            key: "telemetry:read",
            query: OwnerUrlsQuery,
            response: UrlPage,
            detail: { summary: "Per-URL metrics by total_events descending, then URL (page size at most 200)" },
          },
        )
        .get(
          "/timeseries",
          async ({ principal, query }) => {
            const interval = query.interval ?? "day";
            const range = parseTimeseriesRange(query, interval);
            const scope = await resolveOwnerScope(ctx.sql, principal, query);
            return timeseries(ctx.sql, scope, range, interval);
          },
          {
            key: "telemetry:read",
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
          async ({ principal, query, headers }) => {
            const range = parseRange(query);
            const scope = await resolveOwnerScope(ctx.sql, principal, query);
            return exportResponse(ctx.sql, scope, range, exportFormat(query.format, headers.accept));
          },
          { key: "telemetry:read", query: OwnerExportQuery, detail: { summary: "Export events", ...exportDetail } },
        ),
    )
    .group("/agent", { detail: { tags: ["Agent dashboard reads"] } }, (app) =>
      app
        .get(
          "/summary",
          ({ principal, query }) => summarize(ctx.sql, resolveReporterScope(principal, query), parseRange(query)),
          {
            key: "telemetry:read",
            query: AgentSummaryQuery,
            response: Summary,
            detail: { summary: "Summary of the events the caller's organisation reported" },
          },
        )
        .get(
          "/events",
          ({ principal, query }) => {
            const range = parseRange(query);
            const { limit, offset } = parsePage(query, 100, maxEventsPageSize);
            return listEvents(ctx.sql, resolveReporterScope(principal, query), range, limit, offset);
          },
          {
            key: "telemetry:read",
            query: AgentEventsQuery,
            response: EventPage,
            detail: { summary: "Events the caller's organisation reported, newest first" },
          },
        )
        .get(
          "/urls",
          ({ principal, query }) => {
            const range = parseRange(query);
            const { limit, offset } = parsePage(query, 20, maxUrlsPageSize);
            return listUrls(ctx.sql, resolveReporterScope(principal, query), range, limit, offset);
          },
          {
            key: "telemetry:read",
            query: AgentUrlsQuery,
            response: UrlPage,
            detail: { summary: "Per-URL metrics of the events the caller's organisation reported" },
          },
        )
        .get(
          "/timeseries",
          ({ principal, query }) => {
            const interval = query.interval ?? "day";
            return timeseries(
              ctx.sql,
              resolveReporterScope(principal, query),
              parseTimeseriesRange(query, interval),
              interval,
            );
          },
          {
            key: "telemetry:read",
            query: AgentTimeseriesQuery,
            response: Timeseries,
            detail: { summary: "Timeseries of the events the caller's organisation reported" },
          },
        )
        .get(
          "/export",
          ({ principal, query, headers }) =>
            exportResponse(
              ctx.sql,
              resolveReporterScope(principal, query),
              parseRange(query),
              exportFormat(query.format, headers.accept),
            ),
          { key: "telemetry:read", query: AgentExportQuery, detail: { summary: "Export events", ...exportDetail } },
        ),
    );
