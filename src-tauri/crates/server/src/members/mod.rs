//! The server's side of its members: its config file's `[[members]]` and the `members` command
//! line. The book that serves them (their limits and spend) is the app's too:
//! [`keypool_api::service::MemberBook`].

pub mod cli;
pub mod config;
