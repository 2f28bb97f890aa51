-- The same table as SQLite's migrations/0023_digest_posts.sql (see there): the
-- network posts each reader's digest has told, each once.
CREATE TABLE digest_posts (
    reader      TEXT NOT NULL DEFAULT '',
    uri         TEXT NOT NULL REFERENCES network_posts(uri) ON DELETE CASCADE,
    digested_at TEXT NOT NULL,
    PRIMARY KEY (reader, uri)
);
