import type { FieldError } from "../../http/problem.ts";

const maxReported = 50;

/**
 * Finds values PostgreSQL cannot store or that JSON cannot carry faithfully:
 * strings with NUL characters or lone UTF-16 surrogates (text and jsonb refuse
 * them), numbers that overflowed to Infinity, and nesting deeper than `maxDepth`
 * (jsonb parsing recurses). Checked once over a whole request body, before any
 * other rule, so none of them can ever reach the database as a 500.
 */
export function unsafeJsonValues(value: unknown, maxDepth: number): FieldError[] {
  const errors: FieldError[] = [];
  const visit = (node: unknown, path: string, depth: number): void => {
    if (errors.length >= maxReported) return;
    if (typeof node === "string") {
      const reason = unsafeStringReason(node);
      if (reason) errors.push({ path: path || "/", message: reason });
    } else if (typeof node === "number") {
      if (!Number.isFinite(node)) errors.push({ path: path || "/", message: "number is too large" });
    } else if (node !== null && typeof node === "object") {
      if (depth >= maxDepth) {
        errors.push({ path: path || "/", message: `nesting deeper than ${maxDepth} levels` });
        return;
      }
      if (Array.isArray(node)) {
        for (const [index, item] of node.entries()) visit(item, `${path}/${index}`, depth + 1);
      } else {
        for (const [key, item] of Object.entries(node)) {
          const keyReason = unsafeStringReason(key);
          if (keyReason) errors.push({ path: `${path}/${escapePointer(key)}`, message: `property name ${keyReason}` });
          visit(item, `${path}/${escapePointer(key)}`, depth + 1);
        }
      }
    }
  };
  visit(value, "", 0);
  return errors;
}

function unsafeStringReason(text: string): string | undefined {
  if (text.includes("\u0000")) return "contains a NUL character";
  if (!text.isWellFormed()) return "contains an unpaired UTF-16 surrogate";
  return undefined;
}

/** JSON Pointer escaping (RFC 6901) of one path segment. */
export function escapePointer(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}
