import { invalid } from "../core/problem.ts";

/**
 * `transform` hook for routes whose body is an object with only optional fields:
 * Elysia's normalisation would otherwise turn a JSON array into `{}` and accept it.
 */
export function requireObjectBody({ body }: { body: unknown }): void {
  if (body !== undefined && (typeof body !== "object" || body === null || Array.isArray(body))) {
    throw invalid("the request body must be a JSON object", [{ path: "/", message: "must be an object" }]);
  }
}
