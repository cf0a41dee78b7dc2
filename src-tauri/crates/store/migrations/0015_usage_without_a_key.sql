-- Attempts sent without any key (a server on this machine, such as Ollama, while its provider
-- has no key at all) are written under the key id '(no key)' from now on (usage.rs's NO_KEY),
-- apart from the provider-level key's (NULL in usage_attempts, '' in usage_hourly). Until now
-- both were written as the provider-level key's. A provider that has no key of its own now had
-- none then, as far as can be told: its attempts under the provider-level key went without one.
UPDATE usage_attempts SET key_id = '(no key)'
 WHERE key_id IS NULL
   AND provider_id IN (SELECT id FROM providers WHERE api_key IS NULL AND api_key_storage = 'database');

UPDATE usage_hourly SET key_id = '(no key)'
 WHERE key_id = ''
   AND provider_id IN (SELECT id FROM providers WHERE api_key IS NULL AND api_key_storage = 'database');
