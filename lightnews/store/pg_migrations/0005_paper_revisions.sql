-- The same tables and columns as SQLite's migrations/0014_paper_revisions.sql (see
-- there): a paper's text at each version it changed, the version a vector or a
-- mention came from, and when a code link first appeared.
CREATE TABLE paper_revisions (
    paper_id    BIGINT NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    abstract    TEXT NOT NULL DEFAULT '',
    authors     TEXT NOT NULL DEFAULT '',
    comments    TEXT,
    categories  TEXT NOT NULL DEFAULT '',
    journal_ref TEXT,
    withdrawn   INTEGER NOT NULL DEFAULT 0,
    seen_at     TEXT NOT NULL,
    PRIMARY KEY (paper_id, version)
);
CREATE INDEX paper_revisions_seen ON paper_revisions(seen_at);

ALTER TABLE paper_vectors ADD COLUMN version INTEGER;
ALTER TABLE mentions ADD COLUMN paper_version INTEGER;
ALTER TABLE paper_links ADD COLUMN first_seen TEXT;
