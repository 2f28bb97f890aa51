-- Links a paper has beyond arXiv: its code repositories (a post or a daily-papers
-- entry that ties a GitHub repository to the paper), with where we learnt it.
CREATE TABLE paper_links (
    paper_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    kind     TEXT NOT NULL,     -- code
    url      TEXT NOT NULL,
    item_id  INTEGER REFERENCES items(id) ON DELETE SET NULL,
    PRIMARY KEY (paper_id, kind, url)
) WITHOUT ROWID;
CREATE INDEX papers_doi ON papers(lower(doi)) WHERE doi IS NOT NULL;
