import { Cron } from "croner";
import type { AppContext } from "../context.ts";
import { purgeExpiredSignIns } from "../modules/auth/purge.ts";

/** Hourly by default: removes expired magic links, OAuth states and long-ended sessions. */
export function signInPurgeJob(ctx: AppContext): Cron {
  return new Cron(ctx.config.SIGN_IN_PURGE_CRON, { protect: true }, async () => {
    try {
      const deleted = await purgeExpiredSignIns(ctx.sql);
      if (deleted) ctx.log.info("purged expired sign-in records", { deleted });
    } catch (error) {
      ctx.log.warn("sign-in purge failed", { error: String(error) });
    }
  });
}
