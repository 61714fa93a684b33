/**
 * Checks a value against a schema of the served OpenAPI document, for the keywords
 * the document uses (no validator is a dependency, and adding one for tests alone
 * is not worth it). Returns one message per violation, empty when the value fits.
 */
type Schema = any;

export function schemaViolations(schema: Schema, value: unknown, document: Schema, at = "$"): string[] {
  if (schema === undefined || schema === true) return [];
  if (schema.$ref) {
    const name = String(schema.$ref).replace("#/components/schemas/", "");
    return schemaViolations(document.components.schemas[name], value, document, at);
  }
  if (value === null && schema.nullable) return [];
  const found: string[] = [];
  if (
    schema.anyOf &&
    !schema.anyOf.some((option: Schema) => schemaViolations(option, value, document, at).length === 0)
  )
    found.push(`${at}: matches none of anyOf`);
  const same = (a: unknown) => JSON.stringify(a) === JSON.stringify(value);
  if ("const" in schema && !same(schema.const)) found.push(`${at}: is not ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.some(same)) found.push(`${at}: ${JSON.stringify(value)} is not one of the enum`);
  if (schema.type) {
    const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    const actual =
      value === null
        ? "null"
        : Array.isArray(value)
          ? "array"
          : typeof value === "number"
            ? Number.isInteger(value)
              ? "integer"
              : "number"
            : typeof value;
    if (!types.some((type) => type === actual || (type === "number" && actual === "integer")))
      return [...found, `${at}: is ${actual}, not ${types.join(" or ")}`];
  }
  if (typeof value === "string" && schema.pattern && !new RegExp(schema.pattern, "u").test(value))
    found.push(`${at}: does not match ${schema.pattern}`);
  if (typeof value === "number" && schema.minimum !== undefined && value < schema.minimum)
    found.push(`${at}: is below ${schema.minimum}`);
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => {
      found.push(...schemaViolations(schema.items, item, document, `${at}[${i}]`));
    });
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    for (const name of schema.required ?? []) if (!(name in object)) found.push(`${at}: lacks ${name}`);
    for (const [name, member] of Object.entries(object)) {
      if (schema.properties?.[name])
        found.push(...schemaViolations(schema.properties[name], member, document, `${at}.${name}`));
    }
  }
  return found;
}
