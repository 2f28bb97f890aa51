-- The domain model of DESIGN.md: scholars and their identities, sources with
-- their state and health, items with their original payload, papers with
-- versions, authorships and mentions; full-text indexes over papers and items.

CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE scholars (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE identities (
    id         INTEGER PRIMARY KEY,
    scholar_id INTEGER NOT NULL REFERENCES scholars(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,   -- bluesky-did, bluesky-handle, arxiv-name, orcid, openalex, homepage, feed
    value      TEXT NOT NULL,
    UNIQUE (kind, value)
);
CREATE INDEX identities_scholar ON identities(scholar_id);

CREATE TABLE sources (
    id               INTEGER PRIMARY KEY,
    kind             TEXT NOT NULL,
    address          TEXT NOT NULL,         -- URL, query or file the source reads
    title            TEXT,
    folder           TEXT,
    scholar_id       INTEGER REFERENCES scholars(id) ON DELETE SET NULL,
    params           TEXT NOT NULL DEFAULT '{}',
    -- state
    etag             TEXT,
    last_modified    TEXT,
    cursor           TEXT,
    resumption_token TEXT,
    state            TEXT NOT NULL DEFAULT '{}',
    -- health
    created_at       TEXT NOT NULL,
    last_attempt     TEXT,
    last_success     TEXT,
    last_error       TEXT,
    last_error_at    TEXT,
    error_count      INTEGER NOT NULL DEFAULT 0,
    next_attempt     TEXT,
    enabled          INTEGER NOT NULL DEFAULT 1,
    UNIQUE (kind, address)
);

CREATE TABLE papers (
    id               INTEGER PRIMARY KEY,
    arxiv_id         TEXT NOT NULL UNIQUE,   -- versionless
    title            TEXT NOT NULL DEFAULT '',
    abstract         TEXT NOT NULL DEFAULT '',
    authors          TEXT NOT NULL DEFAULT '',  -- names as written, joined by ', '
    primary_category TEXT,
    categories       TEXT NOT NULL DEFAULT '',  -- space separated, primary first
    published        TEXT,
    updated          TEXT,
    versions         TEXT NOT NULL DEFAULT '[]', -- JSON [[number, date, size], ...]
    latest_version   INTEGER,
    doi              TEXT,
    journal_ref      TEXT,
    comments         TEXT,
    license          TEXT,
    submitter        TEXT,
    withdrawn        INTEGER NOT NULL DEFAULT 0,
    content_hash     TEXT,                      -- NULL for a stub awaiting metadata
    first_seen       TEXT NOT NULL,
    modified         TEXT NOT NULL
);
CREATE INDEX papers_published ON papers(published);

CREATE TABLE authorships (
    paper_id     INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    name         TEXT NOT NULL,          -- as written, accents resolved
    name_key     TEXT NOT NULL,          -- folded surname, for lookup
    keyname      TEXT,
    forenames    TEXT,
    affiliations TEXT,
    scholar_id   INTEGER REFERENCES scholars(id) ON DELETE SET NULL,
    confidence   REAL,
    PRIMARY KEY (paper_id, position)
) WITHOUT ROWID;
CREATE INDEX authorships_name_key ON authorships(name_key);
CREATE INDEX authorships_scholar ON authorships(scholar_id) WHERE scholar_id IS NOT NULL;

CREATE TABLE items (
    id           INTEGER PRIMARY KEY,
    source_id    INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    kind         TEXT NOT NULL,          -- paper, article, post, daily, note
    title        TEXT NOT NULL DEFAULT '',
    url          TEXT,
    author       TEXT,
    text         TEXT NOT NULL DEFAULT '',
    html         TEXT NOT NULL DEFAULT '',  -- sanitized
    published    TEXT,
    updated      TEXT,
    links        TEXT NOT NULL DEFAULT '[]',
    tags         TEXT NOT NULL DEFAULT '[]',
    engagement   TEXT NOT NULL DEFAULT '{}',
    extra        TEXT NOT NULL DEFAULT '{}',
    payload      TEXT NOT NULL DEFAULT '',  -- the original bytes of this unit
    paper_id     INTEGER REFERENCES papers(id) ON DELETE SET NULL,  -- the paper this item records
    content_hash TEXT NOT NULL,
    first_seen   TEXT NOT NULL,
    modified     TEXT NOT NULL,
    UNIQUE (source_id, key)
);
CREATE INDEX items_published ON items(published);
CREATE INDEX items_paper ON items(paper_id) WHERE paper_id IS NOT NULL;

CREATE TABLE mentions (
    item_id    INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    paper_id   INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    method     TEXT NOT NULL,
    confidence REAL NOT NULL,
    evidence   TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (item_id, paper_id)
) WITHOUT ROWID;
CREATE INDEX mentions_paper ON mentions(paper_id);

CREATE VIRTUAL TABLE papers_fts USING fts5(
    title, authors, abstract,
    content='papers', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER papers_ai AFTER INSERT ON papers BEGIN
    INSERT INTO papers_fts(rowid, title, authors, abstract)
    VALUES (new.id, new.title, new.authors, new.abstract);
END;
CREATE TRIGGER papers_ad AFTER DELETE ON papers BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, authors, abstract)
    VALUES ('delete', old.id, old.title, old.authors, old.abstract);
END;
CREATE TRIGGER papers_au AFTER UPDATE OF title, authors, abstract ON papers BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, authors, abstract)
    VALUES ('delete', old.id, old.title, old.authors, old.abstract);
    INSERT INTO papers_fts(rowid, title, authors, abstract)
    VALUES (new.id, new.title, new.authors, new.abstract);
END;

CREATE VIRTUAL TABLE items_fts USING fts5(
    title, text,
    content='items', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER items_ai AFTER INSERT ON items BEGIN
    INSERT INTO items_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
CREATE TRIGGER items_ad AFTER DELETE ON items BEGIN
    INSERT INTO items_fts(items_fts, rowid, title, text) VALUES ('delete', old.id, old.title, old.text);
END;
CREATE TRIGGER items_au AFTER UPDATE OF title, text ON items BEGIN
    INSERT INTO items_fts(items_fts, rowid, title, text) VALUES ('delete', old.id, old.title, old.text);
    INSERT INTO items_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
