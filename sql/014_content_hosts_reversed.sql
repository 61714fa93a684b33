-- Owner reads look up the hosts under each verified domain. content_hosts holds
-- every host any reporter ever sent (the whole web, in time), so that lookup
-- must not scan it: reversed, the subdomains of example.com are exactly the
-- range ['moc.elpmaxe.', 'moc.elpmaxe/') of one btree index ('/' follows '.'
-- in byte order, hence the "C" collation).
CREATE INDEX content_hosts_reversed ON content_hosts ((reverse(host) COLLATE "C"));
