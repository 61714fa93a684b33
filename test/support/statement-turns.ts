import postgres from "postgres";
import type { Sql } from "../../src/db/sql.ts";

/**
 * A client of one connection to `url` that notes the turn of the event loop each
 * statement holding `first` or `second` went out in. Statements sent together go
 * out in one turn, in whichever order; one sent after another's answer goes out in
 * a later turn, since that answer comes in one. A statement goes out when the
 * connection first uses it too, so a test runs its request once, `forget()`s, and
 * looks at the next.
 */
export function turnWatchingClient(url: string, first: string, second: string) {
  let turn = 0;
  let turnEnding = false;
  const turns = { first: [] as number[], second: [] as number[] };
  const sql: Sql = postgres(url, {
    max: 1,
    onnotice: () => {},
    debug: (_connection: number, text: string) => {
      if (!turnEnding) {
        turnEnding = true;
        setImmediate(() => {
          turn += 1;
          turnEnding = false;
        });
      }
      if (text.includes(first)) turns.first.push(turn);
      if (text.includes(second)) turns.second.push(turn);
    },
  });
  return {
    sql,
    /** For each `second` statement, whether a `first` one went out in its turn. */
    secondInFirstsTurn: () => turns.second.map((at) => turns.first.includes(at)),
    forget(): void {
      turns.first.length = 0;
      turns.second.length = 0;
    },
  };
}
