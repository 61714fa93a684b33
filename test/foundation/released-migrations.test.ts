import { expect, test } from "bun:test";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { defaultMigrationsDir } from "../../src/db/migrate.ts";

/**
 * Every installation records the checksum of each migration it applied, comments
 * included, and refuses to start when a file no longer matches (src/db/migrate.ts).
 * Nine files were once edited after release, three in their comments only, and
 * installations that had applied them could not upgrade. So each released file's
 * checksum is pinned here, in `sha256sum`'s format, and a new file is pinned when
 * it is added.
 */
const pinnedFile = join(import.meta.dir, "released-migrations.sha256");

test("a released migration is never edited, not even in its comments, nor removed; a new one is pinned", async () => {
  const pinned = new Map(
    (await Bun.file(pinnedFile).text())
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [checksum, name] = line.split(/\s+/);
        return [name as string, checksum as string];
      }),
  );
  const files = (await readdir(defaultMigrationsDir)).filter((name) => name.endsWith(".sql")).sort();
  const problems: string[] = [];
  for (const name of files) {
    const checksum = new Bun.CryptoHasher("sha256")
      .update(await Bun.file(join(defaultMigrationsDir, name)).text())
      .digest("hex");
    const released = pinned.get(name);
    if (released === undefined) {
      problems.push(
        `${name} is new: pin it with (cd sql && sha256sum ${name}) >> test/foundation/released-migrations.sha256`,
      );
    } else if (released !== checksum) {
      problems.push(`${name} was changed after release; restore it and add a new migration instead`);
    }
  }
  for (const name of pinned.keys()) {
    if (!files.includes(name)) problems.push(`${name} was released and is gone; installations have applied it`);
  }
  expect(problems).toEqual([]);
});
