import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import type { ReadCompanion } from "../../db/read-companion.ts";
import type { Sql } from "../../db/sql.ts";
import { withStatementTimeout } from "../../db/statement-timeout.ts";
import { accessPlugin } from "../../http/access.ts";
import { admittedPrincipal } from "../../http/access-resolver.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { pageOf } from "../../http/paging.ts";
import { resolveOwnerScope, resolveReporterScope } from "./access.ts";
import { exportFormat, exportResponse } from "./export.ts";
import { EventPage, eventsPage, readQueries, Summary, Timeseries, UrlPage, urlsPage } from "./model.ts";
import { maxTimeseriesBuckets, parseRange, parseTimeseriesRange } from "./params.ts";
import { listEvents, listUrls, summarize, timeseries } from "./service.ts";

type ReadView = "owner" | "reporter";

/** A key with telemetry:read, or a member's session of the organisation (the dashboard), naming it with org_id. */
const readAccess = { scope: "telemetry:read", memberSessions: true } as const;

/**
 * `read: "owner"` beside `key: "telemetry:read"` resolves whose data the read shows
 * (the key's own organisation, or a grantor's through `delegated_from`, narrowed by
 * `domain`; 403 otherwise); `read: "reporter"` the events the key's organisation reported.
 */
const readScope = (ctx: AppContext) =>
  new Elysia({ name: "reads.scope" }).macro({
    read: (view: ReadView) => ({
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

const views = {
  owner: { prefix: "/content-owners", tag: "Content-owner reads", of: "the owner's verified domains" },
  reporter: { prefix: "/agent", tag: "Agent dashboard reads", of: "the events the caller's organisation reported" },
} as const;

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

/** The five reads of one view: summary, events, URLs, timeseries and export. */
const readRoutes = <Prefix extends (typeof views)[ReadView]["prefix"]>(
  ctx: AppContext,
  view: ReadView,
  prefix: Prefix,
) => {
  const queries = readQueries[view];
  const { tag, of } = views[view];
  // The owner view refuses what resolveOwnerScope (access.ts) refuses; reporter reads refuse nothing of their own.
  const refusals =
    view === "owner"
      ? ownProblems("delegation_required", "no_active_delegation", "delegation_not_allowed", "domain_not_bound")
      : {};
  return new Elysia({ name: `reads.${view}`, prefix, detail: { tags: [tag] } })
    .use(accessPlugin(ctx))
    .use(readScope(ctx))
    .resolve(({ set }) => ({
      /**
       * Runs the read on a replica that keeps up, or the primary (src/db/replicas.ts),
       * cut off at READ_STATEMENT_TIMEOUT_MS (year-long reads share the database with
       * ingest), and says up to when it includes every acknowledged event.
       */
      timed: <T extends object>(read: (sql: Sql, companion?: ReadCompanion) => Promise<T>) =>
        ctx.readReplicas.read(async (target) => {
          const result = await withStatementTimeout(target.sql, ctx.config.READ_STATEMENT_TIMEOUT_MS, ctx.log, (sql) =>
            read(sql, target.companion),
          );
          const asOf = target.asOf.toISOString();
          set.headers["x-data-as-of"] = asOf;
          return { ...result, as_of: asOf };
        }),
    }))
    .get("/summary", ({ scope, query, timed }) => timed((sql) => summarize(sql, scope, parseRange(query))), {
      key: readAccess,
      read: view,
      query: queries.summary,
      response: Summary,
      detail: { summary: `Totals, sessions, event types, sources and agents of ${of} over a period`, ...refusals },
    })
    .get(
      "/events",
      ({ scope, query, timed }) => {
        const { limit, offset } = pageOf(query, eventsPage);
        const filter = { signature_status: query.signature_status };
        return timed((sql) => listEvents(sql, scope, parseRange(query), filter, limit, offset));
      },
      {
        key: readAccess,
        read: view,
        query: queries.events,
        response: EventPage,
        detail: {
          summary: `Events of ${of}, newest first (page size at most ${eventsPage.maxLimit})`,
          ...refusals,
        },
      },
    )
    .get(
      "/urls",
      ({ scope, query, timed }) => {
        const { limit, offset } = pageOf(query, urlsPage);
        const request = { limit, offset, sort: query.sort ?? "events", contains: query.url_contains } as const;
        return timed((sql, companion) => listUrls(sql, scope, parseRange(query), request, companion));
      },
      {
        key: readAccess,
        read: view,
        query: queries.urls,
        response: UrlPage,
        detail: {
          summary: `Per-URL metrics of ${of} by total_events (or unique_sessions) descending, then URL (page size at most ${urlsPage.maxLimit})`,
          description:
            "A URL is the exact content_url string events carried (standard 4.5: URLs correlate by exact match); spellings that differ in case, port, fragment or query are separate rows.",
          ...refusals,
        },
      },
    )
    .get(
      "/timeseries",
      ({ scope, query, timed }) => {
        const interval = query.interval ?? "day";
        return timed((sql) => timeseries(sql, scope, parseTimeseriesRange(query, interval), interval));
      },
      {
        key: readAccess,
        read: view,
        query: queries.timeseries,
        response: Timeseries,
        detail: {
          summary: `Events per bucket and type, and sessions per bucket, of ${of} (non-empty buckets only)`,
          description: `interval hour, day (default), week or month (UTC). One request spans at most ${maxTimeseriesBuckets} buckets of its interval (400 naming since otherwise).`,
          ...refusals,
        },
      },
    )
    .get(
      "/export",
      ({ scope, query, headers, set }) => {
        // Streamed page by page: the whole export reads from one target.
        const target = ctx.readReplicas.pick();
        set.headers["x-data-as-of"] = target.asOf.toISOString();
        return exportResponse(
          target.sql,
          scope,
          parseRange(query),
          { signature_status: query.signature_status },
          exportFormat(query.format, headers.accept),
        );
      },
      {
        key: readAccess,
        read: view,
        query: queries.export,
        detail: { summary: `Export the events of ${of}`, ...exportDetail, ...refusals },
      },
    );
};

/**
 * Content-owner reads (/content-owners/*: own verified domains, or a grantor's
 * through a delegation) and agent dashboards (/agent/*: what the caller's
 * organisation reported). Both need telemetry:read.
 */
export const readsModule = (ctx: AppContext) =>
  new Elysia({ name: "reads" })
    .use(readRoutes(ctx, "owner", views.owner.prefix))
    .use(readRoutes(ctx, "reporter", views.reporter.prefix));
