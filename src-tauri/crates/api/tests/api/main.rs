//! The IPC layer, end to end below Tauri: JSON in, JSON out, a real SQLite file underneath.

mod app_status;
mod chat;
mod llm_config;
mod providers;
mod support;
