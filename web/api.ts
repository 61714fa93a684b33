import { treaty } from "@elysiajs/eden";
import type { AnyElysia } from "elysia";
import type { accessRequestsModule } from "../src/modules/access-requests/index.ts";
import type { authModule } from "../src/modules/auth/index.ts";
import type { delegationsModule } from "../src/modules/delegations/index.ts";
import type { domainsModule } from "../src/modules/domains/index.ts";
import type { ingestHealthModule } from "../src/modules/ingest-health/index.ts";
import type { keysModule } from "../src/modules/keys/index.ts";
import type { membersModule } from "../src/modules/members/index.ts";
import type { organizationsModule } from "../src/modules/organizations/index.ts";
import type { readsModule } from "../src/modules/reads/index.ts";
import type { settingsModule } from "../src/modules/settings/index.ts";
import type { webhooksModule } from "../src/modules/webhooks/index.ts";

/**
 * The service's own API, through Eden Treaty clients typed from the feature
 * modules themselves: a renamed path, a changed query or body, or a changed
 * answer fails the dashboard's type check. One client per module, because a
 * treaty over the whole app is too deep for TypeScript (TS2589).
 */
const client = <Module extends AnyElysia>() =>
  // Dates stay the strings the schemas declare; the session cookie goes along.
  treaty<Module>(location.origin, { parseDate: false, fetch: { credentials: "same-origin" } });

type ModuleOf<Factory extends (...args: never[]) => AnyElysia> = ReturnType<Factory>;

export const identity = {
  accessRequests: client<ModuleOf<typeof accessRequestsModule>>().api.v1.identity,
  auth: client<ModuleOf<typeof authModule>>().api.v1.identity.auth,
  delegations: client<ModuleOf<typeof delegationsModule>>().api.v1.identity,
  domains: client<ModuleOf<typeof domainsModule>>().api.v1.identity.domains,
  ingestHealth: client<ModuleOf<typeof ingestHealthModule>>().api.v1.identity["ingest-health"],
  keys: client<ModuleOf<typeof keysModule>>().api.v1.identity.keys,
  members: client<ModuleOf<typeof membersModule>>().api.v1.identity,
  organizations: client<ModuleOf<typeof organizationsModule>>().api.v1.identity,
  settings: client<ModuleOf<typeof settingsModule>>().api.v1.identity.settings,
  webhooks: client<ModuleOf<typeof webhooksModule>>().api.v1.identity.webhooks,
};
export const reads = client<ModuleOf<typeof readsModule>>();

/** JSON carries a date as its ISO string (parseDate is off), where a schema's t.Date() says Date. */
type OnWire<T> = T extends Date
  ? string
  : T extends readonly (infer Item)[]
    ? OnWire<Item>[]
    : T extends object
      ? { [K in keyof T]: OnWire<T[K]> }
      : T;

/** The data a successful call answers with, as the route's response schema declares it. */
export type DataOf<Call extends (...args: never[]) => Promise<{ data: unknown }>> = OnWire<
  NonNullable<Awaited<ReturnType<Call>>["data"]>
>;
export type SummaryAnswer = DataOf<(typeof reads)["content-owners"]["summary"]["get"]>;
export type TimeseriesAnswer = DataOf<(typeof reads)["content-owners"]["timeseries"]["get"]>;

/** What a Treaty call settles to: the answer's data, or the problem the service answered. */
type Answer<Data> =
  | { data: Data; error: null; response: Response }
  | { data: null; error: { status: unknown; value: unknown }; response: Response };

export interface FieldError {
  path: string;
  message: string;
}

/** A problem+json answer, in words for the person, with the fields it concerns. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | undefined,
    readonly fields: FieldError[],
  ) {
    super(message);
  }

  /**
   * The service rate-limiting the dashboard, out of reach, or without its database:
   * no fault of the request, so every request meets it alike. A limit of an
   * operation's own (too many sign-in links to one address) is the request's, as is
   * a read past its time limit (`query_timeout`, also a 503).
   */
  get serviceWide(): boolean {
    return this.status === 0 || this.code === "database_unavailable" || rateLimit(this.status, this.code);
  }

  /** The message for one field (a body or query path such as /domain), if the problem names it. */
  forField(path: string): string | undefined {
    return this.fields.find((field) => field.path === path)?.message;
  }
}

/** A 429 of the service's rate limits: `rate_limited`, or no code of the service's at all (a proxy's). */
const rateLimit = (status: number, code: string | undefined) =>
  status === 429 && (code ?? "rate_limited") === "rate_limited";

const unreachable = () =>
  new ApiError(0, "The service cannot be reached. Check your connection and try again.", undefined, []);

/** The data of a successful answer; anything else becomes an ApiError in words. */
export async function ok<Data>(call: Promise<Answer<Data>>): Promise<OnWire<Data>> {
  let answer: Answer<Data>;
  try {
    answer = await call;
  } catch {
    throw unreachable();
  }
  if (answer.error === null) return answer.data as OnWire<Data>;
  // Eden answers a request that never reached the service with an error but no response, not by throwing.
  if (!answer.response) throw unreachable();
  const status = answer.response.status;
  const problem = (typeof answer.error.value === "object" ? answer.error.value : undefined) as
    | { detail?: string; title?: string; code?: string; errors?: FieldError[] }
    | undefined;
  // The service's words for these are for an API's caller ("this API key sent more than…").
  const retryAfter = answer.response.headers.get("retry-after");
  const message = rateLimit(status, problem?.code)
    ? `Too many requests to the service just now. ${tryAgain(retryAfter)}`
    : problem?.code === "database_unavailable"
      ? `The service cannot reach its database just now. ${tryAgain(retryAfter)}`
      : (problem?.detail ?? problem?.title ?? `The service answered ${status}.`);
  throw new ApiError(status, message, problem?.code, problem?.errors ?? []);
}

/** When to try again, from Retry-After in seconds or as a date; no number made up without it. */
function tryAgain(retryAfter: string | null): string {
  const seconds = !retryAfter
    ? Number.NaN
    : /^\d+$/.test(retryAfter)
      ? Number(retryAfter)
      : Math.ceil((Date.parse(retryAfter) - Date.now()) / 1000);
  return `Try again ${seconds > 0 ? `in ${seconds} second${seconds === 1 ? "" : "s"}` : "in a moment"}.`;
}

/** Query parameters for a link (the export downloads), leaving out the empty ones. */
export const query = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== "") search.set(name, String(value));
  return search.toString();
};
