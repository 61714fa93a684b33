-- A session's privacy_level is the level it declared, NULL when it declared none.
-- Its turns then keep what their own declared level allows (standard 5.5); click
-- manifests and conversation fields sent in events' data, which have no level of
-- their own, still read an undeclared session as minimal (fail closed). Sessions
-- stored before this migration keep their level: the default 'minimal' they were
-- given cannot be told from a declared one.
ALTER TABLE sessions ALTER COLUMN privacy_level DROP DEFAULT, ALTER COLUMN privacy_level DROP NOT NULL;
