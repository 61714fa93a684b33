import { expect, test } from "bun:test";
import { wireFormatPath, withGeneratedPart } from "../../scripts/wire-format.ts";

test("docs/wire-format.md lists the event types and fields ingest checks against (bun run docs:wire-format)", async () => {
  const text = await Bun.file(wireFormatPath).text();
  expect(text).toBe(withGeneratedPart(text));
});
