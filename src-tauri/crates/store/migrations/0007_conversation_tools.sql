-- Conversation tools: a system prompt per chat, a default per provider; a failed reply keeps
-- its error as structured JSON (a code with parameters) for the UI to word in any language.
ALTER TABLE chats ADD COLUMN system_prompt TEXT;
ALTER TABLE providers ADD COLUMN system_prompt TEXT;
ALTER TABLE messages ADD COLUMN error_details TEXT;
