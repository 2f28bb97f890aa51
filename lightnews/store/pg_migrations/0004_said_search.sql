-- Search of what scholars said (posts, blog articles, notes: lightnews.search).
-- items.search held a tsvector of every item since 0001, records of papers too
-- (an arXiv listing's or a Daily Papers entry's abstract), which papers.search
-- already holds: each cost a refresh a to_tsvector and a GIN write. The column
-- now holds the kinds in lightnews.store.fts.SAID_KINDS and is NULL for the rest
-- (same column, same name: SQLite's items_fts holds the same rows).

DROP INDEX items_search;
ALTER TABLE items DROP COLUMN search;
ALTER TABLE items ADD COLUMN search tsvector GENERATED ALWAYS AS (
    CASE WHEN kind IN ('post', 'article', 'note') THEN
        setweight(to_tsvector('lightnews', title), 'A') || setweight(to_tsvector('lightnews', text), 'C')
    END
) STORED;
CREATE INDEX items_search ON items USING gin (search);
