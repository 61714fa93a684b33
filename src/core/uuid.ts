/**
 * A UUID in its plain text form, in either case: what PostgreSQL's uuid type
 * takes without braces or a `urn:uuid:` prefix. One pattern for the request
 * formats, the access checks, the CLI and the dashboard.
 */
export const uuidText = /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === "string" && uuidText.test(value);
