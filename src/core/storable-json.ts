import { type FieldError, invalid } from "./problem.ts";

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
  // The path is kept as segments and joined only when something is reported.
  const segments: (string | number)[] = [];
  const report = (message: string) => errors.push({ path: pointer(segments), message });
  const visit = (node: unknown, depth: number): void => {
    if (errors.length >= maxReported) return;
    if (typeof node === "string") {
      const reason = unsafeStringReason(node);
      if (reason) report(reason);
    } else if (typeof node === "number") {
      if (!Number.isFinite(node)) report("number is too large");
    } else if (node !== null && typeof node === "object") {
      if (depth >= maxDepth) {
        report(`nesting deeper than ${maxDepth} levels`);
        return;
      }
      // Plain loops: a request body is walked whole, and entry arrays would double its garbage.
      if (Array.isArray(node)) {
        for (let index = 0; index < node.length; index++) {
          segments.push(index);
          visit(node[index], depth + 1);
          segments.pop();
        }
        return;
      }
      for (const key in node) {
        segments.push(key);
        const keyReason = unsafeStringReason(key);
        if (keyReason) report(`property name ${keyReason}`);
        visit((node as Record<string, unknown>)[key], depth + 1);
        segments.pop();
      }
    }
  };
  visit(value, 0);
  return errors;
}

/**
 * Text made storable: NUL characters and lone surrogates become U+FFFD. For text
 * the service writes about what it was sent (a refusal's detail, a manifest's
 * problem), which may quote either.
 */
export const storableText = (text: string) => text.toWellFormed().replaceAll("\u0000", "\uFFFD");

function unsafeStringReason(text: string): string | undefined {
  if (text.includes("\u0000")) return "contains a NUL character";
  if (!text.isWellFormed()) return "contains an unpaired UTF-16 surrogate";
  return undefined;
}

/** A JSON Pointer (RFC 6901) from path segments; "/" for the whole document. */
/**
 * Where `value` first nests an object or array deeper than `maxDepth` levels, as a
 * JSON pointer; undefined when it does not. The walk goes no deeper than that, so
 * a document nested thousands deep costs it no more than a shallow one.
 */
export function overNestedPath(value: unknown, maxDepth: number): string | undefined {
  const segments: string[] = [];
  const visit = (node: unknown, depth: number): boolean => {
    if (node === null || typeof node !== "object") return false;
    if (depth >= maxDepth) return true;
    for (const key in node) {
      segments.push(key);
      if (visit((node as Record<string, unknown>)[key], depth + 1)) return true;
      segments.pop();
    }
    return false;
  };
  return visit(value, 0) ? pointer(segments) : undefined;
}

function pointer(segments: readonly (string | number)[]): string {
  if (segments.length === 0) return "/";
  return segments.map((segment) => `/${escapePointer(String(segment))}`).join("");
}

/** JSON Pointer escaping of one path segment. */
export function escapePointer(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** Refuses a body holding any value PostgreSQL cannot store (400 listing each one). */
export function assertStorableJson(body: unknown, maxDepth: number): void {
  const errors = unsafeJsonValues(body, maxDepth);
  if (errors.length > 0) {
    throw invalid(
      `the request body holds values that cannot be stored: ${errors.map((e) => e.path).join(", ")}`,
      errors,
    );
  }
}
