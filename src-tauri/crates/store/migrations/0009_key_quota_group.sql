-- The quota group a key shares its provider's rate limits with (a Gemini key's Google Cloud
-- project, an OpenAI key's organization): keys of one group rest together and draw on one budget
-- per model. NULL: the key is a group of its own. Free text, trimmed, 1 to 64 characters.
ALTER TABLE llm_provider_api_keys ADD COLUMN quota_group TEXT
    CHECK (quota_group IS NULL OR (length(quota_group) BETWEEN 1 AND 64 AND quota_group = trim(quota_group)));
