import { describe, expect, test } from "bun:test";
import { expectAccepted, expectRefused, site } from "../support/conformance.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

const inBatch = (event: Record<string, unknown>) => batch([event], { session_id: crypto.randomUUID() });
const sha = `sha256:${"ab".repeat(32)}`;

// Standard section 6 and Annex A: each event type's data profile.
describe("6.1 retrieval data", () => {
  const cases = [
    { key: "response_status", value: 600, says: "599 or less" },
    { key: "response_status", value: 99, says: "100 or more" },
    { key: "response_bytes", value: -5, says: "0 or more" },
    { key: "country", value: "deu", says: "ISO 3166-1 alpha-2" },
    { key: "verified", value: "yes", says: "true or false" },
    { key: "asn", value: 1.5, says: "an integer" },
  ];
  for (const { key, value, says } of cases) {
    test(`data.${key} ${JSON.stringify(value)} is refused`, async () => {
      await expectRefused(
        inBatch(validEvents.retrieved(site, { data: { [key]: value } })),
        `/events/0/data/${key}`,
        says,
      );
    });
  }

  test("a full retrieval profile is accepted and stored as sent", async () => {
    const data = { response_status: 200, response_bytes: 0, country: "DE", verified: true, asn: 3320, bot_name: "X" };
    const { stored } = await expectAccepted(inBatch(validEvents.retrieved(site, { data })));
    expect(stored[0]?.data).toEqual(data);
  });
});

describe("6.4 grounding data", () => {
  const grounded = (data: Record<string, unknown>) => inBatch(validEvents.grounded(site, { data }));

  test("scope is required and is session or turn", async () => {
    await expectRefused(grounded({ cached: false }), "/events/0/data/scope", 'is required: "session" or "turn"');
    await expectRefused(grounded({ scope: "galaxy" }), "/events/0/data/scope", 'must be "session" or "turn"');
  });

  test("provenance is a closed set", async () => {
    await expectRefused(
      grounded({ scope: "turn", provenance: "psychic" }),
      "/events/0/data/provenance",
      '"agent_fetched", "agent_cached" or "third_party_sourced"',
    );
  });

  test("agent_fetched requires cached false; agent_cached requires cached true", async () => {
    await expectRefused(
      grounded({ scope: "turn", provenance: "agent_fetched", cached: true }),
      "/events/0/data/cached",
      "must be false when data.provenance is agent_fetched",
    );
    await expectRefused(
      grounded({ scope: "turn", provenance: "agent_cached" }),
      "/events/0/data/cached",
      "must be true when data.provenance is agent_cached",
    );
    await expectAccepted(grounded({ scope: "session", provenance: "agent_cached", cached: true }));
    await expectAccepted(grounded({ scope: "turn", provenance: "third_party_sourced" }));
  });

  test("counts are non-negative integers", async () => {
    await expectRefused(grounded({ scope: "turn", chars_ingested: -1 }), "/events/0/data/chars_ingested", "0 or more");
    await expectRefused(
      grounded({ scope: "turn", tokens_ingested: -1 }),
      "/events/0/data/tokens_ingested",
      "0 or more",
    );
  });

  test("content_hash is sha256: and 64 lower-case hex digits", async () => {
    await expectRefused(grounded({ scope: "turn", content_hash: "md5:abc" }), "/events/0/data/content_hash", "sha256:");
    await expectRefused(
      grounded({ scope: "turn", content_hash: sha.toUpperCase() }),
      "/events/0/data/content_hash",
      "64 lower-case hexadecimal digits",
    );
    await expectAccepted(grounded({ scope: "turn", content_hash: sha }));
  });

  test("content_fingerprint needs scheme and detected", async () => {
    await expectRefused(
      grounded({ scope: "turn", content_fingerprint: { detected: true } }),
      "/events/0/data/content_fingerprint/scheme",
      "is required",
    );
    await expectRefused(
      grounded({ scope: "turn", content_fingerprint: { scheme: "c2pa" } }),
      "/events/0/data/content_fingerprint/detected",
      "is required: true or false",
    );
    await expectAccepted(grounded({ scope: "turn", content_fingerprint: { scheme: "c2pa", detected: false } }));
  });
});

describe("6.5 citation data", () => {
  const cited = (data: Record<string, unknown>) => inBatch(validEvents.cited(site, { data }));

  test("citation_type is required and closed", async () => {
    await expectRefused(cited({ position: "primary" }), "/events/0/data/citation_type", "is required");
    await expectRefused(
      cited({ citation_type: "homage" }),
      "/events/0/data/citation_type",
      '"direct_quote", "paraphrase"',
    );
  });

  test("position is closed", async () => {
    await expectRefused(
      cited({ citation_type: "reference", position: "footnote" }),
      "/events/0/data/position",
      '"primary", "supporting", "mentioned" or "unclassified"',
    );
  });

  test("excerpt counts are non-negative, hashes are sha256:", async () => {
    await expectRefused(cited({ citation_type: "reference", excerpt_chars: -3 }), "/events/0/data/excerpt_chars");
    await expectRefused(cited({ citation_type: "reference", excerpt_hash: "abc" }), "/events/0/data/excerpt_hash");
    await expectAccepted(
      cited({ citation_type: "paraphrase", excerpt_chars: 0, excerpt_hash: sha, url_verified: true }),
    );
  });
});

describe("6.6 presentation data", () => {
  const presented = (data: Record<string, unknown>) => inBatch(validEvents.presented(site, { data }));

  test("presentation_kind is required and is content or source_reference", async () => {
    await expectRefused(presented({ presentation_type: "link" }), "/events/0/data/presentation_kind", "is required");
    await expectRefused(
      presented({ presentation_kind: "vibe", presentation_type: "link" }),
      "/events/0/data/presentation_kind",
      '"content" or "source_reference"',
    );
  });

  test("presentation_type is required and non-empty, with an open vocabulary", async () => {
    await expectRefused(presented({ presentation_kind: "content" }), "/events/0/data/presentation_type", "is required");
    await expectRefused(
      presented({ presentation_kind: "content", presentation_type: "" }),
      "/events/0/data/presentation_type",
      "must not be empty",
    );
    await expectAccepted(presented({ presentation_kind: "content", presentation_type: "hologram" }));
  });
});

describe("6.7 engagement data", () => {
  test("engagement_type has an open vocabulary", async () => {
    const { stored } = await expectAccepted(
      inBatch(validEvents.engaged(site, { data: { engagement_type: "telepathy", media_type: "smell" } })),
    );
    expect(stored[0]?.data).toEqual({ engagement_type: "telepathy", media_type: "smell" });
  });
});
