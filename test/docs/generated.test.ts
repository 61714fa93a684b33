import { expect, test } from "bun:test";
import { docPath, withGeneratedPart } from "../../scripts/docs/generated-part.ts";
import { generatedGuides } from "../../scripts/generate-docs.ts";
import { testRuntime } from "../support/runtime.ts";

for (const [name, render] of Object.entries(generatedGuides)) {
  test(`docs/${name} matches the code it is generated from (bun run docs:generate)`, async () => {
    const { app } = await testRuntime();
    const path = docPath(name);
    const text = await Bun.file(path).text();
    expect(text).toBe(withGeneratedPart(text, render(app.routes), path));
  });
}
