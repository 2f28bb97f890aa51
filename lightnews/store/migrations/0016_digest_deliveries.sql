-- Scheduled digests delivered by workers (lightnews/serve/digest.py): one row per
-- recipient and period, claimed by the worker that sends it and marked sent only
-- once the SMTP server accepted the message, so a digest goes out once however
-- many workers look and however often a job is retried.
CREATE TABLE digest_deliveries (
    recipient  TEXT NOT NULL,  -- whose digest: 'library' (the digest_to setting) or a user's key
    period     TEXT NOT NULL,  -- the scheduled moment it is for (ISO 8601, UTC)
    claimed_at TEXT NOT NULL,  -- when a worker took it on
    claimed_by TEXT NOT NULL DEFAULT '',
    sent_at    TEXT,           -- when the SMTP server accepted it (NULL: not yet)
    stories    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (recipient, period)
);
