//! The arguments of the `localApi:*` commands.

use garde::Validate;
use serde::Deserialize;
use ts_rs::TS;

use super::CommandArgs;

/// Turns the local API on or off; `port` (1024–65535) changes where it listens.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct ConfigureLocalApiArgs {
    #[garde(skip)]
    pub enabled: bool,
    #[serde(default)]
    #[garde(inner(range(min = 1024, max = 65535)))]
    pub port: Option<u16>,
}

impl CommandArgs for ConfigureLocalApiArgs {}
