-- Papers whose title changed since their links by title were made. A mention
-- linked by title (exact-title, fuzzy-title, surname-title, url-title) names
-- the title of the version it was linked against (``mentions.paper_version``);
-- when a new version changes the title, the next linking pass takes the paper
-- from here, checks each such mention again (unlinked or re-linked when its text
-- no longer names the paper) and links items that name the new title: in time
-- proportional to the work, as ``embed_queue`` is for vectors.
-- ``old_title``: the title the links were made against (the first, when the
-- title changes twice before the pass).
CREATE TABLE relink_queue (
    paper_id  INTEGER PRIMARY KEY REFERENCES papers(id) ON DELETE CASCADE,
    old_title TEXT NOT NULL DEFAULT ''
);

-- A stub getting its first title is not a change (no link by title can name it).
CREATE TRIGGER papers_relink_retitled AFTER UPDATE OF title ON papers
WHEN old.title != '' AND new.title != '' AND old.title IS NOT new.title
BEGIN
    INSERT INTO relink_queue (paper_id, old_title) SELECT new.id, old.title
    WHERE NOT EXISTS (SELECT 1 FROM relink_queue WHERE paper_id = new.id);
END;
