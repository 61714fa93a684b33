-- Scheduled jobs run once per tick across every instance on one database: each
-- instance fires on the same cron pattern, and the one that records the tick
-- first runs it (src/jobs/schedule.ts). Rows older than a day are pruned as new
-- ticks are claimed.
CREATE TABLE job_ticks (
  job         text NOT NULL,
  tick        timestamptz NOT NULL,
  instance    text NOT NULL,
  claimed_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job, tick)
);
