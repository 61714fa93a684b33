import { hostOfParsedUrl } from "./hosts.ts";

// RFC 3339 date-time: an explicit offset is required so no timestamp depends on a server's zone.
const isoDateTime = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** The event-age window: how far back and ahead of the server clock a timestamp may lie (EVENT_MAX_AGE_DAYS, EVENT_MAX_FUTURE_SECONDS). */
export interface TimeWindow {
  nowMs: number;
  maxAgeDays: number;
  maxFutureSeconds: number;
}

/**
 * An RFC 3339 date-time as epoch milliseconds, or the reason it is refused. Every
 * field must be in range, so a leap second (`23:59:60`), which Date cannot hold,
 * is refused rather than read as NaN.
 */
export function parseDateTime(text: string): { ms: number } | { reason: string } {
  const match = isoDateTime.exec(text);
  if (!match) return { reason: "must be an ISO 8601 date-time with Z or a UTC offset" };
  const ms = Date.parse(text);
  const [, year, month, day, hour, minute, second] = match.map(Number);
  // Date.parse moves a day past its month's end into the next month (2025-02-30 is 03-02).
  const daysInMonth = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  const fieldsInRange =
    month! >= 1 && month! <= 12 && day! >= 1 && day! <= daysInMonth && hour! <= 23 && minute! <= 59 && second! <= 59;
  return Number.isNaN(ms) || !fieldsInRange ? { reason: "is not a valid date-time" } : { ms };
}

/** A wire timestamp as epoch milliseconds, or the reason it is refused. */
export function parseTimestamp(text: string, window: TimeWindow): { ms: number } | { reason: string } {
  const parsed = parseDateTime(text);
  if ("reason" in parsed) return parsed;
  const { ms } = parsed;
  if (ms < window.nowMs - window.maxAgeDays * 86_400_000) {
    return { reason: `is more than ${window.maxAgeDays} days old (EVENT_MAX_AGE_DAYS)` };
  }
  if (ms > window.nowMs + window.maxFutureSeconds * 1000) {
    return { reason: `is more than ${window.maxFutureSeconds} seconds in the future (EVENT_MAX_FUTURE_SECONDS)` };
  }
  return parsed;
}

/** The lower-case host of an absolute http(s) URL, or the reason the URL is refused. */
export function httpUrlHost(url: string): { host: string } | { reason: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { reason: "is not an absolute URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return { reason: "must be an http or https URL" };
  // The URL is stored and shown as sent, while parsing forgives what its readers
  // would not: spaces around it, `https:\\host` or `https:/host` for `https://host`.
  if (!writtenAsUrl.test(url)) {
    return { reason: "must be written as http(s)://host…, without spaces, control characters or backslashes" };
  }
  // Every resolver of a click token, and every reader of the owner's data, would see them.
  if (parsed.username !== "" || parsed.password !== "") return { reason: "must not carry a user name or password" };
  const host = hostOfParsedUrl(parsed);
  return host ? { host } : { reason: "has no host" };
}

const writtenAsUrl = /^https?:\/\/[^/\\][^\s\\\p{Cc}]*$/iu;

const manifestPath = "/.well-known/content-telemetry.json";

/** Why a manifest_ref is refused: it must be an http(s) URL of a (root or path-prefixed) manifest. */
export function manifestRefProblem(url: string): string | undefined {
  const host = httpUrlHost(url);
  if ("reason" in host) return host.reason;
  return new URL(url).pathname.endsWith(manifestPath) ? undefined : `must point at a ${manifestPath} manifest`;
}
