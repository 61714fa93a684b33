import { describe, expect, test } from "bun:test";
import { maxPageOffset } from "../../src/http/paging.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { callIdentity, signIn } from "../support/identity.ts";

const base = "/api/v1/identity";

describe("paged lists", () => {
  // Past PostgreSQL's bigint (or written with an exponent) an offset used to reach the database as a 500.
  for (const offset of ["100000000000000000000", "9223372036854775808", "1e30", String(maxPageOffset + 1)]) {
    test(`offset=${offset} is 400, never a 500`, async () => {
      const org = await createTestOrg();
      const user = await signIn();
      for (const [path, credential] of [
        [`${base}/keys`, { key: org.key }],
        [`${base}/domains`, { key: org.key }],
        [`${base}/organizations`, { session: user.session }],
      ] as const) {
        const listed = await callIdentity("GET", `${path}?offset=${offset}`, credential);
        expect(listed.status).toBe(400);
        expect(listed.body.errors).toEqual([expect.objectContaining({ path: "/offset" })]);
      }
    });
  }

  test("a limit out of range is named in the 400", async () => {
    const org = await createTestOrg();
    for (const query of ["limit=101", "limit=0&offset=3", "offset=5&limit=0"]) {
      const listed = await callIdentity("GET", `${base}/keys?${query}`, { key: org.key });
      expect(listed.status).toBe(400);
      expect(listed.body.errors).toEqual([expect.objectContaining({ path: "/limit" })]);
      expect(listed.body.detail).toBe("the query parameters are invalid: /limit");
    }
  });

  test("the largest offset answers an empty page", async () => {
    const org = await createTestOrg();
    const listed = await callIdentity("GET", `${base}/keys?offset=${maxPageOffset}`, { key: org.key });
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ items: [], total: 1, offset: maxPageOffset });
  });
});
