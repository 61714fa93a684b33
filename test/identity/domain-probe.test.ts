import { afterAll, describe, expect, test } from "bun:test";
import { systemDomainProbe, systemProbe } from "../../src/modules/domains/probe.ts";
import { rejectionOf } from "../support/rejection.ts";

// A local web server standing in for a domain's site.
const site = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/moved")
      return new Response(null, { status: 302, headers: { location: "http://127.0.0.1/elsewhere" } });
    if (path === "/silent") return new Promise<Response>(() => {});
    return new Response("challenge-text");
  },
});
afterAll(() => site.stop(true));
const loopbackOnly = async () => [{ address: "127.0.0.1", family: 4 }];

describe("the HTTPS-file probe", () => {
  test("refuses hosts that resolve to, or are, non-public addresses", async () => {
    for (const url of [
      `http://localhost:${site.port}/`,
      `http://127.0.0.1:${site.port}/`,
      `http://[::1]:${site.port}/`,
    ]) {
      const error = await rejectionOf(systemDomainProbe.fetch(url, {}));
      expect({ url, error: String(error) }).toEqual({ url, error: expect.stringContaining("non-public") });
    }
  });

  test("connects to the very addresses its check resolved, so DNS cannot rebind in between", async () => {
    // rebind.test exists only in this resolver: reaching the server proves the
    // connection used the checked addresses rather than resolving the name again.
    const allowingLoopback = systemProbe(loopbackOnly, () => true);
    const response = await allowingLoopback.fetch(`http://rebind.test:${site.port}/file`, {});
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("challenge-text");

    const refusing = systemProbe(loopbackOnly, (address) => address !== "127.0.0.1");
    expect(String(await rejectionOf(refusing.fetch(`http://rebind.test:${site.port}/file`, {})))).toContain(
      "non-public",
    );
  });

  test("does not follow redirects", async () => {
    const response = await systemProbe(loopbackOnly, () => true).fetch(`http://rebind.test:${site.port}/moved`, {});
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("http://127.0.0.1/elsewhere");
  });

  test("gives up when the site does not answer in time", async () => {
    const probe = systemProbe(loopbackOnly, () => true);
    const request = probe.fetch(`http://rebind.test:${site.port}/silent`, { signal: AbortSignal.timeout(100) });
    expect(await rejectionOf(request)).toBeDefined();
  });
});
