-- Session ids are named per organisation (issue 18). A reporter names its
-- sessions with ids of its own choosing; when an organisation names an id that
-- another organisation's session already has, it gets a session of its own under
-- that name instead of a refusal, which told it that the id existed elsewhere.
--
-- `id` stays the session's identity everywhere (events, counting, click tokens);
-- `wire_id` is the name its reporter uses when that differs from `id`, which
-- happens only for such a reused name. So every existing session keeps its id and
-- its events, and lookups by name go through (org_id, coalesce(wire_id, id)).

ALTER TABLE sessions ADD COLUMN wire_id uuid;

CREATE UNIQUE INDEX sessions_org_name ON sessions (org_id, (coalesce(wire_id, id)));

-- Reads show a session by its reporter's name: the few renamed sessions, joined
-- to pages of events by their id.
CREATE UNIQUE INDEX sessions_renamed ON sessions (id) INCLUDE (wire_id) WHERE wire_id IS NOT NULL;

-- Ingest's claims of a request's sessions can no longer fail: the guard that
-- aborted a write naming another organisation's session has nothing to guard.
DROP FUNCTION ingest_require_sessions(bigint, bigint);
