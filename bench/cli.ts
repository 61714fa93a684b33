/**
 * How a bench takes its options and says it failed, as the operator CLI does: in
 * one line on stderr, bad input with exit code 2, a failure with 1.
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

/** A failure (the database unreachable, the service not starting) as its message alone, not a stack trace. */
export function failInOneLine(): void {
  const fail = (error: unknown) => {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  };
  process.on("uncaughtException", fail);
  process.on("unhandledRejection", fail);
}
