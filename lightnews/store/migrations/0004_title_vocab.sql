-- Document frequencies of words across papers, read by title linking to weigh
-- how telling each word is (a view over the full-text index: nothing to write).
CREATE VIRTUAL TABLE papers_vocab USING fts5vocab(papers_fts, 'row');
