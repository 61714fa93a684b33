import { describe, expect, test } from "bun:test";
import { call } from "./support/http.ts";

describe("health", () => {
  test("GET /health answers ok", async () => {
    const res = await call("GET", "/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
  });
  test("GET /ready reports the database", async () => {
    const res = await call("GET", "/ready");
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ready");
  });
});
