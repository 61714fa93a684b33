import packageJson from "../package.json" with { type: "json" };

const assignment = /^([A-Z_][A-Z0-9_]*)=(\S*)$/;

/**
 * The `NAME=value` assignments that lead package.json's start script
 * (`NAME=value … bun src/main.ts`): what `bun run start` sets for the service
 * beyond its caller's environment, the allocator's settings among them (README,
 * "Memory and the allocator"). The benches that start the service themselves add
 * them, so that they measure it as it is run; the Dockerfile sets the same
 * (test/foundation/start-script.test.ts).
 */
export function startScriptEnv(script: string = packageJson.scripts.start): Record<string, string> {
  const env: Record<string, string> = {};
  for (const word of script.trim().split(/\s+/)) {
    const [, name, value] = assignment.exec(word) ?? [];
    if (name === undefined) break;
    env[name] = value ?? "";
  }
  return env;
}
