-- When a key was last enabled again after being switched off (by the user here, or by a member of
-- its team: that member's stamp), in milliseconds since the Unix epoch; NULL: never. A team
-- believes no rejection of the key made before then, so an old rejection written again into
-- Redis does not switch the key off after a restart.
ALTER TABLE llm_provider_api_keys ADD COLUMN enabled_at INTEGER;
