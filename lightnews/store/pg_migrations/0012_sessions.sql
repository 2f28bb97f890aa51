-- Sessions bound to one account's life: see SQLite's migrations/0020_sessions.sql.
-- PostgreSQL's identity column never hands out an id twice, so only the server-side
-- sessions are new here.
CREATE TABLE sessions (
    id_hash    TEXT PRIMARY KEY,
    user_id    BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
