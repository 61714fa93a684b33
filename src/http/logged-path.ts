/**
 * A request path as the logs keep it. A click token in `/ctx/{token}` is a bearer
 * credential (a platform or agent key with telemetry:read resolves it to its
 * session for 90 days) and the database keeps only its hash, so a log keeps only
 * its first characters, as the mailer does with sign-in links.
 */
export function loggedPath(path: string): string {
  return path.replace(/^(\/+ctx\/[^/]{8})[^/]+/i, "$1…[redacted]");
}
