import postgres from "postgres";
import type { Sql } from "../../src/db/sql.ts";

/**
 * A client of one connection to `url` that notes, for each statement whose text
 * holds `second`, whether it went out in the turn of the event loop that the
 * latest statement holding `first` went out in: before the first's answer, which
 * comes in a later turn, can have been read. A statement goes out when the
 * connection first uses it too, so a test runs its request once before it looks.
 */
export function turnWatchingClient(
  url: string,
  first: string,
  second: string,
): { sql: Sql; secondInFirstsTurn: boolean[] } {
  let firstTurnOver = true;
  const secondInFirstsTurn: boolean[] = [];
  const sql = postgres(url, {
    max: 1,
    onnotice: () => {},
    debug: (_connection: number, text: string) => {
      if (text.includes(first)) {
        firstTurnOver = false;
        setImmediate(() => {
          firstTurnOver = true;
        });
      }
      if (text.includes(second)) secondInFirstsTurn.push(!firstTurnOver);
    },
  });
  return { sql, secondInFirstsTurn };
}
