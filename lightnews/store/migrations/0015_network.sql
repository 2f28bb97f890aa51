-- The whole conversation (issue 12): posts heard network-wide on Bluesky's
-- Jetstream that mention a paper, where the listener stopped, papers a reader
-- watches, where to tell them, and what was already told.
--
-- Network posts live apart from items: the network says far more than the
-- accounts a reader follows, and its posts must not crowd the feed's window of
-- recent items. They count who discusses a paper (the Discussed page, the feed's
-- "N people discuss it") and can be shown on a story.

CREATE TABLE network_posts (
    uri         TEXT PRIMARY KEY,        -- at://DID/COLLECTION/RKEY: one row per post, however often heard
    did         TEXT NOT NULL,           -- who posted (or reposted, or quoted) it
    kind        TEXT NOT NULL CHECK (kind IN ('post', 'repost', 'quote')),
    subject     TEXT,                    -- the post a repost or a quote is of
    text        TEXT NOT NULL DEFAULT '',
    created_at  TEXT,                    -- as the record says (ISO 8601, UTC)
    time_us     INTEGER NOT NULL,        -- when Jetstream heard it (its cursor)
    payload     TEXT NOT NULL DEFAULT '',-- the record as received
    first_seen  TEXT NOT NULL
);
CREATE INDEX network_posts_did ON network_posts(did);
CREATE INDEX network_posts_time ON network_posts(time_us);
CREATE INDEX network_posts_subject ON network_posts(subject) WHERE subject IS NOT NULL;

CREATE TABLE network_mentions (
    uri        TEXT NOT NULL REFERENCES network_posts(uri) ON DELETE CASCADE,
    paper      TEXT NOT NULL,            -- an arXiv id, or doi:10.x/y, or openreview:ID
    method     TEXT NOT NULL,
    confidence REAL NOT NULL,
    evidence   TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (uri, paper)
);
CREATE INDEX network_mentions_paper ON network_mentions(paper);

-- Where each listener stopped: the time_us of the last event it stored.
CREATE TABLE listen_cursors (
    name       TEXT PRIMARY KEY,         -- the Jetstream address (or a replayed file)
    time_us    INTEGER NOT NULL,
    events     INTEGER NOT NULL DEFAULT 0,
    kept       INTEGER NOT NULL DEFAULT 0,
    malformed  INTEGER NOT NULL DEFAULT 0,
    unknown    INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);

-- Who follows whom (a followed scholar's follows, from getFollows or from follow
-- records heard on Jetstream): "one they follow" weighs more on the Discussed page.
CREATE TABLE network_follows (
    follower TEXT NOT NULL,
    follows  TEXT NOT NULL,
    seen_at  TEXT NOT NULL,
    PRIMARY KEY (follower, follows)
);
CREATE INDEX network_follows_follows ON network_follows(follows);

-- Papers a reader watches ('' is the one local reader).
CREATE TABLE watches (
    reader     TEXT NOT NULL DEFAULT '',
    arxiv_id   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (reader, arxiv_id)
);
CREATE INDEX watches_paper ON watches(arxiv_id);

-- Where a reader is told: a webhook (JSON POST), an ntfy topic URL, an e-mail address.
CREATE TABLE push_targets (
    reader     TEXT NOT NULL DEFAULT '',
    kind       TEXT NOT NULL CHECK (kind IN ('webhook', 'ntfy', 'email')),
    address    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (reader, kind, address)
);

-- Things that happened to watched papers, each once (its key is the idempotency key).
CREATE TABLE watch_events (
    key        TEXT PRIMARY KEY,         -- e.g. mention:<paper>:<post uri>, version:<paper>:v3
    arxiv_id   TEXT NOT NULL,
    kind       TEXT NOT NULL,            -- mention, version, code, venue
    summary    TEXT NOT NULL,
    url        TEXT,
    happened   TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX watch_events_paper ON watch_events(arxiv_id);

-- One row per event and target once delivered (sent_at set only after the target took it).
CREATE TABLE deliveries (
    event_key  TEXT NOT NULL REFERENCES watch_events(key) ON DELETE CASCADE,
    reader     TEXT NOT NULL DEFAULT '',
    kind       TEXT NOT NULL,
    address    TEXT NOT NULL,
    sent_at    TEXT,
    attempts   INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    PRIMARY KEY (event_key, reader, kind, address)
);
