-- Network posts told in a reader's digest (issue 30): the "Watched papers"
-- section shows each watched paper's new posts, each post once per reader. As
-- with digest_watch_events, a row is written only once the digest was delivered
-- (printed, or accepted by the SMTP server), so a digest that failed leaves its
-- posts for the next; posts known when a watch began are written then.
CREATE TABLE digest_posts (
    reader      TEXT NOT NULL DEFAULT '',   -- as watches name readers: '' or user:N
    uri         TEXT NOT NULL REFERENCES network_posts(uri) ON DELETE CASCADE,
    digested_at TEXT NOT NULL,
    PRIMARY KEY (reader, uri)
);
