-- Models per provider, and chats with their messages.
ALTER TABLE providers ADD COLUMN models TEXT NOT NULL DEFAULT '[]';  -- JSON array of model ids
ALTER TABLE providers ADD COLUMN default_model TEXT;

UPDATE providers SET models = '["gpt-4o-mini","gpt-4o","gpt-4.1"]', default_model = 'gpt-4o-mini' WHERE id = 'openai';
UPDATE providers SET models = '["claude-sonnet-4-5","claude-haiku-4-5","claude-opus-4-1"]', default_model = 'claude-sonnet-4-5' WHERE id = 'anthropic';
UPDATE providers SET models = '["llama3.2"]', default_model = 'llama3.2' WHERE id = 'local';

-- A chat outlives its provider: deleting the provider keeps the conversation.
CREATE TABLE chats (
    id          TEXT PRIMARY KEY NOT NULL,
    title       TEXT NOT NULL,
    provider_id TEXT REFERENCES providers (id) ON DELETE SET NULL,
    model       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE messages (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    chat_id    TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content    TEXT NOT NULL,
    -- complete | stopped (by the user) | error (see error)
    status     TEXT NOT NULL DEFAULT 'complete' CHECK (status IN ('complete', 'stopped', 'error')),
    error      TEXT,
    error_code TEXT,
    -- Which pool key answered (its label or masked preview), for assistant messages.
    key_label  TEXT,
    created_at INTEGER NOT NULL
);

CREATE INDEX messages_by_chat ON messages (chat_id, seq);
