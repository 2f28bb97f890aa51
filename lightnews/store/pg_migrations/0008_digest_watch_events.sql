-- Watch events told in a reader's digest (issue 12): each event goes into the
-- reader's next digest once. A row is written only after the digest was
-- delivered (printed, or accepted by the SMTP server), in the same transaction
-- that records the delivery, so a digest that failed leaves its events for the next.
CREATE TABLE digest_watch_events (
    reader      TEXT NOT NULL DEFAULT '',   -- as watches name readers: '' or user:N
    event_key   TEXT NOT NULL REFERENCES watch_events(key) ON DELETE CASCADE,
    digested_at TEXT NOT NULL,
    PRIMARY KEY (reader, event_key)
);

-- Follow suggestions find a co-author's account by its display name (the accounts
-- table holds every account the listener heard).
CREATE INDEX accounts_name ON accounts(service, lower(name));
