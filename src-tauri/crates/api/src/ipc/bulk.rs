//! `llmConfig:*` of many keys at once: importing a paste or a file (preview, start, cancel,
//! with `llmConfig:keyImportProgress` events in between), and changing, deleting, testing and
//! exporting a selection. The secrets of an import stay in the backend under its `importId`:
//! nothing here carries one back, only masked previews and counts.

use garde::Validate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::CommandArgs;
use super::error::IpcError;
use super::keys::{KeyList, KeyTestResult};
use super::limits::LIMITS;
use super::rules::{not_blank, trimmed_or_none};
use super::usage::ExportResult;
use crate::service::{BulkPatch, ImportOptions, ImportPreview, ImportProgress, KeyReading, Written};
use crate::AppContext;

type Result<T, E = IpcError> = std::result::Result<T, E>;

/// A text to import keys from: a paste, or the content of a `.txt`, `.csv` or `.json` file.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct PreviewKeyImportArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub provider_id: String,
    /// At most `LIMITS.importText` bytes.
    #[garde(length(bytes, max = LIMITS.import_text.max_bytes))]
    pub text: String,
    /// `shapes` when absent: only keys of the shapes of the provider's kind. `one_per_line`
    /// takes each line's longest key-like token, whatever it is: only when the user chose it.
    #[serde(default)]
    #[garde(skip)]
    pub reading: Option<KeyReading>,
}

impl CommandArgs for PreviewKeyImportArgs {}

/// A key an import would add, by its position among the keys the text gives (the same in every
/// preview of one text read one way): only its masked preview.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportKeyPreview {
    pub index: usize,
    /// As `ApiKey.apiKeyPreview`: `sk-…9f3a`.
    pub preview: String,
}

/// What a text holds, before anything is saved. Start it with `llmConfig:startKeyImport`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct KeyImportPreview {
    pub import_id: String,
    /// Every key found, duplicates included.
    pub found: usize,
    /// The keys that would be added (new to the paste and to the pool).
    pub new: Vec<ImportKeyPreview>,
    pub duplicates_in_paste: usize,
    pub duplicates_in_pool: usize,
    /// Line numbers (1-based) that seem to hold a key but gave none.
    pub unrecognised_lines: Vec<usize>,
}

impl From<ImportPreview> for KeyImportPreview {
    fn from(p: ImportPreview) -> Self {
        KeyImportPreview {
            import_id: p.import_id,
            found: p.found,
            new: p.new.into_iter().map(|(index, preview)| ImportKeyPreview { index, preview }).collect(),
            duplicates_in_paste: p.duplicates_in_paste,
            duplicates_in_pool: p.duplicates_in_pool,
            unrecognised_lines: p.unrecognised_lines,
        }
    }
}

/// How to import a previewed text.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct StartKeyImportArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub import_id: String,
    /// Within `LIMITS.weight`, its default when absent.
    #[serde(default)]
    #[garde(range(min = LIMITS.weight.min, max = LIMITS.weight.max))]
    pub weight: Option<u32>,
    /// Labels become `"{labelPrefix} #1"`, `#2`, …; absent or blank: no labels. Short enough
    /// for the number to fit `LIMITS.keyLabel`.
    #[serde(default)]
    #[garde(length(chars, max = LIMITS.key_label.max_chars - 8))]
    pub label_prefix: Option<String>,
    /// At most `LIMITS.quotaGroup`; absent or blank: each key a group of its own.
    #[serde(default)]
    #[garde(length(chars, max = LIMITS.quota_group.max_chars))]
    pub quota_group: Option<String>,
    /// Check each key with the provider's model list first (the UI's default: on).
    #[garde(skip)]
    pub validate: bool,
    /// Also save the keys validation rejected, disabled with their reason.
    #[garde(skip)]
    pub keep_rejected_disabled: bool,
    /// The `index` of each key of the preview the user left out: never sent, never saved.
    #[serde(default)]
    #[garde(length(max = LIMITS.bulk_ids.max_items))]
    pub left_out: Option<Vec<usize>>,
}

impl CommandArgs for StartKeyImportArgs {}

impl From<&StartKeyImportArgs> for ImportOptions {
    fn from(a: &StartKeyImportArgs) -> Self {
        ImportOptions {
            weight: a.weight.unwrap_or(LIMITS.weight.default),
            label_prefix: trimmed_or_none(a.label_prefix.clone()),
            quota_group: trimmed_or_none(a.quota_group.clone()),
            validate: a.validate,
            keep_rejected_disabled: a.keep_rejected_disabled,
            left_out: a.left_out.iter().flatten().copied().collect(),
        }
    }
}

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImportIdArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub import_id: String,
}

impl CommandArgs for ImportIdArgs {}

/// Keys of one provider, each once.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KeyIdsArgs {
    #[garde(length(min = 1, max = LIMITS.bulk_ids.max_items), inner(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank)))]
    pub ids: Vec<String>,
}

impl CommandArgs for KeyIdsArgs {}

/// What to set on every key named; at least one field.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct UpdateApiKeysArgs {
    #[garde(length(min = 1, max = LIMITS.bulk_ids.max_items), inner(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank)))]
    pub ids: Vec<String>,
    #[serde(default)]
    #[garde(skip)]
    pub enabled: Option<bool>,
    #[serde(default)]
    #[garde(range(min = LIMITS.weight.min, max = LIMITS.weight.max))]
    pub weight: Option<u32>,
    /// An empty (or blank) group puts each key in a group of its own (no argument takes `null`).
    #[serde(default)]
    #[garde(length(chars, max = LIMITS.quota_group.max_chars))]
    pub quota_group: Option<String>,
}

impl CommandArgs for UpdateApiKeysArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        if self.enabled.is_none() && self.weight.is_none() && self.quota_group.is_none() {
            return Err(IpcError::nothing_to_change(&["enabled", "weight", "quotaGroup"]));
        }
        Ok(())
    }
}

impl From<&UpdateApiKeysArgs> for BulkPatch {
    fn from(a: &UpdateApiKeysArgs) -> Self {
        BulkPatch {
            enabled: a.enabled,
            weight: a.weight,
            quota_group: a.quota_group.clone().map(|g| trimmed_or_none(Some(g))),
        }
    }
}

/// What deleting keys answers.
#[derive(Debug, Clone, Serialize, TS)]
pub struct DeletedKeys {
    pub deleted: usize,
}

/// The keys to export, of one provider.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExportApiKeysArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub provider_id: String,
    #[garde(length(min = 1, max = LIMITS.bulk_ids.max_items), inner(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank)))]
    pub ids: Vec<String>,
    /// The keys' values too (a `key` column): behind the UI's confirmation.
    #[garde(skip)]
    pub full: bool,
}

impl CommandArgs for ExportApiKeysArgs {}

/// Where an export of keys went (`path` null: the user cancelled the dialog) and how many keys.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ExportedKeys {
    pub path: Option<String>,
    pub count: usize,
}

impl From<ExportResult> for ExportedKeys {
    fn from(e: ExportResult) -> Self {
        ExportedKeys { path: e.path, count: e.rows }
    }
}

pub(super) fn preview_import(ctx: &AppContext, args: PreviewKeyImportArgs) -> Result<KeyImportPreview> {
    Ok(ctx.bulk_keys()?.preview(&args.provider_id, &args.text, args.reading.unwrap_or_default())?.into())
}

pub(super) async fn start_import(ctx: &AppContext, args: StartKeyImportArgs) -> Result<ImportProgress> {
    Ok(ctx.bulk_keys()?.start(&args.import_id, (&args).into())?)
}

pub(super) async fn cancel_import(ctx: &AppContext, args: ImportIdArgs) -> Result<ImportProgress> {
    Ok(ctx.bulk_keys()?.cancel(&args.import_id).await?)
}

pub(super) fn update(ctx: &AppContext, args: UpdateApiKeysArgs) -> Result<Written<KeyList>> {
    Ok(ctx.bulk_keys()?.update(&args.ids, (&args).into())?.map(|keys| KeyList { keys }))
}

pub(super) fn delete(ctx: &AppContext, args: KeyIdsArgs) -> Result<Written<DeletedKeys>> {
    Ok(ctx.bulk_keys()?.delete(&args.ids)?.map(|deleted| DeletedKeys { deleted }))
}

pub(super) async fn test(ctx: &AppContext, args: KeyIdsArgs) -> Result<Vec<KeyTestResult>> {
    let results = ctx.bulk_keys()?.test(&args.ids).await?;
    results.into_iter().map(|r| Ok(KeyTestResult::from(r?))).collect()
}

pub(super) async fn export(ctx: &AppContext, args: ExportApiKeysArgs) -> Result<ExportedKeys> {
    let written = ctx.bulk_keys()?.export(&args.provider_id, &args.ids, args.full).await?;
    Ok(ExportedKeys::from(ExportResult::from(written)))
}
