/**
 * Driver benchmark: the client's CPU for sending statements whose parameters are
 * large text arrays, as a counted write's Bind is (one array per column of its
 * events, hundreds of kilobytes), through the service's patched postgres.js
 * (patches/README.md):
 *
 *   DATABASE_URL=… bun run bench:driver-send [--arrays 21] [--values 1000] [--statements 300]
 *
 * Each statement sends `arrays` text arrays of `values` URLs and asks only whether
 * they arrived, so that nearly all of this process's CPU over the timed statements
 * (user and system, after 30 untimed ones) is building and sending them. Prints
 * the message's size and the CPU per statement and per value. Needs a server:
 * the embedded engine runs inside this process, and its CPU would count as the
 * client's. Reads nothing and writes nothing there.
 */
import { parseArgs } from "node:util";
import { progressLine } from "../src/cli/progress.ts";
import { connect } from "../src/db/client.ts";
import { joined } from "../src/db/fragments.ts";
import { failInOneLine, numberOption } from "./cli.ts";

failInOneLine();
const { values: flags } = parseArgs({
  options: {
    arrays: { type: "string", default: "21" },
    values: { type: "string", default: "1000" },
    statements: { type: "string", default: "300" },
  },
});
const arrayCount = numberOption(flags, "arrays", 1, 1000);
const valueCount = numberOption(flags, "values", 1);
const statements = numberOption(flags, "statements", 1);
if (!process.env.DATABASE_URL) {
  console.error(
    "bench:driver-send needs DATABASE_URL (a PostgreSQL server; the embedded engine would count as the client)",
  );
  process.exit(2);
}

const sql = connect(process.env.DATABASE_URL, 1);
const arrays = Array.from({ length: arrayCount }, (_, a) =>
  Array.from({ length: valueCount }, (_, i) => `https://site-${a}.example.com/articles/${i}/${crypto.randomUUID()}`),
);
// Each value quoted in the array literal, a comma or brace after it.
const messageBytes = arrays.flat().reduce((sum, url) => sum + Buffer.byteLength(url) + 3, 0);
// One parameter per array, as a write sends one per column.
const send = () =>
  sql<{ sent: string }[]>`SELECT ${joined(
    sql,
    arrays.map((urls) => sql`cardinality(${urls}::text[])`),
    sql` + `,
  )} AS sent`;

const progress = progressLine();
for (let i = 0; i < 30; i++) await send();
const [check] = await send();
if (Number(check?.sent) !== arrayCount * valueCount) throw new Error(`the server counted ${check?.sent} values`);
const before = process.cpuUsage();
for (let i = 0; i < statements; i++) {
  progress.show(`statement ${i + 1} of ${statements}`);
  await send();
}
const used = process.cpuUsage(before);
progress.clear();
const perStatementMs = (used.user + used.system) / statements / 1000;
console.log(
  `${arrayCount} text arrays of ${valueCount} values a statement, about ${(messageBytes / 1e6).toFixed(2)} MB; ` +
    `${statements} statements after 30 untimed`,
);
console.log(
  `client CPU per statement: ${perStatementMs.toFixed(2)} ms (user ${(used.user / statements / 1000).toFixed(2)}, ` +
    `system ${(used.system / statements / 1000).toFixed(2)}); ${((perStatementMs * 1e6) / (arrayCount * valueCount)).toFixed(0)} ns per value`,
);
await sql.end();
