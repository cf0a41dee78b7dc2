//! The IPC layer, end to end below Tauri: JSON in, JSON out, a real SQLite file underneath.

mod agent_tokens;
mod agents;
mod alerts;
mod app_status;
mod attachments;
mod balances;
mod bulk_keys;
mod chat;
mod conversation;
mod crash;
mod gemini;
mod hostile;
mod keychain;
mod leaks;
mod limits;
mod llm_config;
mod load;
mod local_api;
mod providers;
mod routes;
mod secrets_in_logs;
mod support;
mod team;
mod transcripts;
mod usage;
