-- A paper's text as it was at each version Lightnews saw it change: the story
-- shows what changed between versions (title, abstract, authors, comments,
-- categories) and the feed says "v3: abstract changed". Written only when a
-- stored paper changes (the old text and the new), so a paper seen once costs
-- nothing here. ``seen_at`` is when Lightnews stored that text.
CREATE TABLE paper_revisions (
    paper_id    INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
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

-- Which version of a paper a vector was made from (re-embedded when the text changes).
ALTER TABLE paper_vectors ADD COLUMN version INTEGER;
-- Which version of the paper a mention was linked against (a link by title names the
-- title of that version).
ALTER TABLE mentions ADD COLUMN paper_version INTEGER;
-- When a code link first appeared (a "code released" event when after the paper).
ALTER TABLE paper_links ADD COLUMN first_seen TEXT;
