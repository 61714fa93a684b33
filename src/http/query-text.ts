import { invalid } from "../core/problem.ts";

/**
 * Refuses an integer query parameter that is not plain decimal digits, or is given
 * more than once, naming each: Elysia would read `0x10`, `1e1` or a blank as a number,
 * and keep the last of several.
 */
export function refuseLooseIntegers(url: string, names: readonly string[]): void {
  const query = url.indexOf("?");
  if (query < 0 || names.length === 0) return;
  const params = new URLSearchParams(url.slice(query + 1));
  const errors = names.flatMap((name) => {
    const values = params.getAll(name);
    if (values.length > 1) return [{ path: `/${name}`, message: "is given more than once" }];
    const [value] = values;
    return value === undefined || /^-?[0-9]+$/.test(value) ? [] : [{ path: `/${name}`, message: "must be an integer" }];
  });
  if (errors.length === 0) return;
  throw invalid(`the query parameters are invalid: ${errors.map((e) => e.path).join(", ")}`, errors);
}

/**
 * Refuses query parameters holding a NUL character, naming each: PostgreSQL cannot
 * store or compare such text, and its refusal would no longer know which parameter
 * it came from. Runs before validation, so every route gets it.
 */
export function refuseNulInQuery(url: string): void {
  const query = url.indexOf("?");
  if (query < 0 || !url.includes("%00", query)) return;
  const names = new Set<string>();
  for (const [name, value] of new URLSearchParams(url.slice(query + 1))) {
    if (name.includes("\0") || value.includes("\0")) names.add(name.replaceAll("\0", "\\u0000"));
  }
  if (names.size === 0) return;
  const errors = [...names].map((name) => ({
    path: `/${name}`,
    message: "must not contain a NUL (\\u0000) character",
  }));
  throw invalid(`the query parameters are invalid: ${errors.map((e) => e.path).join(", ")}`, errors, "invalid_text");
}
