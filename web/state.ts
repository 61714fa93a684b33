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
  dispatchEvent(new PopStateEvent("popstate"));
}

export interface Organisation {
  id: string;
  name: string;
  org_type: string;
  role: string | null;
}
