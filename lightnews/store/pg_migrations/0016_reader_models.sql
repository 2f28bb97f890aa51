-- The same table as SQLite's migrations/0024_reader_models.sql (see there): each
-- reader's learned ranker as last trained, with the digest of what it learned from.
CREATE TABLE reader_models (
    user_id    BIGINT PRIMARY KEY,
    version    TEXT NOT NULL,
    trained_at TEXT NOT NULL,
    model      TEXT
);
