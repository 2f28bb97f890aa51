-- FTS5 keeps the terms of rows not yet written to the full-text index in a
-- memory buffer and writes them out as one index segment when the buffer is
-- full (1 MB by default), at a commit, or at a statement that may need rolling
-- back. A bulk import indexes a whole transaction's new papers in one statement
-- (SQLiteStore.bulk_transaction, about 50,000 papers): with a 64 MB buffer that
-- becomes a few large segments instead of hundreds of small ones that FTS5
-- would merge again and again. Small writes never fill it.
INSERT INTO papers_fts(papers_fts, rank) VALUES('hashsize', 67108864);
