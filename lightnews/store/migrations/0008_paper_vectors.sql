-- Sentence vectors of papers, for meaning-based search and related papers.
-- One row per paper and encoder; ``id`` grows with every write, so a vector
-- index kept beside the database knows which rows it has not seen yet.
CREATE TABLE paper_vectors (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    paper_id  INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    model     TEXT NOT NULL,     -- which encoder made it (queries must use the same)
    vector    BLOB NOT NULL,     -- float16, little-endian, unit length
    UNIQUE (paper_id, model)
);

-- Papers whose words are new or changed since they were last embedded: the
-- embedding step takes its work from here, in time proportional to the work.
CREATE TABLE embed_queue (
    paper_id INTEGER PRIMARY KEY REFERENCES papers(id) ON DELETE CASCADE
);

-- (No OR IGNORE in the triggers: the statement that fires a trigger imposes
-- its own conflict policy on it.)
CREATE TRIGGER papers_embed_new AFTER INSERT ON papers
WHEN new.title != ''
BEGIN
    INSERT INTO embed_queue (paper_id) SELECT new.id
    WHERE NOT EXISTS (SELECT 1 FROM embed_queue WHERE paper_id = new.id);
END;

CREATE TRIGGER papers_embed_changed AFTER UPDATE OF title, abstract ON papers
WHEN old.title IS NOT new.title OR old.abstract IS NOT new.abstract
BEGIN
    DELETE FROM paper_vectors WHERE paper_id = old.id;
    INSERT INTO embed_queue (paper_id) SELECT new.id
    WHERE new.title != '' AND NOT EXISTS (SELECT 1 FROM embed_queue WHERE paper_id = new.id);
END;

INSERT INTO embed_queue (paper_id) SELECT id FROM papers WHERE title != '';
