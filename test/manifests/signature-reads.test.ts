import { describe, expect, test } from "bun:test";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { callIdentity } from "../support/identity.ts";
import { manifestFor, serveManifest, signingKey } from "../support/manifests.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

/**
 * An owner whose domain received, from one signing agent: two events of a
 * verified request, one of a request whose body was altered after signing, and
 * one of an unsigned request.
 */
async function ownerWithSignedTelemetry() {
  const owner = await createTestOrg();
  const domain = owner.domain as string;
  const host = uniqueDomain("signer");
  const key = await signingKey("k1");
  const agent = await createTestOrg({ type: "agent" });
  const agentAdmin = await agent.keyWith(["identity:write", "telemetry:write"]);
  const url = serveManifest(host, manifestFor(host, { keys: [key.entry] }));
  expect((await callIdentity("PUT", "/api/v1/identity/manifest", { key: agentAdmin, body: { url } })).status).toBe(200);

  const send = async (events: unknown[], sign: "valid" | "tampered" | "none") => {
    const body = JSON.stringify(batch(events, { session_id: crypto.randomUUID() }));
    const headers: Record<string, string> =
      sign === "none" ? {} : { "content-telemetry-signature": await key.sign(sign === "valid" ? body : `${body} `) };
    const res = await callIdentity("POST", "/events", { key: agentAdmin, body, headers });
    expect(res.status).toBe(200);
  };
  await send([validEvents.grounded(domain), validEvents.retrieved(domain)], "valid");
  await send([validEvents.grounded(domain)], "tampered");
  await send([validEvents.grounded(domain)], "none");
  return owner;
}

describe("owner reads of signature status", () => {
  test("the events total counts the owner's events per signature status", async () => {
    const owner = await ownerWithSignedTelemetry();
    const totals: Record<string, number> = {};
    for (const status of ["verified", "invalid", "unverified", "unknown_key", "expired_key"]) {
      const res = await callIdentity("GET", `/content-owners/events?signature_status=${status}&limit=1`, {
        key: owner.key,
      });
      expect(res.status).toBe(200);
      totals[status] = res.body.total;
    }
    expect(totals).toEqual({ verified: 2, invalid: 1, unverified: 1, unknown_key: 0, expired_key: 0 });
    const past = await callIdentity("GET", "/content-owners/events?signature_status=verified&until=2020-01-01", {
      key: owner.key,
    });
    expect(past.body).toMatchObject({ total: 0, items: [] });
  });

  test("events and export carry each event's status and filter on it", async () => {
    const owner = await ownerWithSignedTelemetry();
    const all = await callIdentity("GET", "/content-owners/events", { key: owner.key });
    expect(all.body.total).toBe(4);
    expect(all.body.items.map((item: { signature_status: string }) => item.signature_status).sort()).toEqual([
      "invalid",
      "unverified",
      "verified",
      "verified",
    ]);

    const verified = await callIdentity("GET", "/content-owners/events?signature_status=verified&limit=1", {
      key: owner.key,
    });
    expect(verified.status).toBe(200);
    expect(verified.body.total).toBe(2);
    expect(verified.body.items).toHaveLength(1);
    expect(verified.body.items[0].signature_status).toBe("verified");

    const csv = await callIdentity("GET", "/content-owners/export?format=csv&signature_status=invalid", {
      key: owner.key,
    });
    const [header, ...rows] = (csv.body as string).trimEnd().split("\r\n");
    expect(header?.split(",").at(-1)).toBe("signature_status");
    expect(rows).toHaveLength(1);
    expect(rows[0]?.endsWith(",invalid")).toBe(true);
  });

  test("an unknown status is 400 naming signature_status and listing the statuses", async () => {
    const owner = await createTestOrg();
    for (const path of ["/content-owners/events", "/content-owners/export", "/agent/events"]) {
      const res = await callIdentity("GET", `${path}?signature_status=trusted`, { key: owner.key });
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.body.errors[0].path).toBe("/signature_status");
      expect(res.body.errors[0].message).toContain("expired_key");
    }
  });
});
