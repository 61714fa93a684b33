/** Where progress goes: stderr, or a stand-in with its own isTTY. */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

/**
 * A bench's progress while it works, on stderr so that stdout holds the report
 * alone. On a terminal, one line redrawn in place; to a file or a pipe, nothing:
 * there, redrawn lines pile up as one long line of carriage returns.
 */
export function progressLine(stream: ProgressStream = process.stderr) {
  let width = 0;
  const show = (line: string): void => {
    if (!stream.isTTY) return;
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
