-- The page's event types for top URLs (src/modules/reads/urls.ts) are read for
-- its few URLs from events_by_url at every level of the range's pieces. sql/062
-- left the hour level without a URL index, as hours only fill a range's edges;
-- but the newest edge is up to a day of hours, and in bench:reads at 20 million
-- events finding a page's 20 URLs among 45,000 hour rows took 14 ms of the
-- year-long top-20. A hash index, as on the other levels (URLs can be longer than
-- a btree key allows). IF NOT EXISTS: the benchmark's database got it by hand
-- while this was measured.
CREATE INDEX IF NOT EXISTS events_by_url_hour_url ON events_by_url_hour USING hash (content_url);
