-- Accounts: many readers on one instance, each with their own follows, mutes,
-- read/saved stories and reader settings (lightnews/store/readers.py). Papers,
-- items, sources and scholars stay shared: one fetch serves every reader.
--
-- Reader 0 is the built-in "local reader" of a one-person install (no row in
-- users): every state that existed before this migration becomes its state.
-- The first account created takes that state over (see readers.py).
CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,          -- Argon2id, encoded (argon2-cffi)
    admin         INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    session_epoch INTEGER NOT NULL DEFAULT 0,  -- raised by "sign out everywhere"
    shares        INTEGER NOT NULL DEFAULT 1   -- 0: left out of the group feed
);

CREATE TABLE api_tokens (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,     -- sha256 of the token; the token itself is never kept
    created_at TEXT NOT NULL,
    last_used  TEXT,
    revoked_at TEXT
);

CREATE TABLE feed_keys (
    user_id    INTEGER PRIMARY KEY,      -- 0: the local reader
    key_hash   TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

CREATE TABLE audit_log (
    id     INTEGER PRIMARY KEY,
    at     TEXT NOT NULL,
    actor  TEXT NOT NULL,                -- a user's name (kept after the user is removed)
    action TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT ''
);

CREATE TABLE sign_in_failures (
    id      INTEGER PRIMARY KEY,
    at      TEXT NOT NULL,
    account TEXT NOT NULL,
    address TEXT NOT NULL
);
CREATE INDEX sign_in_failures_account ON sign_in_failures (account, at);
CREATE INDEX sign_in_failures_address ON sign_in_failures (address, at);

CREATE TABLE follows (
    user_id    INTEGER NOT NULL,
    scholar_id INTEGER NOT NULL REFERENCES scholars(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, scholar_id)
) WITHOUT ROWID;
CREATE INDEX follows_scholar ON follows (scholar_id);
INSERT INTO follows (user_id, scholar_id, created_at)
    SELECT 0, id, created_at FROM scholars WHERE followed = 1;

CREATE TABLE user_settings (
    user_id INTEGER NOT NULL,
    name    TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (user_id, name)
) WITHOUT ROWID;
INSERT INTO user_settings (user_id, name, value)
    SELECT 0, name, value FROM settings WHERE name IN ('digest_to', 'half_life_hours');
DELETE FROM settings WHERE name IN ('digest_to', 'half_life_hours');

CREATE TABLE mutes_new (
    user_id    INTEGER NOT NULL DEFAULT 0,
    kind       TEXT NOT NULL CHECK (kind IN ('scholar', 'source', 'keyword')),
    value      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, kind, value)
) WITHOUT ROWID;
INSERT INTO mutes_new (user_id, kind, value, created_at)
    SELECT 0, kind, value, created_at FROM mutes;
DROP TABLE mutes;
ALTER TABLE mutes_new RENAME TO mutes;

CREATE TABLE story_state_new (
    user_id   INTEGER NOT NULL DEFAULT 0,
    story_key TEXT NOT NULL,
    read_at   TEXT,
    saved_at  TEXT,
    PRIMARY KEY (user_id, story_key)
) WITHOUT ROWID;
INSERT INTO story_state_new (user_id, story_key, read_at, saved_at)
    SELECT 0, story_key, read_at, saved_at FROM story_state;
DROP TABLE story_state;
ALTER TABLE story_state_new RENAME TO story_state;
CREATE INDEX story_state_saved ON story_state (saved_at) WHERE saved_at IS NOT NULL;
