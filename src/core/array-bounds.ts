import type { TSchema } from "@sinclair/typebox";
import type { FieldError } from "./problem.ts";
import { tooManyItems } from "./schema-errors.ts";

/** Enough to say what is wrong; a hostile body could otherwise name thousands. */
const maxReported = 20;

/**
 * Arrays longer than their schema's `maxItems`, found by walking the value along
 * the schema without entering them. Run before full validation: TypeBox's error
 * report visits every item of an over-long array (100,000 UUIDs take seconds), so
 * a body with one is refused on its length alone. Unions are not entered, since
 * which branch applies is not known yet; full validation still covers them.
 */
export function overLongArrays(schema: TSchema, value: unknown): FieldError[] {
  const found: FieldError[] = [];
  walk(schema, value, "", found);
  return found;
}

function walk(schema: TSchema, value: unknown, path: string, found: FieldError[]): void {
  if (found.length >= maxReported) return;
  for (const part of (schema.allOf as TSchema[] | undefined) ?? []) walk(part, value, path, found);
  if (Array.isArray(value)) {
    if (schema.type !== "array") return;
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
      found.push({ path: path || "/", message: tooManyItems(schema.maxItems) });
      return;
    }
    const items = schema.items as TSchema | undefined;
    if (items) for (const [index, item] of value.entries()) walk(items, item, `${path}/${index}`, found);
    return;
  }
  if (value === null || typeof value !== "object" || schema.type !== "object") return;
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  for (const [name, property] of Object.entries(properties)) {
    if (Object.hasOwn(value, name)) walk(property, (value as Record<string, unknown>)[name], `${path}/${name}`, found);
  }
}
