-- Per-host politeness shared by every worker of a library (lightnews/store/cluster.py):
-- the earliest moment the next request to a host may start. A worker reserves its
-- turn by moving next_at one interval on in a single statement (under the row's
-- lock), so workers on any number of machines keep one interval per host together.
-- Times are the database server's clock, the one clock every worker shares.
CREATE TABLE host_slots (
    host    TEXT PRIMARY KEY,
    next_at TIMESTAMPTZ NOT NULL
);
