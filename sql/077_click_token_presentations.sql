-- The presentation engagements carrying a click token named (standard 7.4.1): the
-- first one, and whether a later engagement named another. A token seen on two
-- presentations no longer tells which one was clicked, and is never resolved.
ALTER TABLE click_tokens
  ADD COLUMN presentation_id uuid,
  ADD COLUMN presentations_differ boolean NOT NULL DEFAULT false;
