import { describe, expect, test } from "bun:test";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { call } from "../support/http.ts";

describe("GET /resolve (public)", () => {
  test("a verified domain and its subdomains are handled by their owner", async () => {
    const org = await createTestOrg({ name: "Resolved Owner" });
    const byDomain = await call("GET", `/resolve?domain=${org.domain}`);
    expect(byDomain.status).toBe(200);
    expect(byDomain.body).toEqual({
      domain: org.domain,
      handled: true,
      organization: { id: org.id, name: "Resolved Owner" },
    });
    const byUrl = await call("GET", `/resolve?url=${encodeURIComponent(`https://News.${org.domain}./a/b?c=1`)}`);
    expect(byUrl.body).toEqual({
      domain: `news.${org.domain}`,
      handled: true,
      organization: { id: org.id, name: "Resolved Owner" },
    });
    const upper = await call("GET", `/resolve?domain=${org.domain?.toUpperCase()}.`);
    expect(upper.body.handled).toBe(true);
  });

  test("unregistered and registered-but-unverified domains are not handled", async () => {
    const unknown = uniqueDomain();
    expect((await call("GET", `/resolve?domain=${unknown}`)).body).toEqual({
      domain: unknown,
      handled: false,
      organization: null,
    });
    const pending = await createTestOrg({ verified: false });
    expect((await call("GET", `/resolve?domain=${pending.domain}`)).body.handled).toBe(false);
    // A parent of a verified domain is not covered by it.
    const org = await createTestOrg();
    expect((await call("GET", `/resolve?domain=example.com`)).body.organization?.id).not.toBe(org.id);
  });

  test("IDN hosts are looked up in punycode", async () => {
    const res = await call("GET", `/resolve?domain=${encodeURIComponent("bücher-test.example")}`);
    expect(res.body.domain).toBe("xn--bcher-test-9db.example");
  });

  test("needs exactly one usable parameter", async () => {
    for (const query of [
      "",
      "?domain=a.example&url=https://a.example/",
      "?url=not%20a%20url",
      "?domain=a.example/path",
      "?domain=",
    ]) {
      const res = await call("GET", `/resolve${query}`);
      expect(res.status).toBe(400);
    }
  });

  test("looks up host names only: what the URL parser would let through is refused, naming the parameter", async () => {
    const longest = `${"a.".repeat(4000)}com`;
    for (const [query, path] of [
      [`?url=${encodeURIComponent(`http://${longest}/`)}`, "/url"],
      [`?domain=${"b".repeat(64)}.example`, "/domain"],
      ["?domain=.site.example", "/domain"],
      ["?domain=*.site.example", "/domain"],
      [`?domain=${encodeURIComponent("site.example\\evil")}`, "/domain"],
      ["?domain=site.example..", "/domain"],
      [`?url=${encodeURIComponent("ftp://site.example/file")}`, "/url"],
      [`?url=${encodeURIComponent("http://[::1]/")}`, "/url"],
    ] as const) {
      const res = await call("GET", `/resolve${query}`);
      expect({ query: query.slice(0, 60), status: res.status, path: res.body.errors?.[0]?.path }).toEqual({
        query: query.slice(0, 60),
        status: 400,
        path,
      });
    }
    // IPs and one trailing dot are host names still: not handled, not refused.
    for (const domain of ["192.0.2.1", "site.example."]) {
      expect((await call("GET", `/resolve?domain=${domain}`)).body.handled).toBe(false);
    }
  });
});
