-- How many times the metadata of a stub (a paper known only by its id) was
-- asked for: ids that arXiv does not know stop being asked for after a few.
ALTER TABLE papers ADD COLUMN lookups INTEGER NOT NULL DEFAULT 0;
CREATE INDEX papers_stubs ON papers(lookups) WHERE content_hash IS NULL;
