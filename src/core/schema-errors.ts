import type { TSchema } from "@sinclair/typebox";
import { type ValueError, ValueErrorType } from "@sinclair/typebox/errors";
import type { FieldError } from "./problem.ts";

/**
 * TypeBox failures as errors a person can act on: one per JSON pointer (the
 * first cause found there, so a missing field is not also "not a string"), each
 * in plain words that name the allowed values. A union names its options, or,
 * when the value has the shape of one option (an object where "object or null"
 * is allowed), reports that option's own failures instead of the union.
 */
export function describeErrors(errors: Iterable<ValueError>): FieldError[] {
  const byPath = new Map<string, string>();
  const add = (error: ValueError) => {
    if (error.type === ValueErrorType.Union) {
      const inner = matchingVariantErrors(error);
      if (inner) {
        for (const nested of inner) add(nested);
        return;
      }
    }
    const path = error.path || "/";
    if (!byPath.has(path)) byPath.set(path, describeError(error));
  };
  for (const error of errors) add(error);
  return [...byPath].map(([path, message]) => ({ path, message }));
}

/** The failures of the one union option whose kind the value has, if exactly one has it. */
function matchingVariantErrors(error: ValueError): ValueError[] | undefined {
  const variants = (error.schema.anyOf ?? []) as TSchema[];
  const kind = kindOf(error.value);
  // Literal options are listed, never descended into.
  const matching = variants.flatMap((variant, index) =>
    variant.type === kind && variant.const === undefined ? [index] : [],
  );
  if (matching.length !== 1) return undefined;
  const iterator = error.errors[matching[0] as number];
  return iterator ? [...iterator] : undefined;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (Number.isInteger(value)) return "integer";
  return typeof value;
}

/** What a string of each format the models use must be, in words. */
const formatTexts: Record<string, string> = {
  uuid: "a UUID",
  email: "an email address",
  uri: "an absolute URI",
  date: "a date, YYYY-MM-DD",
  "date-time": "an ISO 8601 date-time with Z or an offset",
  // src/http/text.ts: free text stored as sent.
  "storable-text": "text without NUL characters or unpaired UTF-16 surrogates",
  "single-line-text": "text on one line, without control characters or unpaired UTF-16 surrogates",
  // Elysia's numeric query parameters, as they arrive: text.
  integer: "an integer",
  numeric: "a number",
};

/** An array longer than its schema allows; also said before validation (array-bounds.ts). */
export const tooManyItems = (maxItems: number) => `must hold at most ${maxItems} items`;

/** The allowed values or kinds of a schema, in words: `direct_quote, paraphrase or reference`, `a string or null`. */
export function allowedText(schema: TSchema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.anyOf)) return orList((schema.anyOf as TSchema[]).map(allowedText));
  if (typeof schema.errorMessage === "string") return schema.errorMessage;
  switch (schema.type) {
    case "string":
      return formatTexts[schema.format as string] ?? "a string";
    case "integer":
      return "an integer";
    case "number":
      return "a number";
    case "boolean":
      return "true or false";
    case "object":
      return "an object";
    case "array":
      return "an array";
    case "null":
      return "null";
    default:
      return "a value of the documented type";
  }
}

function orList(items: string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

function describeError(error: ValueError): string {
  const { schema } = error;
  // A member not sent fails its own schema first ("Expected string"): it is missing, not mistyped.
  if (error.value === undefined && error.path !== "") return `is required: ${allowedText(schema)}`;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return `is required: ${allowedText(schema)}`;
    case ValueErrorType.Union:
    case ValueErrorType.Literal:
      return `must be ${allowedText(schema)}`;
    case ValueErrorType.StringFormat:
      return `must be ${formatTexts[schema.format as string] ?? allowedText(schema)}`;
    case ValueErrorType.StringPattern:
      return `must be ${typeof schema.errorMessage === "string" ? schema.errorMessage : `text matching ${schema.pattern}`}`;
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1 ? "must not be empty" : `must be at least ${schema.minLength} characters long`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${schema.maxLength} characters long`;
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return `must be ${schema.minimum} or more`;
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return `must be ${schema.maximum} or less`;
    case ValueErrorType.ArrayMinItems:
      return `must hold at least ${schema.minItems} ${schema.minItems === 1 ? "item" : "items"}`;
    case ValueErrorType.ArrayMaxItems:
      return tooManyItems(schema.maxItems);
    case ValueErrorType.ObjectAdditionalProperties:
      return "is not a field this object takes";
    case ValueErrorType.ObjectMinProperties:
      return schema.minProperties === 1
        ? "must name at least one field"
        : `must name at least ${schema.minProperties} fields`;
    default:
      return `must be ${allowedText(schema)}`;
  }
}
