/**
 * docs/wire-format.md's generated part: every event type, who may report it, and
 * its fields with their value rules, read from the schemas ingest checks against
 * (src/modules/ingest/model.ts, event-rules.ts).
 */
import { allowedRoles } from "../../src/modules/ingest/event-rules.ts";
import { eventSchemas, eventTypes, Turn } from "../../src/modules/ingest/model.ts";
import { cell, code } from "./generated-part.ts";

interface SchemaShape {
  type?: string;
  const?: unknown;
  anyOf?: SchemaShape[];
  enum?: unknown[];
  format?: string;
  pattern?: string;
  errorMessage?: string;
  description?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  items?: SchemaShape;
  properties?: Record<string, SchemaShape>;
  required?: string[];
}

/** A value rule in words: the allowed values of a closed set, a format, a range. */
function rule(schema: SchemaShape): string {
  if (schema.anyOf) {
    const values = schema.anyOf.filter((option) => option.type !== "null");
    const nullable = values.length < schema.anyOf.length ? ", or null" : "";
    if (values.every((option) => option.const !== undefined)) {
      return `one of ${values.map((option) => code(option.const)).join(", ")}${nullable}`;
    }
    return `${values.map(rule).join(" or ")}${nullable}`;
  }
  const parts: string[] = [];
  if (schema.type === "string") {
    parts.push(schema.format === "uuid" ? "UUID" : "string");
    if (schema.errorMessage) parts.push(schema.errorMessage);
    else if (schema.pattern) parts.push(`matching ${code(schema.pattern)}`);
    if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  } else if (schema.type === "integer" || schema.type === "number") {
    parts.push(schema.type);
    if (schema.minimum !== undefined && schema.maximum !== undefined && schema.maximum < 2 ** 31) {
      parts.push(`${schema.minimum} to ${schema.maximum}`);
    } else if (schema.minimum !== undefined) parts.push(`${schema.minimum} or more`);
  } else if (schema.type === "array") {
    parts.push(`list of ${schema.items ? rule(schema.items) : "values"}`);
    if (schema.maxItems !== undefined) parts.push(`at most ${schema.maxItems}`);
  } else if (schema.type) parts.push(schema.type);
  return parts.join(", ");
}

function fieldTable(schema: SchemaShape, skip: ReadonlySet<string> = new Set()): string {
  const rows = Object.entries(schema.properties ?? {})
    .filter(([name]) => !skip.has(name))
    .map(([name, field]) => {
      const required = schema.required?.includes(name) ? "yes" : "";
      const note = field.description && field.description !== "UUID" ? field.description : "";
      return `| ${code(name)} | ${required} | ${cell(rule(field))} | ${cell(note)} |`;
    });
  return ["| field | required | value | notes |", "|---|---|---|---|", ...rows].join("\n");
}

/** The generated part of docs/wire-format.md. */
export function renderWireFormat(): string {
  const common = eventSchemas.content_retrieved as unknown as SchemaShape;
  const sections = eventTypes.map((type) => {
    const schema = eventSchemas[type] as unknown as SchemaShape;
    const data = schema.properties?.data;
    const dataSchema = data?.anyOf ? undefined : data;
    const requiredTop = (schema.required ?? []).filter((name) => !["type", "timestamp", "data"].includes(name));
    return [
      `### ${code(type)}`,
      "",
      `Reported by source role ${allowedRoles[type].map(code).join(", ")}.` +
        (requiredTop.length > 0 ? ` Requires ${requiredTop.map(code).join(", ")}.` : "") +
        (schema.required?.includes("data") ? " `data` is required." : ""),
      "",
      Object.keys(dataSchema?.properties ?? {}).length > 0
        ? `\`data\`:\n\n${fieldTable(dataSchema as SchemaShape)}`
        : "`data` carries no keys of its own (unknown keys are tolerated).",
    ].join("\n");
  });
  return [
    "## Fields of every event",
    "",
    fieldTable(common, new Set(["data"])),
    "",
    "## The `turn` object",
    "",
    "On turn events; fields above the `privacy_level` are stripped before storing (README, Ingest).",
    "",
    fieldTable(Turn as unknown as SchemaShape),
    "",
    "## Event types",
    "",
    sections.join("\n\n"),
  ].join("\n");
}
