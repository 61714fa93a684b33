import packageJson from "../package.json" with { type: "json" };

const assignment = /^([A-Z_][A-Z0-9_]*)=(\S*)$/;

/**
 * The `NAME=value` assignments that lead package.json's start script
 * (`NAME=value … bun src/main.ts`): what `bun run start` sets for the service
 * over its caller's environment, the allocator's settings among them (README,
 * "Memory and the allocator"). The benches that start the service themselves set
 * them last, as the script does, so that they measure it as it is run; the
 * Dockerfile sets the same (test/foundation/start-script.test.ts). A value the
 * shell would rewrite (quotes, `$`) is refused rather than read wrongly.
 */
export function startScriptEnv(script: string = packageJson.scripts.start): Record<string, string> {
  const env: Record<string, string> = {};
  for (const word of script.trim().split(/\s+/)) {
    const [, name, value] = assignment.exec(word) ?? [];
    if (name === undefined || value === undefined) break;
    if (/["'$`\\]/.test(value)) throw new Error(`start script: ${word} is not a plain NAME=value`);
    env[name] = value;
  }
  return env;
}
