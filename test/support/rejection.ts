/**
 * The error a promise rejects with; fails when it resolves instead.
 *
 * Tests use this rather than `expect(promise).rejects`: in Bun 1.4.5 that waited
 * about two seconds on a promise the in-process embedded engine settles in
 * milliseconds, enough to push a test past its timeout on a busy CI machine.
 */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject, but it resolved");
}
