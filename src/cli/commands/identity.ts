import { normalizeDomain } from "../../core/hosts.ts";
import { isOrgType, orgTypes } from "../../core/organizations.ts";
import { lockDomainFamilies, registerDomain, registerDomainAs, verifyDomainAs } from "../../modules/domains/service.ts";
import { type ApiKeyRecord, createApiKeyAs, listApiKeys, revokeApiKeyAs } from "../../modules/keys/service.ts";
import { createOrganization, recordOrganizationCreated, setSuspended } from "../../modules/organizations/service.ts";
import { BadInputError, defineCommand, listOption, requireString, requireUuid, UsageError } from "../command.ts";
import { applyMigrations, asBadInput, operatorCli, requireOrganization } from "../operator.ts";

const describeKey = (key: ApiKeyRecord) =>
  `${key.id}  ${key.prefix}…  scopes=[${key.scopes.join(",")}]  created=${key.created_at.toISOString()}  last_used=${key.last_used_at?.toISOString() ?? "never"}${key.revoked_at ? `  revoked=${key.revoked_at.toISOString()}` : ""}`;

// As over HTTP: a domain decides which events an owner sees, so only owners hold one.
const domainsAreForOwners = "only content-owner organisations hold domains";

export const identityCommands = [
  defineCommand({
    words: ["migrate"],
    summary: "apply pending sql/ migrations",
    options: {},
    migrates: true,
    run: async (sql) => ({ applied: await applyMigrations(sql) }),
    // Their progress was shown on stderr (into a pipe, a line at most every 10 s); --json names them.
    describe: (r) =>
      r.applied.length ? `applied ${r.applied.length} migrations: schema is up to date` : "schema is up to date",
  }),
  defineCommand({
    words: ["org", "create"],
    summary: "create an organisation",
    options: {
      name: { type: "string", required: true, description: "display name" },
      type: { type: "string", required: true, description: orgTypes.join(" | ") },
      domain: { type: "string", description: "register this domain (unverified) on it" },
    },
    async run(sql, o) {
      const name = requireString(o, "name");
      const type = requireString(o, "type");
      if (!isOrgType(type)) throw new UsageError(`--type must be one of ${orgTypes.join(", ")}`);
      if (name.length > 200) throw new UsageError("--name must be at most 200 characters");
      if (o.domain !== undefined && type !== "content_owner") throw new BadInputError(domainsAreForOwners);
      return asBadInput(() =>
        sql.begin(async (tx) => {
          const org = await createOrganization(tx, { name, orgType: type });
          // As at self-serve sign-up: one entry, organization.created, naming the domain registered with it.
          const domain = typeof o.domain === "string" ? await registerDomain(tx, org.id, o.domain) : null;
          await recordOrganizationCreated(tx, org, domain?.domain ?? null, operatorCli);
          return { ...org, domain: domain?.domain ?? null };
        }),
      );
    },
    describe: (r) =>
      `organisation ${r.id} (${r.org_type}) "${r.name}"${r.domain ? `, domain ${r.domain} registered` : ""}`,
  }),
  ...(["suspend", "resume"] as const).map((word) =>
    defineCommand({
      words: ["org", word],
      summary:
        word === "suspend"
          ? "suspend an organisation: its keys and members' sessions are refused for it, in every running instance at once"
          : "resume a suspended organisation",
      options: { id: { type: "string", required: true, description: "organisation id" } },
      async run(sql, o) {
        const id = requireUuid(o, "id");
        const org = await sql.begin((tx) => setSuspended(tx, id, word === "suspend", operatorCli));
        if (!org) throw new BadInputError(`organisation ${id} does not exist`);
        return org;
      },
      describe: (r) =>
        `organisation ${r.id} "${r.name}": ${r.suspended_at ? `suspended since ${r.suspended_at.toISOString()}` : "active"}`,
    }),
  ),
  defineCommand({
    words: ["domain", "add"],
    summary: "register a domain on an organisation",
    options: {
      org: { type: "string", required: true, description: "organisation id" },
      domain: { type: "string", required: true, description: "host name" },
      verified: { type: "boolean", description: "also mark it verified (operator attestation)" },
    },
    async run(sql, o) {
      const org = await requireOrganization(sql, o, "org");
      const input = requireString(o, "domain");
      if (org.org_type !== "content_owner") throw new BadInputError(domainsAreForOwners);
      return asBadInput(() =>
        sql.begin(async (tx) => {
          // The family before the row the registration locks, as every verification takes them.
          if (o.verified) await lockDomainFamilies(tx, [normalizeDomain(input)]);
          const domain = await registerDomainAs(tx, org.id, input, operatorCli);
          if (!o.verified) return domain;
          return (await verifyDomainAs(tx, org.id, domain.domain, "operator", operatorCli)) ?? domain;
        }),
      );
    },
    describe: (r) => `domain ${r.domain} on ${r.org_id}: ${r.state}`,
  }),
  defineCommand({
    words: ["domain", "verify"],
    summary: "mark a registered domain verified (operator attestation)",
    options: {
      org: { type: "string", required: true, description: "organisation id" },
      domain: { type: "string", required: true, description: "host name" },
    },
    async run(sql, o) {
      const { id: orgId } = await requireOrganization(sql, o, "org");
      const input = requireString(o, "domain");
      const domain = await asBadInput(() =>
        sql.begin((tx) => verifyDomainAs(tx, orgId, input, "operator", operatorCli)),
      );
      if (!domain) throw new BadInputError(`${input} is not registered on organisation ${orgId}; run domain add first`);
      return domain;
    },
    describe: (r) => `domain ${r.domain} on ${r.org_id}: ${r.state}`,
  }),
  defineCommand({
    words: ["key", "create"],
    summary: "mint an API key (the raw key is printed once)",
    options: {
      org: { type: "string", required: true, description: "organisation id" },
      scopes: {
        type: "string",
        description: "comma-separated scopes (default: telemetry:read,telemetry:write,identity:read)",
      },
      "no-scopes": { type: "boolean", description: "a key with no permissions at all" },
      name: { type: "string", description: "label" },
    },
    async run(sql, o) {
      const orgId = requireUuid(o, "org");
      if (o.scopes !== undefined && o["no-scopes"]) throw new UsageError("--scopes and --no-scopes exclude each other");
      const listed = listOption(o, "scopes", "a key with no scopes is minted with --no-scopes");
      const scopes = o["no-scopes"] ? [] : (listed ?? null);
      const name = typeof o.name === "string" ? o.name : null;
      const { key, record } = await asBadInput(() =>
        sql.begin((tx) => createApiKeyAs(tx, { orgId, scopes, name }, operatorCli)),
      );
      return { key, ...record };
    },
    describe: (r) => `${r.key}\n(shown once; store it now)\n${describeKey(r)}`,
  }),
  defineCommand({
    words: ["key", "list"],
    summary: "list an organisation's keys (never the secrets)",
    options: { org: { type: "string", required: true, description: "organisation id" } },
    run: async (sql, o) => listApiKeys(sql, (await requireOrganization(sql, o, "org")).id),
    describe: (keys) => (keys.length ? keys.map(describeKey).join("\n") : "no keys"),
  }),
  defineCommand({
    words: ["key", "revoke"],
    summary: "revoke a key (every running instance drops it at once; KEY_CACHE_TTL_SECONDS is only the safety net)",
    options: { id: { type: "string", required: true, description: "key id" } },
    async run(sql, o) {
      const id = requireUuid(o, "id");
      const key = await sql.begin((tx) => revokeApiKeyAs(tx, id, operatorCli));
      if (!key) throw new BadInputError(`no key with id ${id}`);
      return key;
    },
    describe: describeKey,
  }),
];
