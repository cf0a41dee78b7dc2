-- The built-in providers offer the models their APIs serve now. Only a list the user never
-- changed is replaced (exactly the one 0003 wrote, with its default): a list or default someone
-- edited stays as it is.
UPDATE providers SET models = '["gpt-5-mini","gpt-5","gpt-4.1"]', default_model = 'gpt-5-mini'
    WHERE id = 'openai' AND builtin = 1
      AND models = '["gpt-4o-mini","gpt-4o","gpt-4.1"]' AND default_model IS 'gpt-4o-mini';
UPDATE providers SET models = '["claude-sonnet-4-6","claude-haiku-4-5","claude-opus-4-6"]', default_model = 'claude-sonnet-4-6'
    WHERE id = 'anthropic' AND builtin = 1
      AND models = '["claude-sonnet-4-5","claude-haiku-4-5","claude-opus-4-1"]' AND default_model IS 'claude-sonnet-4-5';
