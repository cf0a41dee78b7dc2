//! The IPC layer, end to end below Tauri: JSON in, JSON out, a real SQLite file underneath.

mod app_status;
mod llm_config;
mod support;
