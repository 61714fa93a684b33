import type { Sql } from "../../db/sql.ts";
import { acceptQuality } from "../../http/accept.ts";
import { type EventFilter, eventItemFields, type toEventItem } from "./events.ts";
import type { Range } from "./read-context.ts";
import type { ReadScope } from "./scope.ts";
import { streamEventBatches } from "./service.ts";

export type ExportFormat = "ndjson" | "csv";

const contentTypes: Record<ExportFormat, string> = {
  ndjson: "application/x-ndjson; charset=utf-8",
  csv: "text/csv; charset=utf-8",
};

/**
 * `format=` wins; otherwise the Accept header: CSV when it prefers text/csv to
 * application/x-ndjson (`text/csv;q=0` refuses CSV); NDJSON by default.
 */
export function exportFormat(format: ExportFormat | undefined, accept: string | undefined): ExportFormat {
  if (format) return format;
  const csv = acceptQuality(accept, "text/csv");
  return csv > 0 && csv > acceptQuality(accept, "application/x-ndjson") ? "csv" : "ndjson";
}

type EventItem = ReturnType<typeof toEventItem>;
const csvColumns = Object.keys(eventItemFields) as (keyof typeof eventItemFields & keyof EventItem)[];

/**
 * Text a spreadsheet would read as a formula: any reporter chooses the text of an
 * agent id, a URL or event data, and the owner opens the file (OWASP, CSV injection).
 */
const formulaStart = /^[=+\-@\t\r]/;

/**
 * RFC 4180 field: quoted when it holds a delimiter, quote or line break; text
 * that starts like a formula gets a leading `'`, which spreadsheets show as text.
 */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "string" ? value.replace(formulaStart, "'$&") : JSON.stringify(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function encodeRow(format: ExportFormat, item: EventItem): string {
  if (format === "ndjson") return `${JSON.stringify(item)}\n`;
  return `${csvColumns.map((column) => csvField(item[column])).join(",")}\r\n`;
}

/**
 * Streams every event of the range, oldest first, without paging: pages are read
 * as the client reads (pull-based), so memory stays constant whatever the range
 * holds, and nothing in the database is held between pages (see
 * streamEventBatches). The first page is read before the response is made, so a
 * query that fails (a value PostgreSQL refuses, a database error) is answered with
 * a problem instead of a 200 cut off mid-body.
 */
export async function exportResponse(
  sql: Sql,
  scope: ReadScope,
  range: Range,
  filter: EventFilter,
  format: ExportFormat,
): Promise<Response> {
  const encoder = new TextEncoder();
  const batches = streamEventBatches(sql, scope, range, filter);
  let firstBatch: IteratorResult<EventItem[]> | undefined = await batches.next();
  let headerSent = format !== "csv";
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(encoder.encode(`${csvColumns.join(",")}\r\n`));
        return;
      }
      const next = firstBatch ?? (await batches.next());
      firstBatch = undefined;
      if (next.done) {
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(next.value.map((item) => encodeRow(format, item)).join("")));
    },
    async cancel() {
      await batches.return(undefined);
    },
  });

  const filename = `events.${format === "csv" ? "csv" : "ndjson"}`;
  return new Response(body, {
    headers: { "content-type": contentTypes[format], "content-disposition": `attachment; filename="${filename}"` },
  });
}
