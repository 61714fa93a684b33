import { resolve } from "node:path";
import { ConfigError, loadConfig } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { wouldCreateDatabase } from "../db/data-dir-lock.ts";
import { BadInputError, type Command, UsageError } from "./command.ts";
import { delegationCommands } from "./commands/delegations.ts";
import { identityCommands } from "./commands/identity.ts";
import { mailCommands } from "./commands/mail.ts";
import { memberCommands } from "./commands/members.ts";
import { applyMigrations, cliLog, progress } from "./operator.ts";
import { parseOptions } from "./options.ts";

const commands: Command[] = [...identityCommands, ...memberCommands, ...delegationCommands, ...mailCommands];

/** The commands whose words begin with these: `org` names the organisation's. */
function commandsUnder(words: string[]): Command[] {
  return commands.filter((c) => words.every((word, i) => c.words[i] === word));
}

/** The commands under the longest run of leading words that names any: `org frobnicate` → the organisation's. */
function nearestCommands(args: string[]): Command[] {
  for (let n = args.length; n > 0; n--) {
    const under = commandsUnder(args.slice(0, n));
    if (under.length > 0) return under;
  }
  return commands;
}

/** Words that begin commands without naming one: `org`, or none at all. */
function isGroup(args: string[]): boolean {
  const under = commandsUnder(args);
  return under.length > 0 && under.every((c) => c.words.length > args.length);
}

function usage(shown: Command[]): string {
  const lines = shown.map((c) => {
    const opts = Object.entries(c.options)
      .map(([name, spec]) => {
        const flag = spec.type === "string" ? `--${name} <${name}>` : `--${name}`;
        return spec.required ? flag : `[${flag}]`;
      })
      .join(" ");
    return `  ${c.words.join(" ")} ${opts}\n      ${c.summary}`;
  });
  return `usage: bun run cli <command> [options] [--json]\n\ncommands:\n${lines.join("\n")}`;
}

function findCommand(argv: string[]): { command: Command; rest: string[] } {
  const command = commands
    .filter((c) => c.words.every((word, i) => argv[i] === word))
    .sort((a, b) => b.words.length - a.words.length)[0];
  if (!command) throw new UsageError(argv.length ? `unknown command: ${argv.join(" ")}` : "no command given");
  return { command, rest: argv.slice(command.words.length) };
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes("--json");
  const args = argv.filter((a) => a !== "--json");
  // Help, or a group's words alone (`org`, or none at all): the commands they name.
  const asked = (args[0] === "help" ? args.slice(1) : args).filter((a) => a !== "--help");
  if (asked.length < args.length || isGroup(args)) {
    console.log(usage(nearestCommands(asked)));
    return 0;
  }
  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  try {
    const { command, rest } = findCommand(args);
    const parsed = parseOptions(command, rest);
    const config = loadConfig();
    const creating = !config.DATABASE_URL && wouldCreateDatabase(config.DATA_DIR);
    if (creating) {
      // Most often a CLI pointed somewhere other than the service's database.
      console.error(
        `warning: no database in ${resolve(config.DATA_DIR)} yet: creating a new, empty one. If the service uses another, set DATA_DIR (or DATABASE_URL) to it.`,
      );
      // Seconds (over ten on a busy machine) in which the engine's initdb holds the
      // event loop: a line that cannot count them, only say what is going on.
      progress.show("creating the embedded database");
    }
    db = await openDatabase(config, cliLog, { shareRunning: true });
    if (!command.migrates) await applyMigrations(db.sql);
    const result = await command.run(db.sql, parsed);
    console.log(json ? JSON.stringify(result, null, 2) : command.describe(result));
    return 0;
  } catch (error) {
    progress.clear();
    const message = error instanceof Error ? error.message : String(error);
    if (json) console.log(JSON.stringify({ error: message }));
    console.error(`error: ${message}`);
    // The usage helps with how a command is called, not with what it was given.
    if (error instanceof UsageError) console.error(`\n${usage(nearestCommands(args))}`);
    return error instanceof BadInputError || error instanceof ConfigError ? 2 : 1;
  } finally {
    await db?.close();
  }
}

process.exit(await main(process.argv.slice(2)));
