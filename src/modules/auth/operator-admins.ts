import { normalizeEmail } from "../../core/email.ts";

/** The configured allowlist of operator admin e-mail addresses, normalised. */
export function operatorAdminEmails(configured: string): ReadonlySet<string> {
  return new Set(
    configured
      .split(",")
      .map(normalizeEmail)
      .filter((email) => email !== ""),
  );
}
