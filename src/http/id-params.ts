import { t } from "elysia";

/** The path parameter of a route naming one record by its id (`/…/:id`): a UUID, else 400 naming `/id`. */
export const IdParams = t.Object({ id: t.String({ format: "uuid" }) });
