-- Who asked, found fast: when a coding agent (its user agent's prefix: `claude-cli/`, `codex_`,
-- `GeminiCLI`) last called the local API, and the ledger's totals by source, read through
-- this index instead of every attempt kept.
CREATE INDEX usage_attempts_by_source ON usage_attempts (source, at);
