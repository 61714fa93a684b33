import { parseArgs } from "node:util";
import { type Command, type OptionValues, UsageError } from "./command.ts";

/** A word parseArgs would take for a one-letter option: one dash, then anything but a dash (`-1`). */
const dashedValue = /^-(?!-)/;

/**
 * The command's options, from the words after its name. A string option takes
 * the next word as its value even when it starts with one dash (`--limit -1`):
 * no option here is one letter, so it can be nothing else, and parseArgs would
 * refuse it as "ambiguous" where the command says what is wrong with the value.
 */
export function parseOptions(command: Command, words: string[]): OptionValues {
  const args: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    const next = words[i + 1];
    const takesValue = word.startsWith("--") && command.options[word.slice(2)]?.type === "string";
    // parseArgs would call `--limit --to x` "ambiguous" and suggest `--limit=-XYZ`.
    if (takesValue && (next === undefined || next.startsWith("--"))) throw new UsageError(`${word} needs a value`);
    if (takesValue && dashedValue.test(next as string)) {
      args.push(`${word}=${next}`);
      i++;
    } else {
      args.push(word);
    }
  }
  let values: OptionValues;
  try {
    values = parseArgs({
      args,
      options: Object.fromEntries(Object.entries(command.options).map(([name, spec]) => [name, { type: spec.type }])),
      strict: true,
      allowPositionals: false,
    }).values as OptionValues;
  } catch (error) {
    // An unknown option, a missing value, a stray word: parseArgs' own words say which.
    if (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS")) {
      throw new UsageError(error.message);
    }
    throw error;
  }
  for (const [name, spec] of Object.entries(command.options)) {
    if (spec.required && values[name] === undefined) throw new UsageError(`--${name} is required`);
  }
  return values;
}
