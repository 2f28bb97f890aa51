-- What the (local) user decides about the feed: mutes, read and saved stories.
CREATE TABLE mutes (
    kind       TEXT NOT NULL CHECK (kind IN ('scholar', 'source', 'keyword')),
    value      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (kind, value)
) WITHOUT ROWID;

CREATE TABLE story_state (
    story_key TEXT PRIMARY KEY,          -- arXiv id, or item:<id> for an item alone
    read_at   TEXT,                      -- seen on any channel (web, CLI, digest)
    saved_at  TEXT
) WITHOUT ROWID;
