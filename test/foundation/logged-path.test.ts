import { expect, test } from "bun:test";
import { loggedPath } from "../../src/http/logged-path.ts";

test("a logged path keeps a click token's first eight characters, and leaves every other path alone", () => {
  expect(loggedPath("/ctx/ctx_abcdefghijklmnop")).toBe("/ctx/ctx_abcd…[redacted]");
  // Routing is case-sensitive, but a mistyped prefix still carries the token.
  expect(loggedPath("/CTX/ctx_abcdefghijklmnop/more")).toBe("/CTX/ctx_abcd…[redacted]/more");
  expect(loggedPath("//ctx/ctx_abcdefghijklmnop")).toBe("//ctx/ctx_abcd…[redacted]");
  expect(loggedPath("/ctx/ctx_abcd")).toBe("/ctx/ctx_abcd");
  expect(loggedPath("/api/v1/identity/domains/ctx/verify")).toBe("/api/v1/identity/domains/ctx/verify");
  expect(loggedPath("/content-owners/events")).toBe("/content-owners/events");
});
