-- Who made an attribution decision (issue 31): "not theirs" and "confirmed" are
-- shared, made by an admin (or the local reader of an install without accounts)
-- and shown with their name ("rejected for everyone, by ada"). NULL: made before
-- this was recorded.
ALTER TABLE attribution_decisions ADD COLUMN decided_by TEXT;
