-- Full-text rows of new papers are written by the store in bulk (much faster
-- than a trigger per row); triggers keep updates and deletes in step. A stub
-- (a paper known only by its id) has nothing to index and is not indexed.

DROP TRIGGER papers_ai;
DROP TRIGGER papers_ad;
DROP TRIGGER papers_au;

CREATE TRIGGER papers_ad AFTER DELETE ON papers WHEN old.content_hash IS NOT NULL BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, authors, abstract)
    VALUES ('delete', old.id, old.title, old.authors, old.abstract);
END;
CREATE TRIGGER papers_au AFTER UPDATE OF title, authors, abstract ON papers
WHEN old.content_hash IS NOT NULL BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, authors, abstract)
    VALUES ('delete', old.id, old.title, old.authors, old.abstract);
    INSERT INTO papers_fts(rowid, title, authors, abstract)
    VALUES (new.id, new.title, new.authors, new.abstract);
END;
CREATE TRIGGER papers_au_stub AFTER UPDATE OF title, authors, abstract ON papers
WHEN old.content_hash IS NULL AND new.content_hash IS NOT NULL BEGIN
    INSERT INTO papers_fts(rowid, title, authors, abstract)
    VALUES (new.id, new.title, new.authors, new.abstract);
END;
