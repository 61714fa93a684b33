import { createApp } from "./app.ts";
import { ConfigError, listeningBaseUrl, loadConfig, serviceRoles } from "./config.ts";
import { DatabaseStartupError } from "./db/startup-errors.ts";
import { insecureSignInWarning } from "./http/credentials.ts";
import { startJobs } from "./jobs/index.ts";
import { watchForJobRunners } from "./jobs/runner-watch.ts";
import { createLogger, describeError } from "./log.ts";
import { startRuntime } from "./runtime.ts";

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}
const log = createLogger(config.LOG_LEVEL, { service: "content-telemetry" });

// Signals are taken from the start. Until the service listens, one stops it at once: nothing is
// being served, and each migration is a transaction of its own, so a later start finishes the work.
let stopOnce: ((signal: string) => Promise<void>) | undefined;
const onSignal = (signal: string) => {
  if (stopOnce) return void stopOnce(signal);
  log.info("stopped while starting", { signal });
  process.exit(0);
};
process.on("SIGTERM", () => onSignal("SIGTERM"));
process.on("SIGINT", () => onSignal("SIGINT"));

const { ctx, db } = await startRuntime(config, log).catch((error: unknown) => {
  // A database or setting that is unusable as configured is the operator's to fix: one line, no stack.
  if (error instanceof DatabaseStartupError || error instanceof ConfigError) {
    log.error(`start-up failed: ${error.message}`);
  } else log.error("start-up failed", describeError(error));
  process.exit(1);
});
const roles = serviceRoles(config.SERVICE_ROLES);
const built = createApp(ctx);
let app: typeof built;
try {
  app = built.listen({
    port: config.PORT,
    hostname: config.HOST,
    // No runtime limit: its refusal is a bare 413 that closes the connection. The body
    // reader (src/http/body-stream.ts) enforces MAX_BODY_BYTES as the body streams in.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    // Elysia asks for SO_REUSEPORT, with which a second instance on the same port shared
    // it silently and requests alternated between two databases: a port in use is an error.
    reusePort: false,
  });
} catch (error) {
  // A port in use, or an address not on this machine: the operator's to fix, one line.
  log.error(
    `start-up failed: cannot listen on ${config.HOST} port ${config.PORT} (HOST, PORT): ${(error as Error).message}`,
  );
  await db.close();
  process.exit(1);
}
// Started once the service listens, so that a failure to listen has nothing else to stop.
const jobs = roles.has("jobs") ? startJobs(ctx) : undefined;
ctx.ingestHealth.start();
const jobRunnerWatch = jobs ? undefined : watchForJobRunners(ctx, config.SERVICE_ROLES);
if (!process.env.PUBLIC_BASE_URL && app.server?.port !== undefined) {
  // Links follow the real port (PORT 0 picks one); ctx.config is this same object.
  config.PUBLIC_BASE_URL = listeningBaseUrl(config.HOST, app.server.port);
}
const signInWarning = insecureSignInWarning(config.PUBLIC_BASE_URL, config.SESSION_COOKIE_SECURE);
if (signInWarning) log.warn(signInWarning);
log.info("listening", {
  host: config.HOST,
  port: app.server?.port,
  public_base_url: config.PUBLIC_BASE_URL,
  roles: [...roles],
});

// One line, then stop: a supervisor restarts the process in a known state.
process.on("uncaughtException", (error) => {
  log.error("uncaught exception", describeError(error));
  process.exit(1);
});

/** How long the shutdown waits for a server's connections to close, after the grace. */
const closeWithinMs = 5_000;

let stopping = false;
stopOnce = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info("shutting down: no new requests, finishing in-flight ones", { signal });
  const grace = new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_GRACE_SECONDS * 1000));
  // One deadline for both: stop(false) stops accepting and resolves once in-flight
  // requests have finished; the jobs stop starting work and finish what they sent
  // (a webhook attempt takes up to 10 s). What is still going at the deadline is
  // cut off: a request's transaction rolls back, a webhook delivery is sent again
  // once its lease runs out.
  await Promise.race([Promise.all([app.server?.stop(false), jobs?.stop()]), grace]);
  await app.server?.stop(true);
  jobRunnerWatch?.stop();
  // The last ingest-health counts, then the connections: to a server within 5 s, as a
  // server that does not answer must not hold the process past what the docs promise.
  // The embedded engine lives in this process and writes its data as it stops: never cut short.
  const closing = (async () => {
    await ctx.ingestHealth.stop();
    await Promise.all([ctx.readReplicas.close(), db.close()]);
  })();
  const closed =
    db.kind === "embedded"
      ? await closing.then(() => true)
      : await Promise.race([closing.then(() => true), Bun.sleep(closeWithinMs).then(() => false)]);
  log.info(closed ? "stopped" : "stopped without waiting longer for the database to close");
  process.exit(0);
};
