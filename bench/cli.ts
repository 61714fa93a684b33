/**
 * How a bench takes its options and says it failed, as the operator CLI does: in
 * one line on stderr, bad input with exit code 2, a failure with 1.
 */

/**
 * The option `--name` as a number of at least `min`. Anything else is refused:
 * taken as it was (NaN), `--events abc` loaded nothing and timed the empty set.
 */
export function numberOption(values: Record<string, unknown>, name: string, min: number, max = Infinity): number {
  const value = Number(values[name]);
  if (values[name] === "" || !Number.isFinite(value) || value < min || value > max) {
    const range = max === Infinity ? `at least ${min}` : `from ${min} to ${max}`;
    console.error(`error: --${name} must be a number ${range}, not ${JSON.stringify(values[name])}`);
    process.exit(2);
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
