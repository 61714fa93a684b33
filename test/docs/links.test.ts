import { expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";

const root = join(import.meta.dir, "../..");
const guides = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** Markdown link targets, `[text](target)`, outside code blocks. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] ?? "");
}

test("every link in the README and docs/ stays in the repository and names a file that exists", async () => {
  const broken: string[] = [];
  for (const guide of guides) {
    for (const target of linksOf(await Bun.file(join(root, guide)).text())) {
      if (/^https?:\/\/localhost[:/]/.test(target)) continue;
      if (/^[a-z]+:/.test(target)) {
        broken.push(`${guide}: ${target} leaves the repository`);
        continue;
      }
      const path = target.split("#")[0] ?? "";
      if (path && !existsSync(join(root, dirname(guide), path))) broken.push(`${guide}: ${target} does not exist`);
    }
  }
  expect(broken).toEqual([]);
});
