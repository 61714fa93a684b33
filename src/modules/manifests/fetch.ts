import type { AppContext } from "../../context.ts";
import { getCapped } from "../domains/service.ts";
import type { ManifestStatus, ParticipantManifest } from "./model.ts";
import { validateManifest } from "./validate.ts";

/** Limits of one manifest fetch: a manifest is a few keys and domains. */
export const manifestFetchLimits = { accept: "application/json", timeoutMs: 5000, maxBytes: 64 * 1024 };

/** 8.7: cache by Cache-Control, within these bounds; one hour when it gives no max-age. */
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

/**
 * How long a fetched manifest is kept before it is refetched. no-store and
 * no-cache forbid reusing a response without checking it again (RFC 9111
 * 5.2.2.4-5), whatever max-age says beside them; a manifest must still be kept to
 * verify with, so they get the floor, the most often we refetch.
 */
function maxAgeOf(cacheControl: string | null): number {
  const directives = new Map(
    (cacheControl ?? "").split(",").map((directive) => {
      const [name = "", value = ""] = directive.split("=", 2);
      // RFC 9111 5.2: recipients accept a quoted argument too.
      return [name.trim().toLowerCase(), value.trim().replace(/^"(.*)"$/, "$1")];
    }),
  );
  if (directives.has("no-store") || directives.has("no-cache")) return minMaxAgeSeconds;
  const maxAge = directives.get("max-age");
  const seconds = maxAge !== undefined && /^\d+$/.test(maxAge) ? Number(maxAge) : defaultMaxAgeSeconds;
  return Math.min(maxMaxAgeSeconds, Math.max(minMaxAgeSeconds, seconds));
}
