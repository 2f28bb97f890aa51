-- Scholars as first-class: accounts on social services with their profile
-- counts, who posted each item and the conversation it belongs to, followed
-- scholars, and the user's attribution decisions, kept across re-ingests.

ALTER TABLE items ADD COLUMN account TEXT;        -- accounts.id of who posted it
ALTER TABLE items ADD COLUMN thread_root TEXT;    -- key of the conversation's first item
ALTER TABLE items ADD COLUMN reply_parent TEXT;   -- key of the item it replies to
CREATE INDEX items_account ON items(account, published) WHERE account IS NOT NULL;
CREATE INDEX items_thread_root ON items(thread_root) WHERE thread_root IS NOT NULL;
CREATE INDEX items_key ON items(key);

CREATE TABLE accounts (
    service     TEXT NOT NULL,           -- bluesky
    id          TEXT NOT NULL,           -- stable id there (a DID)
    handle      TEXT,
    name        TEXT,
    description TEXT,
    avatar      TEXT,
    followers   INTEGER,
    following   INTEGER,
    posts       INTEGER,
    pinned      TEXT,                    -- key of the pinned item
    created     TEXT,
    payload     TEXT NOT NULL DEFAULT '',
    bot         INTEGER NOT NULL DEFAULT 0,  -- reposts listings: weighs little as a signal
    bot_reason  TEXT,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (service, id)
);
CREATE INDEX accounts_handle ON accounts(handle);

ALTER TABLE scholars ADD COLUMN followed INTEGER NOT NULL DEFAULT 1;

CREATE TABLE attribution_decisions (
    scholar_id INTEGER NOT NULL REFERENCES scholars(id) ON DELETE CASCADE,
    arxiv_id   TEXT NOT NULL,
    decision   TEXT NOT NULL CHECK (decision IN ('confirm', 'reject')),
    decided_at TEXT NOT NULL,
    PRIMARY KEY (scholar_id, arxiv_id)
);
