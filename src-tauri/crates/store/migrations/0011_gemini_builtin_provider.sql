-- The built-in provider "Google Gemini" (id `gemini`), at the host root: Keypool appends
-- `/v1beta/models/...`. It takes the place after Anthropic's: the providers from the third place
-- on move down one, their order among themselves kept. Nothing else changes; a database that
-- somehow holds a provider `gemini` already keeps it as it is, and its order too.
UPDATE providers SET sort_order = sort_order + 1
WHERE sort_order >= 2 AND NOT EXISTS (SELECT 1 FROM providers WHERE id = 'gemini');

INSERT OR IGNORE INTO providers
    (id, name, kind, base_url, builtin, sort_order, models, default_model, created_at, updated_at)
VALUES
    ('gemini', 'Google Gemini', 'gemini', 'https://generativelanguage.googleapis.com', 1, 2,
     '["gemini-2.5-flash","gemini-2.5-pro","gemini-2.5-flash-lite"]', 'gemini-2.5-flash',
     CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER));
