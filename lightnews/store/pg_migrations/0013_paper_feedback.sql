-- The same tables as SQLite's migrations/0021_paper_feedback.sql (see there): a
-- reader's word on papers ("not interested", "more like this") and their saved lists.
CREATE TABLE paper_feedback (
    user_id    BIGINT NOT NULL,
    paper_id   BIGINT NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    decision   TEXT NOT NULL CHECK (decision IN ('not-interested', 'more-like-this')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, paper_id)
);

CREATE TABLE saved_lists (
    user_id   BIGINT NOT NULL,
    story_key TEXT NOT NULL,
    name      TEXT NOT NULL,
    PRIMARY KEY (user_id, story_key, name)
);
