-- minilm-int8 became the default encoder. A library embedded before keeps the
-- encoder its vectors come from: switching means embedding every paper again
-- (hours for a large library, at about a hundred papers a second), which only
-- the user should decide (`lightnews settings set semantic minilm-int8`, then
-- `lightnews embed`). An environment variable still overrides it.
INSERT INTO settings (name, value)
SELECT 'semantic', (SELECT model FROM paper_vectors ORDER BY id LIMIT 1)
WHERE EXISTS (SELECT 1 FROM paper_vectors)
  AND NOT EXISTS (SELECT 1 FROM settings WHERE name = 'semantic');
