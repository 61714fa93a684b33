import { expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";

test("a NUL character in a query parameter is 400 naming that parameter", async () => {
  const agent = await createTestOrg({ type: "agent" });
  const res = await call("GET", "/agent/summary?since=2026-01-01T00:00:00Z&agent_id=a%00b", { key: agent.key });
  expect(res.status).toBe(400);
  expect(res.body.code).toBe("invalid_text");
  expect(res.body.errors).toEqual([{ path: "/agent_id", message: "must not contain a NUL (\\u0000) character" }]);
  const anonymous = await call("GET", "/agent/summary?agent_id=a%00b");
  expect(anonymous.status).toBe(401);
});
