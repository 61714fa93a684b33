import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

describe("content-owner keys report only on their verified domains", () => {
  test("events on the owner's domain and its subdomains are accepted", async () => {
    const owner = await createTestOrg();
    const domain = owner.domain as string;
    const res = await call("POST", "/events", {
      key: owner.key,
      body: batch([
        validEvents.retrieved(domain, { source_role: "origin" }),
        validEvents.retrieved(`cdn.${domain}`, { source_role: "edge" }),
      ]),
    });
    expect(res.status).toBe(200);
    expect(res.body.events_created).toBe(2);
  });

  test("any event off its domains refuses the whole request with 403 naming the offending events", async () => {
    const owner = await createTestOrg();
    const domain = owner.domain as string;
    const res = await call("POST", "/events", {
      key: owner.key,
      body: batch([
        validEvents.retrieved(domain, { source_role: "origin" }),
        validEvents.retrieved("elsewhere.example.org", { source_role: "origin" }),
        validEvents.retrieved(`x${domain}`, { source_role: "origin" }),
        validEvents.retrieved(domain, { source_role: "origin", content_url: undefined, content_id: "id-1" }),
      ]),
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("outside_verified_domains");
    expect(res.body.offending_events).toEqual([1, 2, 3]);
    expect(res.body.detail).toContain("1, 2, 3");
    expect(await storedEvents(owner.id)).toEqual([]);
  });

  test("an owner whose domain is only registered, not verified, may report nothing", async () => {
    const owner = await createTestOrg({ verified: false });
    const res = await call("POST", "/events", {
      key: owner.key,
      body: batch([validEvents.retrieved(owner.domain as string, { source_role: "origin" })]),
    });
    expect(res.status).toBe(403);
  });

  test("platform keys are not limited to domains", async () => {
    const platform = await createTestOrg({ type: "platform" });
    const res = await call("POST", "/events", {
      key: platform.key,
      body: batch([validEvents.retrieved("anything.example.org", { source_role: "index" })]),
    });
    expect(res.status).toBe(200);
  });
});
