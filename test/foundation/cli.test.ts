import { describe, expect, test } from "bun:test";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { cli, runCli } from "../support/cli.ts";
import { callIdentity, signIn } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";
import { tempDir } from "../support/temp-dirs.ts";

const jsonOf = (out: { stdout: string }) => JSON.parse(out.stdout);

describe("operator CLI", () => {
  test("round trip: org, domain, verification, keys, revocation", async () => {
    const domain = `cli-${crypto.randomUUID().slice(0, 8)}.example.net`;
    const created = await cli(
      "org",
      "create",
      "--name",
      "CLI Owner",
      "--type",
      "content_owner",
      "--domain",
      domain,
      "--json",
    );
    expect(created.exitCode).toBe(0);
    const org = jsonOf(created);
    expect(org).toMatchObject({ name: "CLI Owner", org_type: "content_owner", domain });

    const verified = jsonOf(await cli("domain", "verify", "--org", org.id, "--domain", domain.toUpperCase(), "--json"));
    expect(verified).toMatchObject({ domain, state: "verified", verification_method: "operator" });

    const key = jsonOf(await cli("key", "create", "--org", org.id, "--scopes", "telemetry:read", "--json"));
    expect(key.key).toStartWith("svc_pub_");
    expect(key.scopes).toEqual(["telemetry:read"]);
    const bare = jsonOf(await cli("key", "create", "--org", org.id, "--no-scopes", "--json"));
    expect(bare.scopes).toEqual([]);
    // No scopes is asked for by name: an empty list (an unset variable, say) mints nothing.
    const empty = await cli("key", "create", "--org", org.id, "--scopes", "");
    expect([empty.exitCode, empty.stderr]).toEqual([
      2,
      expect.stringContaining("--scopes lists nothing: a key with no scopes is minted with --no-scopes"),
    ]);

    const { ctx } = await testRuntime();
    expect((await ctx.keys.authenticate(key.key)).verifiedDomains).toEqual([domain]);

    const revoked = jsonOf(await cli("key", "revoke", "--id", key.id, "--json"));
    expect(revoked.revoked_at).not.toBeNull();
    const listed = jsonOf(await cli("key", "list", "--org", org.id, "--json"));
    expect(listed.map((k: { id: string }) => k.id).sort()).toEqual([key.id, bare.id].sort());
    expect(JSON.stringify(listed)).not.toContain(key.key);
    expect(listed.find((k: { id: string }) => k.id === key.id).revoked_at).not.toBeNull();

    const human = await cli("key", "list", "--org", org.id);
    expect(human.stdout).toContain(key.prefix);
  }, 30_000);

  test("domain add --verified and a second verified claim", async () => {
    const domain = `cli-${crypto.randomUUID().slice(0, 8)}.example.net`;
    const first = jsonOf(await cli("org", "create", "--name", "A", "--type", "content_owner", "--json"));
    const second = jsonOf(await cli("org", "create", "--name", "B", "--type", "content_owner", "--json"));
    expect(
      jsonOf(await cli("domain", "add", "--org", first.id, "--domain", domain, "--verified", "--json")).state,
    ).toBe("verified");
    await cli("domain", "add", "--org", second.id, "--domain", domain);
    const clash = await cli("domain", "verify", "--org", second.id, "--domain", domain);
    expect(clash.exitCode).toBe(1);
    expect(clash.stderr).toContain("already verified by another organisation");
  }, 30_000);

  test.each([
    [["org", "create", "--name", "X", "--type", "bogus"], "--type must be one of"],
    [["org", "create", "--type", "platform"], "--name is required"],
    [["key", "list", "--org", "not-a-uuid"], "--org must be a UUID"],
    [["key", "create", "--org", crypto.randomUUID(), "--scopes", "telemetry:read,root"], "unknown scope: root"],
    [["key", "revoke", "--id", crypto.randomUUID()], "no key with id"],
    [["domain", "add", "--org", crypto.randomUUID(), "--domain", "news.example.org"], "does not exist"],
    [["domain", "verify", "--org", crypto.randomUUID(), "--domain", "news.example.org"], "does not exist"],
    [["key", "create", "--org", crypto.randomUUID()], "does not exist"],
    [["key", "list", "--org", crypto.randomUUID()], "does not exist"],
    [["org", "create", "--name", "P", "--type", "platform", "--domain", "p.example.org"], "only content-owner"],
    [["mail", "list", "--limit", "-1"], "--limit must be 1–1000"],
    [["mail", "list", "--limit", "--to", "a@b.example"], "--limit needs a value"],
    [["member", "add", "--org", crypto.randomUUID(), "--email", "nobody"], "--email must be an e-mail address"],
    [["member", "add", "--org", crypto.randomUUID(), "--email", "a@b.example", "--role", "boss"], "--role must be one"],
    [["member", "add", "--org", crypto.randomUUID(), "--email", "a@b.example"], "does not exist"],
    [
      ["delegation", "grant", "--grantor", crypto.randomUUID(), "--grantee", crypto.randomUUID(), "--scopes", " , "],
      "--scopes lists nothing",
    ],
    [["frobnicate"], "unknown command"],
    [["key", "list", "--org", crypto.randomUUID(), "--colour"], "Unknown option"],
  ])("bad input %p fails with a clear message and exit code 2", async (args, message) => {
    const out = await cli(...(args as string[]));
    expect(out.exitCode).toBe(2);
    expect(out.stderr).toContain(message as string);
  });

  test("a domain on a platform organisation, or an IP as a domain, is refused with exit code 2", async () => {
    const platform = jsonOf(await cli("org", "create", "--name", "P", "--type", "platform", "--json"));
    const onPlatform = await cli("domain", "add", "--org", platform.id, "--domain", "p.example.org");
    expect(onPlatform.exitCode).toBe(2);
    expect(onPlatform.stderr).toContain("only content-owner organisations hold domains");
    const owner = jsonOf(await cli("org", "create", "--name", "O", "--type", "content_owner", "--json"));
    const ip = await cli("domain", "add", "--org", owner.id, "--domain", "127.0.0.1");
    expect(ip.exitCode).toBe(2);
    expect(ip.stderr).toContain("IP addresses");
  });

  test("a group's word alone lists its commands; an unknown one in it is shown them", async () => {
    const group = await runCli({ env: {} }, "org");
    expect(group.exitCode).toBe(0);
    expect(group.stdout).toContain("org create --name <name> --type <type>");
    expect(group.stdout).toContain("org suspend --id <id>");
    expect(group.stdout).not.toContain("key create");
    const unknown = await runCli({ env: {} }, "org", "frobnicate");
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("unknown command: org frobnicate");
    expect(unknown.stderr).toContain("org resume --id <id>");
    expect(unknown.stderr).not.toContain("key create");
  });

  test("a usage error shows how to call the command; a refusal of what it names, the message alone", async () => {
    const misused = await cli("key", "list", "--org", "not-a-uuid");
    expect(misused.exitCode).toBe(2);
    expect(misused.stderr).toBe(
      "error: --org must be a UUID\n\nusage: bun run cli <command> [options] [--json]\n\ncommands:\n" +
        "  key list --org <org>\n      list an organisation's keys (never the secrets)\n",
    );
    const refused = await cli("org", "create", "--name", "P", "--type", "platform", "--domain", "p.example.org");
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toBe("error: only content-owner organisations hold domains\n");
  });

  test("a grant from an agent is refused in words that read right", async () => {
    const agent = jsonOf(await cli("org", "create", "--name", "Ag", "--type", "agent", "--json"));
    const owner = jsonOf(await cli("org", "create", "--name", "Ow", "--type", "content_owner", "--json"));
    const swapped = await cli("delegation", "grant", "--grantor", agent.id, "--grantee", owner.id);
    expect(swapped.exitCode).toBe(2);
    expect(swapped.stderr).toContain(`the grantor must be a content owner (${agent.id} is an agent organisation)`);
  }, 30_000);

  test("member add: a user, new or not, joins an organisation the CLI made, audited; again, nothing changes", async () => {
    const org = jsonOf(await cli("org", "create", "--name", "Staffed", "--type", "content_owner", "--json"));
    const email = `Owner-${crypto.randomUUID().slice(0, 8)}@People.test`;
    const added = jsonOf(await cli("member", "add", "--org", org.id, "--email", email, "--role", "owner", "--json"));
    expect(added).toMatchObject({ org_id: org.id, email: email.toLowerCase(), role: "owner", previous_role: null });
    // Created as a first sign-in creates it: signing in is that user, who can open the organisation.
    const owner = await signIn(email);
    expect(owner.userId).toBe(added.user_id);
    const theirs = await callIdentity("GET", "/api/v1/identity/organizations", { session: owner.session });
    expect(theirs.body.items).toEqual([expect.objectContaining({ id: org.id, role: "owner" })]);
    // The default role, member, keeps the higher one held, as a claimed invitation does.
    const again = await cli("member", "add", "--org", org.id, "--email", email, "--json");
    expect([again.exitCode, jsonOf(again).role, jsonOf(again).previous_role]).toEqual([0, "owner", "owner"]);
    const colleague = await signIn();
    await cli("member", "add", "--org", org.id, "--email", colleague.email);
    const raised = await cli("member", "add", "--org", org.id, "--email", colleague.email, "--role", "admin");
    expect(raised.stdout).toContain(
      `${colleague.email} (user ${colleague.userId}) is now admin of organisation ${org.id}, was member`,
    );
    const { ctx } = await testRuntime();
    const trail = await ctx.sql<{ action: string; target_id: string; details: object; actor_label: string }[]>`
      SELECT action, target_id, details, actor_label FROM audit_events
      WHERE org_id = ${org.id}::uuid AND action LIKE 'member.%' ORDER BY occurred_at, action`;
    expect([...trail]).toEqual([
      {
        action: "member.added",
        target_id: owner.userId,
        details: { email: owner.email, role: "owner" },
        actor_label: "operator CLI",
      },
      {
        action: "member.added",
        target_id: colleague.userId,
        details: { email: colleague.email, role: "member" },
        actor_label: "operator CLI",
      },
      {
        action: "member.role_changed",
        target_id: colleague.userId,
        details: { email: colleague.email, from: "member", to: "admin" },
        actor_label: "operator CLI",
      },
    ]);
  }, 60_000);

  test("doing again what is done exits 0; a grant the pair already has is a conflict, exit 1", async () => {
    const owner = jsonOf(await cli("org", "create", "--name", "Twice", "--type", "content_owner", "--json"));
    const agent = jsonOf(await cli("org", "create", "--name", "Twice", "--type", "agent", "--json"));
    const pair = ["--grantor", owner.id, "--grantee", agent.id];
    const granted = jsonOf(await cli("delegation", "grant", ...pair, "--json"));
    const again = await cli("delegation", "grant", ...pair);
    expect([again.exitCode, again.stderr]).toEqual([1, expect.stringContaining("already has an active delegation")]);
    const key = jsonOf(await cli("key", "create", "--org", owner.id, "--json"));
    for (const [noun, id] of [
      ["delegation", granted.id],
      ["key", key.id],
    ]) {
      const first = await cli(noun, "revoke", "--id", id, "--json");
      const second = await cli(noun, "revoke", "--id", id, "--json");
      expect([first.exitCode, second.exitCode]).toEqual([0, 0]);
      // The first revocation's time stands.
      expect(jsonOf(second).revoked_at).toBe(jsonOf(first).revoked_at);
    }
  }, 60_000);

  test("--json errors are machine-readable too", async () => {
    const out = await cli("key", "list", "--org", "nope", "--json");
    expect(out.exitCode).toBe(2);
    expect(jsonOf(out)).toEqual({ error: "--org must be a UUID" });
  });

  test("with --json, stdout is the answer alone: the CLI's own log lines go to stderr", async () => {
    const unreachable = { DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere", DATABASE_CONNECT_WAIT_SECONDS: "1" };
    const out = await runCli({ env: unreachable }, "key", "list", "--org", crypto.randomUUID(), "--json");
    expect(out.exitCode).toBe(1);
    expect(Object.keys(jsonOf(out))).toEqual(["error"]);
    expect(out.stderr).toContain('"msg":"waiting for the database"');
  });

  test("what the operator changes is in the organisation's audit trail, by the operator CLI", async () => {
    const domain = `cli-${crypto.randomUUID().slice(0, 8)}.example.net`;
    const org = jsonOf(await cli("org", "create", "--name", "Audited", "--type", "content_owner", "--json"));
    // Each twice: doing again what is done changes nothing, and records nothing.
    for (let i = 0; i < 2; i++) await cli("domain", "add", "--org", org.id, "--domain", domain);
    for (let i = 0; i < 2; i++) await cli("domain", "verify", "--org", org.id, "--domain", domain);
    const key = jsonOf(await cli("key", "create", "--org", org.id, "--json"));
    await cli("key", "revoke", "--id", key.id);
    const { ctx } = await testRuntime();
    const trail = await ctx.sql<{ action: string; target_id: string; actor_type: string; actor_label: string }[]>`
      SELECT action, target_id, actor_type, actor_label FROM audit_events
      WHERE org_id = ${org.id}::uuid ORDER BY occurred_at, action`;
    expect(trail.map((entry) => [entry.action, entry.target_id])).toEqual([
      ["organization.created", org.id],
      ["domain.registered", domain],
      ["domain.verified", domain],
      ["api_key.created", key.id],
      ["api_key.revoked", key.id],
    ]);
    expect(new Set(trail.map((entry) => `${entry.actor_type}/${entry.actor_label}`))).toEqual(
      new Set(["system/operator CLI"]),
    );
  }, 30_000);
});

describe("the CLI on the embedded engine", () => {
  const embedded = (dataDir: string) => ({ cwd: tmpdir(), env: { DATABASE_URL: "", DATA_DIR: dataDir } });

  test("finds DATA_DIR's default beside the project, not in the working directory", () => {
    expect(loadConfig({}).DATA_DIR).toBe(join(import.meta.dir, "../../data"));
  });

  test("on a new database: warns before creating it and shows its progress on stderr; then neither", async () => {
    const dataDir = join(tempDir("svc-cli-"), "fresh");
    const first = await runCli(embedded(dataDir), "migrate");
    expect(first.exitCode).toBe(0);
    const migrations = (await readdir(join(import.meta.dir, "../../sql"))).filter((name) => name.endsWith(".sql"));
    // The answer alone on stdout: the progress is all on stderr.
    expect(first.stdout).toBe(`applied ${migrations.length} migrations: schema is up to date\n`);
    const [warning, creating, ...applying] = first.stderr.trimEnd().split("\n");
    expect(warning).toStartWith(`warning: no database in ${dataDir} yet: creating a new, empty one.`);
    // Into a pipe, as the benches' (progress.ts): lines of their own, at most one every 10 s, no carriage returns.
    expect(first.stderr).not.toContain("\r");
    expect(creating).toBe("creating the embedded database");
    migrations.sort();
    for (const line of applying) {
      const n = Number(/^applying migration (\d+) of /.exec(line)?.[1]);
      expect(line).toBe(`applying migration ${n} of ${migrations.length}: ${migrations[n - 1]}`);
    }
    const second = await runCli(embedded(dataDir), "org", "create", "--name", "New", "--type", "agent");
    expect([second.exitCode, second.stderr]).toEqual([0, ""]);
  }, 90_000);
});
