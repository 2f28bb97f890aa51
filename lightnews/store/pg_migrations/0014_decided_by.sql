-- The same column as SQLite's migrations/0022_decided_by.sql (see there): who made
-- an attribution decision, shown on the scholar's page.
ALTER TABLE attribution_decisions ADD COLUMN decided_by TEXT;
