import { describe, expect, test } from "bun:test";
import { manifestFetchLimits } from "../../src/modules/manifests/fetch.ts";
import { manifestPath } from "../../src/modules/manifests/model.ts";
import { refreshDueManifests } from "../../src/modules/manifests/service.ts";
import { verifyDetachedJws } from "../../src/modules/manifests/signatures.ts";
import { publishFile } from "../support/domain-probe.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { buildIdentityApp, callIdentity } from "../support/identity.ts";
import { manifestFor, serveManifest, signingKey } from "../support/manifests.ts";
import { whileRefusing } from "../support/refusing-trigger.ts";
import { testRuntime } from "../support/runtime.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

const register = (key: string, url: string) => callIdentity("PUT", "/api/v1/identity/manifest", { key, body: { url } });

async function orgWithWriteKey(type: "agent" | "content_owner" = "agent") {
  const org = await createTestOrg({ type });
  return { org, admin: await org.keyWith(["identity:read", "identity:write", "telemetry:write"]) };
}

describe("registering a participant manifest", () => {
  test("a valid manifest is stored with its keys and domains", async () => {
    const host = uniqueDomain("agent");
    const key = await signingKey("key-1");
    const url = serveManifest(host, manifestFor(host, { keys: [key.entry], domains: [host, `*.${host}`] }), {
      "cache-control": "max-age=86400",
    });
    const { admin } = await orgWithWriteKey();
    const res = await register(admin, url);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      url,
      status: "valid",
      problem: null,
      key_ids: ["key-1"],
      domains: [host, `*.${host}`],
    });
    expect(Date.parse(res.body.refresh_at) - Date.parse(res.body.fetched_at)).toBe(86_400_000);
    expect((await callIdentity("GET", "/api/v1/identity/manifest", { key: admin })).body.status).toBe("valid");
  });

  test("Cache-Control sets the refetch time; no-store or no-cache get the 5-minute floor whatever max-age says", async () => {
    const { admin } = await orgWithWriteKey();
    const cases: [string | undefined, number][] = [
      ["no-store, max-age=86400", 300],
      ["no-store", 300],
      ["no-cache", 300],
      ["Private, No-Cache, max-age=600", 300],
      ["public, max-age=600", 600],
      ['max-age="600"', 600],
      ["max-age=10", 300],
      ["max-age=999999", 86_400],
      [undefined, 3600],
    ];
    for (const [cacheControl, seconds] of cases) {
      const host = uniqueDomain("cache");
      const headers: Record<string, string> = cacheControl === undefined ? {} : { "cache-control": cacheControl };
      const res = await register(admin, serveManifest(host, manifestFor(host), headers));
      expect({
        cacheControl,
        status: res.status,
        seconds: (Date.parse(res.body.refresh_at) - Date.parse(res.body.fetched_at)) / 1000,
      }).toEqual({ cacheControl, status: 200, seconds });
    }
  });

  test("any v1 schema_version is taken, as ingest takes it: 1, 1.2 and 1.0.1", async () => {
    for (const version of ["1", "1.2", "1.0.1"]) {
      const host = uniqueDomain("version");
      const { admin } = await orgWithWriteKey();
      const res = await register(admin, serveManifest(host, { ...manifestFor(host), schema_version: version }));
      expect({ version, status: res.status, state: res.body.status }).toEqual({ version, status: 200, state: "valid" });
    }
  });

  test("unusable manifests are 422 manifest_unusable naming why, and nothing is stored", async () => {
    const { admin } = await orgWithWriteKey();
    const cases: [string, string, string][] = [];
    const add = (label: string, host: string, expected: string) =>
      cases.push([label, `https://${host}/.well-known/content-telemetry.json`, expected]);
    const missing = uniqueDomain("missing");
    add("404", missing, "answered 404");
    const moved = uniqueDomain("moved");
    publishFile(moved, "/.well-known/content-telemetry.json", {
      status: 302,
      headers: { location: "https://evil.test/" },
    });
    add("redirect", moved, "answered 302");
    const huge = uniqueDomain("huge");
    serveManifest(huge, manifestFor(huge, { padding: "x".repeat(70_000) }));
    add("huge", huge, "larger than 65536 bytes");
    const notJson = uniqueDomain("notjson");
    serveManifest(notJson, "{not json");
    add("not JSON", notJson, "not valid JSON");
    const badSchema = uniqueDomain("schema");
    serveManifest(badSchema, { ...manifestFor(badSchema), roles: ["emperor"] });
    add("schema", badSchema, "/roles/0");
    const oldVersion = uniqueDomain("old");
    serveManifest(oldVersion, { ...manifestFor(oldVersion), schema_version: "0.1" });
    add("v0.1", oldVersion, "/schema_version");
    const dupKeys = uniqueDomain("dup");
    const k = await signingKey("same");
    serveManifest(dupKeys, manifestFor(dupKeys, { keys: [k.entry, { ...k.entry }] }));
    add("duplicate key ids", dupKeys, "duplicate key id");
    const foreign = uniqueDomain("foreign");
    serveManifest(foreign, manifestFor(foreign, { domains: ["elsewhere.example.org"] }));
    add("foreign domain", foreign, "neither");
    const badKey = uniqueDomain("badkey");
    serveManifest(badKey, manifestFor(badKey, { keys: [{ id: "k", type: "Ed25519", publicKey: "z0OIl" }] }));
    add("malformed key", badKey, "publicKey is not valid base58btc");
    const shortKey = uniqueDomain("shortkey");
    serveManifest(shortKey, manifestFor(shortKey, { keys: [{ id: "k", type: "Ed25519", publicKey: "z6Mk" }] }));
    add("not an Ed25519 key", shortKey, "not an Ed25519 public key");
    // A member the schema leaves open still has to fit in the database.
    const nul = uniqueDomain("nul");
    serveManifest(nul, `${JSON.stringify(manifestFor(nul)).slice(0, -1)},"note":"a\\u0000b"}`);
    add("a NUL character", nul, "/note: contains a NUL character");

    for (const [label, url, expected] of cases) {
      const res = await register(admin, url);
      expect({ label, status: res.status, code: res.body.code }).toEqual({
        label,
        status: 422,
        code: "manifest_unusable",
      });
      expect({ label, detail: res.body.detail }).toEqual({ label, detail: expect.stringContaining(expected) });
      expect(res.body.errors[0].path).toBe("/url");
    }
    expect((await callIdentity("GET", "/api/v1/identity/manifest", { key: admin })).status).toBe(404);
  });

  test("domains entries must be host names and telemetry.endpoint an HTTPS URL: each refused naming the field", async () => {
    const { admin } = await orgWithWriteKey();
    const cases: [string, (host: string) => Record<string, unknown>, string][] = [
      ["a path", (host) => ({ domains: [host, `evil.com/.${host}`] }), "domains/1: "],
      ["a space", (host) => ({ domains: [`a b.${host}`] }), "domains/0: "],
      ["two wildcards", (host) => ({ domains: [`*.*.${host}`] }), "domains/0: "],
      ["an empty label", (host) => ({ domains: [`a..${host}`] }), "domains/0: "],
      ["http", (host) => ({ telemetry: { endpoint: `http://${host}/events` } }), "/telemetry/endpoint"],
      ["javascript:", () => ({ telemetry: { endpoint: "javascript:alert(1)" } }), "/telemetry/endpoint"],
    ];
    for (const [label, extra, field] of cases) {
      const host = uniqueDomain("fields");
      const res = await register(admin, serveManifest(host, manifestFor(host, extra(host))));
      expect({ label, status: res.status, code: res.body.code, path: res.body.errors?.[0]?.path }).toEqual({
        label,
        status: 422,
        code: "manifest_unusable",
        path: "/url",
      });
      expect({ label, detail: res.body.detail }).toEqual({ label, detail: expect.stringContaining(field) });
    }
    const host = uniqueDomain("fields");
    const fine = manifestFor(host, {
      domains: [host, `*.${host}`, `Shop.${host}`],
      telemetry: { endpoint: `https://${host}/events` },
    });
    expect((await register(admin, serveManifest(host, fine))).status).toBe(200);
  });

  test("a key expiry Date cannot read (a leap second) is refused, as ingest refuses it, and never taken as live", async () => {
    const host = uniqueDomain("leap");
    const key = await signingKey("leap", "2030-06-30T23:59:60Z");
    const { admin } = await orgWithWriteKey();
    const res = await register(admin, serveManifest(host, manifestFor(host, { keys: [key.entry] })));
    expect([res.status, res.body.code, res.body.detail, res.body.errors?.[0]?.path]).toEqual([
      422,
      "manifest_unusable",
      "keys/0: expires is not a valid date-time (8.4)",
      "/url",
    ]);
    // A manifest stored before this check keeps such a key: it must not verify.
    const body = new TextEncoder().encode("{}");
    const entry = { ...key.entry, type: "Ed25519" as const };
    expect(await verifyDetachedJws(await key.sign("{}"), body, [entry], new Date())).toBe("expired_key");
  });

  test("a manifest slower than the fetch limit is refused as unreachable, without a hang", async () => {
    const host = uniqueDomain("slow");
    const url = `https://${host}${manifestPath}`;
    // Three times the limit: an answer that waited for it would take far longer than the limit.
    publishFile(host, manifestPath, {
      body: JSON.stringify(manifestFor(host)),
      delayMs: 3 * manifestFetchLimits.timeoutMs,
    });
    const { admin } = await orgWithWriteKey();
    const started = performance.now();
    const res = await register(admin, url);
    expect(performance.now() - started).toBeLessThan(2 * manifestFetchLimits.timeoutMs);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "manifest_unusable", manifest_status: "unreachable" });
  }, 30_000);

  test("a manifest URL must be https and end in the well-known path", async () => {
    const { admin } = await orgWithWriteKey();
    for (const url of [
      "http://example.com/.well-known/content-telemetry.json",
      "https://example.com/manifest.json",
      "nope",
    ]) {
      const res = await register(admin, url);
      expect({ url, status: res.status, path: res.body.errors?.[0]?.path }).toEqual({ url, status: 400, path: "/url" });
    }
  });

  test("a manifest that turns invalid at refresh is recorded, and its keys stop verifying (injected clock)", async () => {
    const host = uniqueDomain("refresh");
    const key = await signingKey("key-1");
    const url = serveManifest(host, manifestFor(host, { keys: [key.entry] }));
    const { admin } = await orgWithWriteKey();
    expect((await register(admin, url)).status).toBe(200);
    serveManifest(host, "{broken");
    const { ctx } = await buildIdentityApp();
    await refreshDueManifests(ctx, new Date(Date.now() + 2 * 3600_000));
    const record = (await callIdentity("GET", "/api/v1/identity/manifest", { key: admin })).body;
    expect(record).toMatchObject({ status: "invalid", problem: "the manifest is not valid JSON", key_ids: [] });
  });
});

describe("refreshing manifests", () => {
  const due = () => new Date(Date.now() + 2 * 3600_000);

  test("one manifest that cannot be stored drops its keys and is tried again later; the others due are refreshed", async () => {
    const { ctx } = await buildIdentityApp();
    const [stuck, fine] = [await orgWithWriteKey(), await orgWithWriteKey()];
    const hosts = [uniqueDomain("stuck"), uniqueDomain("fine")];
    for (const [i, party] of [stuck, fine].entries()) {
      const host = hosts[i] as string;
      expect((await register(party.admin, serveManifest(host, manifestFor(host)))).status).toBe(200);
      serveManifest(host, "{broken");
    }
    // The stuck one's store fails, as a database refusing it would.
    const now = due();
    await whileRefusing(
      ctx.sql,
      { event: "UPDATE OF fetched_at", table: "participant_manifests", when: `OLD.org_id = '${stuck.org.id}'` },
      () => refreshDueManifests(ctx, now),
    );
    const get = (party: typeof stuck) => callIdentity("GET", "/api/v1/identity/manifest", { key: party.admin });
    expect((await get(fine)).body).toMatchObject({ status: "invalid", problem: "the manifest is not valid JSON" });
    const failed = (await get(stuck)).body;
    expect(failed).toMatchObject({ status: "invalid", problem: "the refreshed manifest could not be stored" });
    expect(failed.key_ids).toEqual([]);
    expect(Date.parse(failed.refresh_at)).toBe(now.getTime() + 15 * 60 * 1000);
  });

  test("a refreshed manifest with a NUL in a member's name is recorded invalid, its keys dropped", async () => {
    const { ctx } = await buildIdentityApp();
    const host = uniqueDomain("nulname");
    const key = await signingKey("key-1");
    const { admin } = await orgWithWriteKey();
    const document = manifestFor(host, { keys: [key.entry] });
    expect((await register(admin, serveManifest(host, document))).status).toBe(200);
    serveManifest(host, `${JSON.stringify(document).slice(0, -1)},"a\\u0000b":1}`);
    await refreshDueManifests(ctx, due());
    const record = (await callIdentity("GET", "/api/v1/identity/manifest", { key: admin })).body;
    expect(record).toMatchObject({ status: "invalid", key_ids: [] });
    expect(record.problem).toContain("contains a NUL character");
  });

  test("a refresh does not bring back a manifest removed, or replaced, while it fetched", async () => {
    const { ctx } = await buildIdentityApp();
    const [removed, replaced] = [await orgWithWriteKey(), await orgWithWriteKey()];
    const [first, second, other] = [uniqueDomain("removed"), uniqueDomain("replaced"), uniqueDomain("new")];
    expect((await register(removed.admin, serveManifest(first, manifestFor(first)))).status).toBe(200);
    expect((await register(replaced.admin, serveManifest(second, manifestFor(second)))).status).toBe(200);
    for (const host of [first, second]) {
      publishFile(host, manifestPath, { body: JSON.stringify(manifestFor(host)), delayMs: 1_000 });
    }
    const refreshing = refreshDueManifests(ctx, due());
    await Bun.sleep(200);
    expect((await callIdentity("DELETE", "/api/v1/identity/manifest", { key: removed.admin })).status).toBe(204);
    const newUrl = serveManifest(other, manifestFor(other));
    expect((await register(replaced.admin, newUrl)).status).toBe(200);
    await refreshing;
    expect((await callIdentity("GET", "/api/v1/identity/manifest", { key: removed.admin })).status).toBe(404);
    expect((await callIdentity("GET", "/api/v1/identity/manifest", { key: replaced.admin })).body.url).toBe(newUrl);
  }, 30_000);
});

describe("signed telemetry", () => {
  async function signedReporter(keys: Awaited<ReturnType<typeof signingKey>>[]) {
    const host = uniqueDomain("signer");
    const url = serveManifest(host, manifestFor(host, { keys: keys.map((k) => k.entry) }));
    const { org, admin } = await orgWithWriteKey();
    expect((await register(admin, url)).status).toBe(200);
    return { org, admin };
  }

  async function report(
    key: string,
    signature?: (body: string) => Promise<string>,
    how: { tamper?: boolean; gzip?: boolean } = {},
  ) {
    const body = JSON.stringify(batch([validEvents.grounded("news.example.org")], { session_id: crypto.randomUUID() }));
    const headers: Record<string, string> = {};
    if (signature) headers["content-telemetry-signature"] = await signature(body);
    const sent = how.tamper ? body.replace("news.example.org", "news.example.net") : body;
    if (how.gzip) headers["content-encoding"] = "gzip";
    const res = await callIdentity("POST", "/events", { key, body: how.gzip ? Bun.gzipSync(sent) : sent, headers });
    expect(res.status).toBe(200);
    const { ctx } = await testRuntime();
    const [row] = await ctx.sql<{ signature_status: string }[]>`
      SELECT signature_status FROM events WHERE session_id = ${JSON.parse(sent).session_id}::uuid`;
    return row?.signature_status;
  }

  test("each event stores what its request's signature checked out as; none is refused", async () => {
    const live = await signingKey("live");
    const old = await signingKey("old", "2020-01-01T00:00:00Z");
    const stranger = await signingKey("live");
    const { admin } = await signedReporter([live, old]);
    expect(await report(admin, (body) => live.sign(body))).toBe("verified");
    expect(await report(admin, (body) => live.sign(body), { tamper: true })).toBe("invalid");
    expect(await report(admin, (body) => stranger.sign(body))).toBe("invalid");
    expect(await report(admin, (body) => live.sign(body, "nobody"))).toBe("unknown_key");
    expect(await report(admin, (body) => old.sign(body))).toBe("expired_key");
    expect(await report(admin, async () => "not a jws")).toBe("invalid");
    expect(await report(admin, async () => "")).toBe("invalid");
    expect(await report(admin)).toBe("unverified");
  });

  test("the checks decide in order (form, kid, expiry, signature), over the body as decompressed", async () => {
    const live = await signingKey("live");
    const old = await signingKey("old", "2020-01-01T00:00:00Z");
    const { admin } = await signedReporter([live, old]);
    expect(await report(admin, (body) => live.sign(body, "nobody"), { tamper: true })).toBe("unknown_key");
    expect(await report(admin, (body) => old.sign(body), { tamper: true })).toBe("expired_key");
    expect(await report(admin, (body) => live.sign(body), { gzip: true })).toBe("verified");
  });

  test("a reporter without a valid manifest is unverified, signed or not", async () => {
    const key = await signingKey("k");
    const { admin } = await orgWithWriteKey();
    expect(await report(admin, (body) => key.sign(body))).toBe("unverified");
  });
});
