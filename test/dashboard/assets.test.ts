import { describe, expect, test } from "bun:test";
import { call } from "../support/http.ts";

describe("the dashboard's page and assets", () => {
  test("/app is a page with a strict content security policy that loads only the service's own assets", async () => {
    const res = await call("GET", "/app");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const sources = [...String(res.body).matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    // An inline empty icon: no request for /favicon.ico, which would be a 404 on every load.
    expect(sources.filter((source) => !source?.startsWith("/"))).toEqual(["data:,"]);
    for (const source of sources.filter((s) => s?.startsWith("/app/assets/"))) {
      expect({ source, status: (await call("GET", source as string)).status }).toEqual({ source, status: 200 });
    }
  });

  test("the script is bundled from web/ within the 250 KB (gzipped) first-load budget", async () => {
    const res = await call("GET", "/app/assets/app.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("javascript");
    const gzipped = Bun.gzipSync(String(res.body)).length;
    expect(gzipped).toBeGreaterThan(1_000);
    expect(gzipped).toBeLessThan(250 * 1024);
  });

  test("an unknown asset is a 404 problem", async () => {
    for (const name of ["secrets.txt", "..%2Fpackage.json", "%00"]) {
      const res = await call("GET", `/app/assets/${name}`);
      expect([res.status, res.headers.get("content-type"), res.body.code]).toEqual([
        404,
        "application/problem+json",
        "route_not_found",
      ]);
    }
  });
});
