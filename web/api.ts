import type { Static, TSchema } from "@sinclair/typebox";
import type { Summary, Timeseries, UrlPage } from "../src/modules/reads/model.ts";

/**
 * The service's own API, called with the browser's session cookie. Answers are
 * typed from the routes' response schemas (src/modules/*\/model.ts), so a change
 * there fails the dashboard's type check.
 */
type Wire<T extends TSchema> = Static<T>;
export type SummaryAnswer = Wire<typeof Summary>;
export type TimeseriesAnswer = Wire<typeof Timeseries>;
export type UrlPageAnswer = Wire<typeof UrlPage>;

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

  /** The message for one field (a body or query path such as /domain), if the problem names it. */
  forField(path: string): string | undefined {
    return this.fields.find((field) => field.path === path)?.message;
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? { accept: "application/json" } : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "The service cannot be reached. Check your connection and try again.", undefined, []);
  }
  if (response.status === 204) return undefined as T;
  const data = (await response.json().catch(() => undefined)) as
    | { detail?: string; title?: string; code?: string; errors?: FieldError[] }
    | undefined;
  if (!response.ok) {
    throw new ApiError(
      response.status,
      data?.detail ?? data?.title ?? `The service answered ${response.status}.`,
      data?.code,
      data?.errors ?? [],
    );
  }
  return data as T;
}

export const query = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== "") search.set(name, String(value));
  return search.toString();
};
