-- Search of what scholars said (posts, blog articles, notes: lightnews.search).
-- items_fts indexed every item since 0001, records of papers too (an arXiv
-- listing's or a Daily Papers entry's abstract), which papers_fts already
-- indexes: those rows cost every refresh an index write and would turn up as
-- duplicates of the papers. The index now holds only the kinds in
-- lightnews.store.fts.SAID_KINDS, kept current by triggers (a kind never
-- changes on update, so a row's 'delete' always finds what its insert wrote).

DROP TRIGGER items_ai;
DROP TRIGGER items_ad;
DROP TRIGGER items_au;

INSERT INTO items_fts(items_fts) VALUES ('delete-all');
INSERT INTO items_fts(rowid, title, text)
    SELECT id, title, text FROM items WHERE kind IN ('post', 'article', 'note');

CREATE TRIGGER items_ai AFTER INSERT ON items
WHEN new.kind IN ('post', 'article', 'note') BEGIN
    INSERT INTO items_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
CREATE TRIGGER items_ad AFTER DELETE ON items
WHEN old.kind IN ('post', 'article', 'note') BEGIN
    INSERT INTO items_fts(items_fts, rowid, title, text)
    VALUES ('delete', old.id, old.title, old.text);
END;
CREATE TRIGGER items_au AFTER UPDATE OF title, text, kind ON items BEGIN
    INSERT INTO items_fts(items_fts, rowid, title, text)
    SELECT 'delete', old.id, old.title, old.text WHERE old.kind IN ('post', 'article', 'note');
    INSERT INTO items_fts(rowid, title, text)
    SELECT new.id, new.title, new.text WHERE new.kind IN ('post', 'article', 'note');
END;
