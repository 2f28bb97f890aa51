-- Each reader's learned ranker as last trained (lightnews/rank/trained.py), one row
-- per reader (user_id 0: the local reader; see store/readers.py), shared by every
-- process of the library: the web's processes, the CLI and the workers read the
-- same model instead of each training its own inside a feed request.
-- ``version``: the digest of what it learned from (saves, reads, lists, feedback,
-- mutes, and the encoder of its vectors); a feed that finds it behind still uses
-- it and has it trained again off the request. ``model``: the model as JSON
-- (numbers as base64 of their bytes, no pickle); NULL when that version had
-- nothing it could learn from (no vectors yet).
CREATE TABLE reader_models (
    user_id    INTEGER PRIMARY KEY,
    version    TEXT NOT NULL,
    trained_at TEXT NOT NULL,
    model      TEXT
);
