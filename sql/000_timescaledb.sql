-- TimescaleDB itself, before anything uses it. On a server the start-up check
-- (src/db/timescale-preflight.ts) has already said clearly why this would fail:
-- TimescaleDB not installed, not in shared_preload_libraries, too old, or a user
-- without the right to create it. On the embedded engine the library is loaded
-- at start (src/db/embedded.ts). Where an operator or an image's init scripts
-- created it already, this does nothing.
CREATE EXTENSION IF NOT EXISTS timescaledb;
