-- What a reader tells the learned ranker (lightnews/rank/learn.py), per reader
-- like follows and mutes (user_id 0: the local reader; see store/readers.py).
-- ``paper_feedback``: a reader's word on one paper, one at a time ("not
-- interested" lowers it and papers like it; "more like this" counts as a save).
-- ``saved_lists``: the lists a reader files saved stories in, each an interest
-- of its own to the ranker (a story may be in several lists).
CREATE TABLE paper_feedback (
    user_id    INTEGER NOT NULL,
    paper_id   INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    decision   TEXT NOT NULL CHECK (decision IN ('not-interested', 'more-like-this')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, paper_id)
) WITHOUT ROWID;

CREATE TABLE saved_lists (
    user_id   INTEGER NOT NULL,
    story_key TEXT NOT NULL,             -- as story_state's: an arXiv id, or item:<id>
    name      TEXT NOT NULL,
    PRIMARY KEY (user_id, story_key, name)
) WITHOUT ROWID;
