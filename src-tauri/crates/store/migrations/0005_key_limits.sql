-- Limits the user sets for a key whose provider announces none (NULL: no limit).
ALTER TABLE llm_provider_api_keys ADD COLUMN rpm_limit INTEGER CHECK (rpm_limit IS NULL OR rpm_limit BETWEEN 1 AND 100000);
ALTER TABLE llm_provider_api_keys ADD COLUMN max_concurrent INTEGER CHECK (max_concurrent IS NULL OR max_concurrent BETWEEN 1 AND 1000);
