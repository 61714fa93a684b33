import type { DomainProbe } from "./probe.ts";

export type ChallengeMethod = "dns_txt" | "https_file";

const txtPrefix = "content-telemetry-verification=";
const wellKnownPath = "/.well-known/content-telemetry-verification.txt";
const fetchTimeoutMs = 5000;
const maxFileBytes = 4096;

/** What the owner must publish to prove control of `domain`, by each method. */
export function challengeInstructions(domain: string, challenge: string) {
  return {
    dns_txt: { name: `_content-telemetry.${domain}`, value: `${txtPrefix}${challenge}` },
    https_file: { url: `https://${domain}${wellKnownPath}`, body: challenge },
  };
}

/** Null when the challenge is published as required; otherwise why not, for the caller to fix. */
export async function checkChallenge(
  probe: DomainProbe,
  domain: string,
  challenge: string,
  method: ChallengeMethod,
): Promise<string | null> {
  const expected = challengeInstructions(domain, challenge);
  if (method === "dns_txt") {
    let records: string[];
    try {
      records = await probe.txtRecords(expected.dns_txt.name);
    } catch {
      return `the DNS lookup of ${expected.dns_txt.name} failed`;
    }
    return records.some((record) => record.trim() === expected.dns_txt.value)
      ? null
      : `no TXT record "${expected.dns_txt.value}" at ${expected.dns_txt.name}`;
  }
  let response: Response;
  try {
    response = await probe.fetch(expected.https_file.url, {
      redirect: "manual",
      signal: AbortSignal.timeout(fetchTimeoutMs),
      headers: { accept: "text/plain" },
    });
  } catch (error) {
    return `${expected.https_file.url} could not be fetched: ${(error as Error).message}`;
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    return `${expected.https_file.url} answered ${response.status} (redirects are not followed)`;
  }
  const body = await readCapped(response, maxFileBytes);
  return body?.trim() === challenge ? null : `${expected.https_file.url} does not contain the challenge`;
}

/** The body as text, or null when it is larger than `limit` bytes. */
async function readCapped(response: Response, limit: number): Promise<string | null> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
