import { hostOfUrl } from "../src/core/hosts.ts";
import { type EventRow, storedEventColumns } from "../src/modules/ingest/event-columns.ts";
import type { GeneratedEvent } from "./event-generator.ts";

/** A generated event as ingest would store it (event-columns.ts), for writes that bypass the service. */
export function eventRow(event: GeneratedEvent, orgId: string): EventRow {
  const url = event.content_url ?? null;
  return {
    eventTime: event.timestamp,
    eventId: event.id,
    orgId,
    eventType: event.type,
    sourceRole: event.source_role,
    contentUrl: url,
    contentHost: url ? hostOfUrl(url) : null,
    agentId: "bench-agent",
    sessionId: event.session_id,
    contentId: null,
    contentTelemetryId: null,
    turnId: event.turn_id ?? null,
    outputId: event.output_id ?? null,
    presentationId: event.presentation_id ?? null,
    signatureStatus: "unverified",
    data: event.data,
    turn: event.turn ?? null,
  };
}

const csv = (value: string | null) => (value === null ? "" : `"${value.replaceAll('"', '""')}"`);

/** One row as a line of COPY's CSV, in storedEventColumns order. */
export const csvLine = (row: EventRow) => `${storedEventColumns.map((column) => csv(column.of(row))).join(",")}\n`;
