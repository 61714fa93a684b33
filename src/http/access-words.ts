import type { Access } from "./access-declarations.ts";

const orgTypes = (types: readonly string[] | null) => (types ? ` of a ${types.join(" or ")} organisation` : "");

const orgNeeds = {
  read: "a member's session, or an API key of the organisation with `identity:read`",
  write: "an owner's or admin's session, or an API key of the organisation with `identity:write`",
  manage: "an owner's or admin's session",
} as const;

/** Who may call a route, in words (Markdown): for the API docs and docs/auth.md. */
export function describeAccess(access: Access): string {
  switch (access.kind) {
    case "public":
      return access.limitedBy === "address" ? "anyone (limited per client address)" : "anyone";
    case "key":
      return `an API key${access.scope ? ` with \`${access.scope}\`` : ""}${orgTypes(access.orgTypes)}${
        access.memberSessions ? ", or a member's session of the organisation (named by `org_id`)" : ""
      }`;
    case "session":
      return access.operatorAdmin ? "an operator admin's session" : "a signed-in user's session";
    case "org": {
      const who =
        access.sessionOnly && access.need !== "manage"
          ? orgNeeds[access.need].replace(/, or an API key.*$/, "")
          : orgNeeds[access.need];
      return `${who}${orgTypes(access.orgTypes)}`;
    }
    case "partner":
      return "a trusted partner's API key with `partner:provision`";
  }
}
