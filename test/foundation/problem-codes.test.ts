import { expect, test } from "bun:test";
import { join } from "node:path";
import { problemCodes } from "../../src/core/problem.ts";
import { call } from "../support/http.ts";

const errorsGuide = await Bun.file(join(import.meta.dir, "../../docs/errors.md")).text();

test("every problem code is listed in docs/errors.md with its status", () => {
  const missing = Object.entries(problemCodes)
    .filter(([code, { status }]) => !errorsGuide.includes(`| ${status} | \`${code}\` |`))
    .map(([code]) => code);
  expect(missing).toEqual([]);
});

test("the OpenAPI document lists exactly the problem codes", async () => {
  const { body } = await call("GET", "/openapi/json");
  expect([...body.components.schemas.Problem.properties.code.enum].sort()).toEqual(Object.keys(problemCodes).sort());
});
