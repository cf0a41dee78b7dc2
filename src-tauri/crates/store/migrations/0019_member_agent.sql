-- The coding agent a named token of the app's local API was made for (`claude-code`, `codex`,
-- `gemini-cli`) when Connect made it: Disconnect revokes it, and the token list names its agent.
-- NULL for a token made by hand, and for a server's members.
ALTER TABLE members ADD COLUMN agent TEXT;
