import { afterAll, describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { isLoopbackAddress, isNonPublicAddress } from "../../src/core/addresses.ts";
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

  test("refuses a status outside 200-599 and closes the connection", async () => {
    let closed = false;
    const odd = createServer((socket) => {
      socket.on("close", () => {
        closed = true;
      });
      socket.on("data", () => socket.write("HTTP/1.1 700 Odd\r\ncontent-length: 2\r\n\r\nok"));
    });
    await new Promise<void>((resolve) => odd.listen(0, "127.0.0.1", resolve));
    try {
      const port = (odd.address() as { port: number }).port;
      const error = await rejectionOf(systemProbe(loopbackOnly, () => true).fetch(`http://rebind.test:${port}/`, {}));
      expect(String(error)).toContain("status 700");
      for (let waited = 0; !closed && waited < 2000; waited += 20) await Bun.sleep(20);
      expect(closed).toBe(true);
    } finally {
      odd.close();
    }
  });
});

test.each([
  ["10.1.2.3", true],
  ["100.64.0.1", true],
  ["169.254.169.254", true],
  ["192.168.1.1", true],
  ["224.0.0.1", true],
  ["255.255.255.255", true],
  ["::1", true],
  ["::", true],
  ["::ffff:127.0.0.1", true],
  ["::ffff:7f00:1", true],
  ["fe90::1", true],
  ["fd00::1", true],
  ["ff02::1", true],
  ["64:ff9b::7f00:1", true],
  ["64:ff9b:1::a00:1", true],
  ["::10.0.0.1", true],
  ["::a00:1", true],
  ["::8.8.8.8", true],
  ["::ffff:0:10.0.0.1", true],
  ["::ffff:0:a00:1", true],
  ["2002:a00:1::1", true],
  ["2002:808:808::1", true],
  ["64:ff9b:1::808:808", true],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", true],
  ["2001:db8::1", true],
  ["fec0::1", true],
  ["0177.0.0.1", true],
  ["0x7f.1", true],
  ["fe80::1%eth0", true],
  ["fd00:ec2::254", true],
  ["::ffff:169.254.169.254", true],
  ["::ffff:a9fe:a9fe", true],
  ["100.127.255.255", true],
  ["0.0.0.0", true],
  ["not an address", true],
  ["8.8.8.8", false],
  ["::ffff:8.8.8.8", false],
  ["2606:4700::1111", false],
])("%s is non-public: %p", (address, expected) => {
  expect(isNonPublicAddress(address)).toBe(expected);
});

test.each([
  ["127.0.0.1", true],
  ["127.255.0.9", true],
  ["::1", true],
  ["::ffff:127.0.0.1", true],
  ["10.0.0.1", false],
  ["::", false],
  ["169.254.169.254", false],
  ["localhost", false],
])("%s is loopback: %p", (address, expected) => {
  expect(isLoopbackAddress(address)).toBe(expected);
});
