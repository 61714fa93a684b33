import { invalid } from "../../core/problem.ts";
import { DomainError } from "./normalize.ts";

/** Runs `fn`, turning a refused host name into a 422 naming the body field it came from. */
export async function withDomainInput<T>(path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof DomainError) {
      throw invalid(error.message, [{ path, message: error.message }], "invalid_domain");
    }
    throw error;
  }
}
