import { type DomainProbe, getCapped } from "./probe.ts";

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
  const fetched = await getCapped(probe, expected.https_file.url, {
    accept: "text/plain",
    timeoutMs: fetchTimeoutMs,
    maxBytes: maxFileBytes,
  });
  if (!fetched.ok) return fetched.reason;
  return fetched.body.trim() === challenge ? null : `${expected.https_file.url} does not contain the challenge`;
}
