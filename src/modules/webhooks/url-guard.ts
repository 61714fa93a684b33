import { isIP } from "node:net";

/** Why a webhook URL is refused at creation (answered as 400 invalid_webhook_url). */
export class WebhookUrlError extends Error {
  override name = "WebhookUrlError";
}

export const maxUrlLength = 2048;

/** Names that never lead to the public internet; `localhost` is allowed only with WEBHOOK_ALLOW_LOOPBACK. */
const localOnlySuffixes = [".local", ".internal", ".home.arpa", ".invalid", ".localdomain"];

const isLocalhost = (host: string) => host === "localhost" || host.endsWith(".localhost");

/**
 * The first line of the SSRF guard, at creation: an `https://` URL naming a host
 * by name. IP literals (in any notation the URL parser accepts: `0x7f.1`,
 * `2130706433`, `[::1]`), user names and passwords, other schemes, fragments and
 * local-only names are refused. The second line is at delivery time, where every
 * address the name resolves to is checked (sender.ts). Returns the URL in its
 * normalised form.
 */
export function checkWebhookUrl(raw: string, options: { allowLoopback: boolean }): string {
  const text = raw.trim();
  if (text.length > maxUrlLength) throw new WebhookUrlError(`must be at most ${maxUrlLength} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlError("is not an absolute URL");
  }
  if (url.protocol !== "https:") throw new WebhookUrlError(`must use https:// (got ${url.protocol}//)`);
  if (url.username !== "" || url.password !== "") {
    throw new WebhookUrlError("must not carry a user name or password");
  }
  if (url.hash !== "") throw new WebhookUrlError("must not have a #fragment (it is never sent)");
  // What is stored and sent is the normalised form, which percent-encoding can make longer.
  if (url.href.length > maxUrlLength) {
    throw new WebhookUrlError(`must be at most ${maxUrlLength} characters once normalised (${url.href.length})`);
  }
  // Every trailing dot: `localhost..` names localhost as surely as `localhost.` does.
  const host = url.hostname.replace(/\.+$/, "");
  if (host.startsWith("[") || isIP(host) !== 0) {
    throw new WebhookUrlError("must name its host, not an IP address");
  }
  if (isLocalhost(host)) {
    if (!options.allowLoopback) throw new WebhookUrlError("must name a host on the public internet, not localhost");
    return url.href;
  }
  if (!host.includes(".")) throw new WebhookUrlError("must name a fully qualified host (e.g. hooks.example.com)");
  if (localOnlySuffixes.some((suffix) => host.endsWith(suffix))) {
    throw new WebhookUrlError("must name a host on the public internet");
  }
  return url.href;
}
