-- PostgreSQL compiles a statement with LLVM (JIT) once its estimated cost passes
-- jit_above_cost, and TimescaleDB estimates a compressed chunk at a thousand rows
-- a batch, so a statement over many chunks passes it however few rows it reads.
-- Refreshing a month-level rollup reads every chunk of the events (its month
-- buckets do not exclude chunks by time): on a server with about a thousand events
-- over 13 months, after late events into two old months, one such refresh took
-- 10.1 s with JIT and 0.13 s without; its statement, run alone, spent 8.2 s of
-- its 8.25 s compiling. Timescale's own Promscale turns JIT off in its databases
-- for the same reason (timescale/promscale_extension#218).
--
-- The service's sessions turn it off as they connect (src/db/client.ts); this
-- turns it off for the database's other sessions, TimescaleDB's policy jobs
-- among them. Only the database's owner (or a superuser) may set its defaults;
-- without that privilege the migration leaves JIT as it is and says so in the
-- server's log, and an operator can run the statement as the owner.
DO $$
BEGIN
  EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
EXCEPTION WHEN insufficient_privilege THEN
  RAISE WARNING 'JIT stays on for database %''s other sessions, TimescaleDB''s policy jobs among them: run ALTER DATABASE % SET jit = off as its owner',
    current_database(), quote_ident(current_database());
END
$$;
