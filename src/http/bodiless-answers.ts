/**
 * Success answers without a body, for the OpenAPI document: a route with no
 * response schema gets none from @elysiajs/openapi, so the route names it in
 * `detail.responses`.
 */
export const noContent = (description: string) => ({ 204: { description } });

export const redirectTo = (description: string, status: 302 | 303 = 302) => ({
  [status]: { description, headers: { Location: { description: "where to go", schema: { type: "string" as const } } } },
});
