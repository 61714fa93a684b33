import { describe, expect, test } from "bun:test";
import { manifestPath } from "../../src/modules/manifests/model.ts";
import { publishFile } from "../support/domain-probe.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { callIdentity } from "../support/identity.ts";
import { manifestFor, serveManifest, signingKey } from "../support/manifests.ts";

type SigningKey = Awaited<ReturnType<typeof signingKey>>;

/** A content owner with `domain` registered (not verified) and a key that may verify it. */
async function ownerWithDomain(domain: string) {
  const org = await createTestOrg({ type: "content_owner", domain, verified: false });
  const admin = await org.keyWith(["identity:read", "identity:write"]);
  const record = await callIdentity("GET", `/api/v1/identity/domains/${domain}`, { key: admin });
  expect(record.status).toBe(200);
  return { admin, challenge: record.body.verification.manifest.sign as string, instructions: record.body.verification };
}

async function registerManifest(key: string, host: string, domains: string[], keys: SigningKey[]) {
  const url = serveManifest(host, manifestFor(host, { keys: keys.map((k) => k.entry), domains }));
  const res = await callIdentity("PUT", "/api/v1/identity/manifest", { key, body: { url } });
  expect(res.status).toBe(200);
  return url;
}

const verify = (key: string, domain: string, signature?: string) =>
  callIdentity("POST", `/api/v1/identity/domains/${domain}/verify`, {
    key,
    body: { method: "manifest", ...(signature === undefined ? {} : { signature }) },
  });

describe("verifying a domain through the participant manifest", () => {
  test("a manifest at the domain's root naming it, and the challenge signed by its key, verify the domain", async () => {
    const domain = uniqueDomain("claim");
    const key = await signingKey("k1");
    const { admin, challenge, instructions } = await ownerWithDomain(domain);
    expect(instructions.manifest).toEqual({
      manifest_url: `https://${domain}/.well-known/content-telemetry.json`,
      domains_entry: domain,
      sign: challenge,
    });
    await registerManifest(admin, domain, [domain], [key]);
    const res = await verify(admin, domain, await key.sign(challenge));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ state: "verified", verification_method: "manifest", verification: null });
  });

  test("a parent domain's manifest with a wildcard entry verifies a subdomain", async () => {
    const parent = uniqueDomain("parent");
    const domain = `shop.${parent}`;
    const key = await signingKey("k1");
    const { admin, challenge } = await ownerWithDomain(domain);
    await registerManifest(admin, parent, [parent, `*.${parent}`], [key]);
    const res = await verify(admin, domain, await key.sign(challenge));
    expect(res.status).toBe(200);
    expect(res.body.verification_method).toBe("manifest");
  });

  test("each missing piece is 422 verification_failed saying which, and the domain stays registered", async () => {
    const domain = uniqueDomain("fail");
    const key = await signingKey("k1");
    const stranger = await signingKey("k1");
    const { admin, challenge } = await ownerWithDomain(domain);
    const expectRefused = async (label: string, signature: string | undefined, reason: string) => {
      const res = await verify(admin, domain, signature);
      expect({ label, status: res.status, code: res.body.code }).toEqual({
        label,
        status: 422,
        code: "verification_failed",
      });
      expect({ label, detail: res.body.detail }).toEqual({ label, detail: expect.stringContaining(reason) });
    };

    await expectRefused("no manifest", await key.sign(challenge), "registered no manifest");
    await registerManifest(admin, domain, [`other.${domain}`], [key]);
    await expectRefused("not named", await key.sign(challenge), `domains do not name ${domain}`);
    await registerManifest(admin, domain, [domain], [key]);
    await expectRefused("no signature", undefined, "needs signature");
    await expectRefused("another key", await stranger.sign(challenge), "signature over the challenge is invalid");
    await expectRefused("another text", await key.sign("something else"), "is invalid");
    await expectRefused("unknown kid", await key.sign(challenge, "nobody"), "is unknown key");
    const record = await callIdentity("GET", `/api/v1/identity/domains/${domain}`, { key: admin });
    expect(record.body.state).toBe("registered");
  });

  test("someone else's manifest cannot verify a domain: its keys are not the caller's", async () => {
    const domain = uniqueDomain("victim");
    const ownersKey = await signingKey("k1");
    const victim = await ownerWithDomain(domain);
    await registerManifest(victim.admin, domain, [domain], [ownersKey]);

    // The intruder registers the same domain and points at the victim's manifest.
    const intruder = await createTestOrg({ type: "content_owner", domain, verified: false });
    const intruderAdmin = await intruder.keyWith(["identity:read", "identity:write"]);
    const url = `https://${domain}/.well-known/content-telemetry.json`;
    expect((await callIdentity("PUT", "/api/v1/identity/manifest", { key: intruderAdmin, body: { url } })).status).toBe(
      200,
    );
    const ownChallenge = (await callIdentity("GET", `/api/v1/identity/domains/${domain}`, { key: intruderAdmin })).body
      .verification.manifest.sign;
    const forged = await signingKey("k1");
    const res = await verify(intruderAdmin, domain, await forged.sign(ownChallenge));
    expect(res.status).toBe(422);
    // A signature the victim made for its own challenge does not fit the intruder's.
    const replayed = await verify(intruderAdmin, domain, await ownersKey.sign(victim.challenge));
    expect(replayed.status).toBe(422);
  });

  test("a manifest on another port or below the root names no domains: more people can serve those", async () => {
    const domain = uniqueDomain("shared");
    const key = await signingKey("k1");
    const { admin, challenge } = await ownerWithDomain(domain);
    for (const [url, path] of [
      [`https://${domain}:8443${manifestPath}`, manifestPath],
      [`https://${domain}/~tenant${manifestPath}`, `/~tenant${manifestPath}`],
    ] as const) {
      const document = manifestFor(domain, { id: url, keys: [key.entry], domains: [domain] });
      publishFile(domain, path, { body: JSON.stringify(document) });
      const put = await callIdentity("PUT", "/api/v1/identity/manifest", { key: admin, body: { url } });
      expect([url, put.status, put.body.code, put.body.detail]).toEqual([
        url,
        422,
        "manifest_unusable",
        `domains may appear only on a manifest served at the domain root, https://${domain}${manifestPath} (8.6)`,
      ]);
    }
    // Registered there without domains, which is allowed, then served with them:
    // the verification's own fetch refuses it.
    const url = `https://${domain}:8443${manifestPath}`;
    publishFile(domain, manifestPath, { body: JSON.stringify(manifestFor(domain, { id: url, keys: [key.entry] })) });
    const put = await callIdentity("PUT", "/api/v1/identity/manifest", { key: admin, body: { url } });
    expect(put.status).toBe(200);
    publishFile(domain, manifestPath, {
      body: JSON.stringify(manifestFor(domain, { id: url, keys: [key.entry], domains: [domain] })),
    });
    const res = await verify(admin, domain, await key.sign(challenge));
    expect([res.status, res.body.detail]).toEqual([
      422,
      `the manifest at ${url} is invalid: domains may appear only on a manifest served at the domain root, https://${domain}${manifestPath} (8.6)`,
    ]);
  });

  test("a claim does not bring back a manifest removed, or replaced, while it fetched, nor verify with it", async () => {
    const key = await signingKey("k1");
    const [removed, replaced, other] = [uniqueDomain("removed"), uniqueDomain("replaced"), uniqueDomain("new")];
    const remover = await ownerWithDomain(removed);
    const replacer = await ownerWithDomain(replaced);
    await registerManifest(remover.admin, removed, [removed], [key]);
    await registerManifest(replacer.admin, replaced, [replaced], [key]);
    for (const host of [removed, replaced]) {
      const document = manifestFor(host, { keys: [key.entry], domains: [host] });
      publishFile(host, manifestPath, { body: JSON.stringify(document), delayMs: 1_500 });
    }
    const claims = [
      verify(remover.admin, removed, await key.sign(remover.challenge)),
      verify(replacer.admin, replaced, await key.sign(replacer.challenge)),
    ];
    await Bun.sleep(500);
    expect((await callIdentity("DELETE", "/api/v1/identity/manifest", { key: remover.admin })).status).toBe(204);
    const newUrl = serveManifest(other, manifestFor(other));
    expect(
      (await callIdentity("PUT", "/api/v1/identity/manifest", { key: replacer.admin, body: { url: newUrl } })).status,
    ).toBe(200);
    for (const res of await Promise.all(claims)) {
      expect([res.status, res.body.code, res.body.detail]).toEqual([
        422,
        "verification_failed",
        expect.stringContaining("while it was fetched"),
      ]);
    }
    expect((await callIdentity("GET", "/api/v1/identity/manifest", { key: remover.admin })).status).toBe(404);
    const kept = await callIdentity("GET", "/api/v1/identity/manifest", { key: replacer.admin });
    expect([kept.body.url, kept.body.key_ids]).toEqual([newUrl, []]);
    for (const [domain, admin] of [
      [removed, remover.admin],
      [replaced, replacer.admin],
    ] as const) {
      expect((await callIdentity("GET", `/api/v1/identity/domains/${domain}`, { key: admin })).body.state).toBe(
        "registered",
      );
    }
  }, 30_000);

  test("a manifest served by another host cannot verify the domain", async () => {
    const domain = uniqueDomain("elsewhere");
    const other = uniqueDomain("host");
    const key = await signingKey("k1");
    const { admin, challenge } = await ownerWithDomain(domain);
    await registerManifest(admin, other, [other], [key]);
    const res = await verify(admin, domain, await key.sign(challenge));
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain(`served by ${other}`);
  });
});
