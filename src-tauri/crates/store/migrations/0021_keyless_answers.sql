-- What a provider answered the last request sent to it without any key (usage.rs's NO_KEY):
-- read for every provider listed, so through this index rather than every attempt kept.
CREATE INDEX usage_attempts_without_a_key ON usage_attempts (provider_id, at) WHERE key_id = '(no key)';
