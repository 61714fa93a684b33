/**
 * How a bench takes its options and says it failed, as the operator CLI does: in
 * one line on stderr, bad input with exit code 2, a failure with 1; and how it
 * leaves nothing behind, however it ends.
 */

/** Bad input: said in one line, exit code 2. */
export function refuseOption(message: string): never {
  console.error(`error: ${message}`);
  process.exit(2);
}

const wholeNumber = /^\d+$/;
const decimal = /^\d+(\.\d+)?$/;

/**
 * The option `--name` as a whole number of at least `min` (a fraction where
 * `fraction` says so, as `--hanging 0.1`), written in decimal digits. Anything
 * else is refused: taken as it was (NaN), `--events abc` loaded nothing and timed
 * the empty set; `--events 1.5` or `0x10` are no counts.
 */
export function numberOption(
  values: Record<string, unknown>,
  name: string,
  min: number,
  max = Infinity,
  fraction = false,
): number {
  const text = String(values[name]);
  const value = Number(text);
  if (!(fraction ? decimal : wholeNumber).test(text) || value < min || value > max) {
    const range = max === Infinity ? `at least ${min}` : `from ${min} to ${max}`;
    refuseOption(
      `--${name} must be ${fraction ? "a number" : "a whole number"} ${range}, not ${JSON.stringify(values[name])}`,
    );
  }
  return value;
}

const children: Bun.Subprocess[] = [];
const undos: (() => Promise<unknown>)[] = [];
let finishing: Promise<never> | undefined;

/**
 * Ends the bench with `code`, once, whoever asks first: the processes it started
 * are stopped (SIGTERM, then awaited) and what it made is undone, the last first.
 */
export function finish(code: number): Promise<never> {
  finishing ??= (async () => {
    for (const child of children) child.kill("SIGTERM");
    await Promise.all(children.map((child) => child.exited));
    for (const undo of undos.reverse()) await undo().catch(() => {});
    process.exit(code);
  })();
  return finishing;
}

/**
 * The signals that end a bench from outside, with the exit code a shell gives a
 * process they end (128 + the signal's number; Ctrl-C's 130 is bench:reads' too):
 * Ctrl-C, `kill` or `timeout`, a closed terminal.
 */
const endingSignals = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * A signal of `endingSignals` ends the bench through `finish` once it has anything
 * to stop or undo; until then, and in a bench that registers none, the signal
 * keeps its own effect.
 */
function finishOnInterrupt(): void {
  if (children.length + undos.length > 0) return;
  for (const [signal, code] of Object.entries(endingSignals)) {
    process.on(signal, () => {
      if (!finishing) console.error(`interrupted (${signal}): stopping what the bench started`);
      void finish(code);
    });
  }
}

/** A process the bench started (the service, a receiver), stopped however the bench ends. */
export function stopOnExit(child: Bun.Subprocess): void {
  finishOnInterrupt();
  children.push(child);
}

/** Undoes what the bench made (a temporary DATA_DIR, a scratch database, a client), however it ends. */
export function undoOnExit(undo: () => Promise<unknown>): void {
  finishOnInterrupt();
  undos.push(undo);
}

/**
 * A failure (the database unreachable, the service not starting) as its message
 * alone, not a stack trace, exit code 1; what the bench started or made is not
 * left behind (`finish`).
 */
export function failInOneLine(): void {
  const fail = (error: unknown) => {
    if (!finishing) console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    void finish(1);
  };
  process.on("uncaughtException", fail);
  process.on("unhandledRejection", fail);
}
