import type { AppContext } from "../../context.ts";
import { getCapped } from "../domains/service.ts";
import type { ManifestStatus, ParticipantManifest } from "./model.ts";
import { validateManifest } from "./validate.ts";

/** Limits of one manifest fetch: a manifest is a few keys and domains. */
export const manifestFetchLimits = { accept: "application/json", timeoutMs: 5000, maxBytes: 64 * 1024 };

/** 8.7: cache by Cache-Control, within these bounds; one hour when it says nothing. */
const minMaxAgeSeconds = 300;
const maxMaxAgeSeconds = 86_400;
const defaultMaxAgeSeconds = 3600;

export type FetchedManifest =
  | { status: "valid"; manifest: ParticipantManifest; maxAgeSeconds: number }
  | { status: Exclude<ManifestStatus, "valid">; reason: string; maxAgeSeconds: number };

/**
 * Fetches and checks a manifest through the outbound guard of domain
 * verification (HTTPS to public addresses only, pinned against DNS rebinding, no
 * redirects, 5 s, 64 KiB). Never throws: a failure is a status and a reason.
 */
export async function fetchManifest(probe: AppContext["domainProbe"], url: string): Promise<FetchedManifest> {
  const fetched = await getCapped(probe, url, manifestFetchLimits);
  if (!fetched.ok) return { status: "unreachable", reason: fetched.reason, maxAgeSeconds: defaultMaxAgeSeconds };
  const maxAgeSeconds = maxAgeOf(fetched.headers.get("cache-control"));
  const checked = validateManifest(new URL(url), fetched.body);
  return "reason" in checked
    ? { status: "invalid", reason: checked.reason, maxAgeSeconds }
    : { status: "valid", manifest: checked.manifest, maxAgeSeconds };
}

function maxAgeOf(cacheControl: string | null): number {
  const seconds = Number(/max-age=(\d+)/i.exec(cacheControl ?? "")?.[1] ?? defaultMaxAgeSeconds);
  return Math.min(maxMaxAgeSeconds, Math.max(minMaxAgeSeconds, seconds));
}
