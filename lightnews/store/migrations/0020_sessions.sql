-- Sessions bound to one account's life.
--
-- Account ids are never handed out twice: `users.id` was an INTEGER PRIMARY KEY,
-- which SQLite reuses after the newest row is deleted, so a removed account's
-- cookie, token or feed key named the next account created. AUTOINCREMENT never
-- reuses an id. The table is rebuilt for it; `api_tokens` (the one table whose
-- foreign key names users) is set aside and restored around the rebuild, because
-- dropping `users` with foreign keys on would cascade into it.
--
-- Sessions live on the server: a session cookie names a row here by the digest of
-- its random part (the secret itself is only in the cookie). Signing out deletes
-- the row, so a copied cookie stops working at once; removing an account deletes
-- its rows (ON DELETE CASCADE). Sessions made before this migration end with it.
CREATE TEMP TABLE api_tokens_kept AS SELECT * FROM api_tokens;
DROP TABLE api_tokens;

CREATE TABLE users_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,          -- Argon2id, encoded (argon2-cffi)
    admin         INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    session_epoch INTEGER NOT NULL DEFAULT 0,  -- raised by "sign out everywhere"
    shares        INTEGER NOT NULL DEFAULT 1   -- 0: left out of the group feed
);
INSERT INTO users_new (id, name, password_hash, admin, created_at, session_epoch, shares)
    SELECT id, name, password_hash, admin, created_at, session_epoch, shares FROM users;
DROP TABLE users;
ALTER TABLE users_new RENAME TO users;

CREATE TABLE api_tokens (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,     -- sha256 of the token; the token itself is never kept
    created_at TEXT NOT NULL,
    last_used  TEXT,
    revoked_at TEXT
);
INSERT INTO api_tokens SELECT * FROM api_tokens_kept;
DROP TABLE api_tokens_kept;

CREATE TABLE sessions (
    id_hash    TEXT PRIMARY KEY,         -- sha256 of the cookie's random part
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);
