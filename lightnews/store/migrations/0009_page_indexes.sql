-- Indexes the pages need once a library holds many posts (measured on a
-- 160k-item database with bench/pages_latency.py: the feed 378 -> 52 ms,
-- a scholar 547 -> 35 ms, daily papers 414 -> 2.5 ms, a busy story 97 -> 32 ms).

-- The feed's newest items, in the order it reads them.
CREATE INDEX items_time ON items(COALESCE(published, first_seen));
-- Who posted an item, looked up by the account's id alone.
CREATE INDEX accounts_id ON accounts(id);
-- The scholar behind a mention's account (identities by value).
CREATE INDEX identities_value ON identities(value);
-- Daily Papers by the day they were featured.
CREATE INDEX items_daily_day ON items(json_extract(extra, '$.featured_day')) WHERE kind = 'daily';
