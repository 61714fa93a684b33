import type { DataOf, identity } from "./api.ts";

/** What the page shows lives in its URL, so that a view can be shared and reloaded. */

export type ViewName = "overview" | "domains" | "delegations" | "members" | "keys" | "ingest" | "webhooks";
export const viewNames: readonly ViewName[] = [
  "overview",
  "domains",
  "delegations",
  "members",
  "keys",
  "ingest",
  "webhooks",
];

export const param = (name: string) => new URL(location.href).searchParams.get(name);

/** Sets (or, with undefined, removes) URL parameters and tells the app to render again. */
export function navigate(changes: Record<string, string | undefined>) {
  const url = new URL(location.href);
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) url.searchParams.delete(name);
    else url.searchParams.set(name, value);
  }
  history.pushState(null, "", url);
  redraw();
}

/** Tells the app to render the view in the URL again. */
export const redraw = () => dispatchEvent(new PopStateEvent("popstate"));

/** One of the signed-in user's organisations, as GET /api/v1/identity/organizations lists it. */
export type Organisation = DataOf<typeof identity.organizations.organizations.get>["items"][number];
