/** Where progress goes: stderr, or a stand-in with its own isTTY. */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

/**
 * Long work's progress (a bench's; the operator CLI's creating a database), on
 * stderr so that stdout holds the report or the answer alone. On a terminal, one
 * line redrawn in place. To a file or a pipe (a CI log, `nohup`), where redrawn
 * lines would pile up as one long line of carriage returns, a line of its own at
 * most every `plainEveryMs`: a run read later shows how it went, and one read
 * while it runs shows it is still going.
 */
export function progressLine(
  stream: ProgressStream = process.stderr,
  plainEveryMs = 10_000,
  now: () => number = () => performance.now(),
) {
  let width = 0;
  let plainAt: number | undefined;
  const show = (line: string): void => {
    if (!stream.isTTY) {
      if (plainAt !== undefined && now() - plainAt < plainEveryMs) return;
      plainAt = now();
      stream.write(`${line}\n`);
      return;
    }
    stream.write(`\r${line.padEnd(width)}`);
    width = line.length;
  };
  return {
    /** Shows `line` in place of the one before. */
    show,
    /**
     * Shows `line` with the seconds `work` has taken so far, again each second
     * until it settles: one statement that runs for minutes (refreshing a year of
     * aggregates) is seen to be running.
     */
    async during<T>(line: string, work: Promise<T>): Promise<T> {
      const started = performance.now();
      const tick = () => show(`${line}: ${Math.round((performance.now() - started) / 1000)} s`);
      tick();
      const timer = setInterval(tick, 1000);
      try {
        return await work;
      } finally {
        clearInterval(timer);
      }
    },
    /** Clears the line, so that what is printed next starts at the line's start. */
    clear(): void {
      if (!stream.isTTY || width === 0) return;
      stream.write(`\r${" ".repeat(width)}\r`);
      width = 0;
    },
  };
}
