-- A session never ends before it starts.
--
-- Each document about a session may move its start earlier (the earliest start
-- reported wins) or set its end, so the two can come from different requests. A
-- later document could therefore store an end before the start an earlier one
-- stored. The constraint makes the database refuse that; ingest turns the refusal
-- into a 422 naming /ended_at. POST /sessions/end ends a session no earlier than
-- its start, which may lie a few minutes ahead under the allowed clock skew.

-- Rows stored before this rule came from a document whose start defaulted to the
-- time it arrived and whose reported end was earlier: keep the reported end, and
-- start the session then.
UPDATE sessions SET started_at = ended_at WHERE ended_at < started_at;

ALTER TABLE sessions
  ADD CONSTRAINT sessions_end_not_before_start CHECK (ended_at IS NULL OR ended_at >= started_at);
