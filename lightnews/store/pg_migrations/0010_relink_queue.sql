-- The same table as SQLite's migrations/0019_relink_queue.sql (see there): papers
-- whose title changed since their links by title were made, filled by a trigger.
CREATE TABLE relink_queue (
    paper_id  BIGINT PRIMARY KEY REFERENCES papers(id) ON DELETE CASCADE,
    old_title TEXT NOT NULL DEFAULT ''
);

CREATE FUNCTION papers_relink_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.title <> '' AND NEW.title <> '' AND NEW.title IS DISTINCT FROM OLD.title THEN
        INSERT INTO relink_queue (paper_id, old_title) VALUES (NEW.id, OLD.title)
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER papers_relink AFTER UPDATE OF title ON papers
    FOR EACH ROW EXECUTE FUNCTION papers_relink_queue();
