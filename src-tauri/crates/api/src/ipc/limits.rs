//! The bounds of the commands' arguments, each named once. The arguments' garde rules read them
//! here; the UI reads the same values as `LIMITS` in the generated bindings, so a form can say
//! what is wrong before a round trip (the backend stays the authority).

use serde::Serialize;

use crate::service::{DEFAULT_PORT, MAX_WAIT_LIMIT_SECONDS};

/// At most this many characters.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Text {
    pub max_chars: usize,
}

/// At most this many bytes (UTF-8): for what the pool and the ledger keep as given.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bytes {
    pub max_bytes: usize,
}

/// At most this many items.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Items {
    pub max_items: usize,
}

/// From `min` to `max`, both included.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Range<T> {
    pub min: T,
    pub max: T,
}

/// From `min` to `max`, both included, and `default` when none is given.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Defaulted<T> {
    pub min: T,
    pub max: T,
    pub default: T,
}

/// Every bound, by what it bounds.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// An API key or a `$NAME` reference: real keys are far shorter, this only stops pasted
    /// garbage.
    pub api_key: Text,
    /// A key's label.
    pub key_label: Text,
    /// A text (a paste, a file's content) to import keys from: 10 000 keys take about 2 MB.
    pub import_text: Bytes,
    /// The keys one bulk command acts on.
    pub bulk_ids: Items,
    /// A key's quota group (a Google Cloud project's id, an OpenAI organization's), as the
    /// store keeps it.
    pub quota_group: Text,
    /// A key's weight in the rotation.
    pub weight: Defaulted<u32>,
    /// The user's limit of a key's requests per minute, for providers that announce none.
    pub rpm_limit: Range<u32>,
    /// The user's limit of a key's requests at once.
    pub max_concurrent: Range<u32>,
    /// A provider's name.
    pub provider_name: Text,
    /// The models a provider lists.
    pub models: Items,
    /// A model's name: one of a provider's models, its default, a chat's, a priced one. In
    /// bytes, as the local API bounds it: the pool keeps a budget per model.
    pub model_name: Bytes,
    /// An id a command names (a key's, a provider's, a chat's: a session of the pool).
    pub id: Bytes,
    /// A chat's title.
    pub chat_title: Text,
    /// A system prompt: a provider's default, a chat's.
    pub system_prompt: Text,
    /// A message sent in a chat.
    pub message: Text,
    /// The attachments of one message.
    pub attachments: Items,
    /// An attached image.
    pub image_file: Bytes,
    /// An attached text file.
    pub text_file: Bytes,
    /// An attachment's file name.
    pub attachment_name: Text,
    /// An attached file as `chat:attach` takes it (base64 of the largest image).
    pub attachment_data: Bytes,
    /// What a chat search looks for.
    pub search_query: Text,
    /// How long a reply may wait for a key to free up, in seconds.
    pub max_wait_seconds: Range<u32>,
    /// How long a chat keeps its key without a message, in minutes.
    pub binding_idle_minutes: Range<u32>,
    /// How long usage history is kept, in days.
    pub usage_retention_days: Range<u32>,
    /// A price, in US dollars per million tokens.
    pub price: Range<f64>,
    /// The buckets of one usage series.
    pub series_buckets: Items,
    /// A proxy's address.
    pub proxy_url: Text,
    /// The local API's port: no privileged ports.
    pub port: Defaulted<u16>,
    /// The team's Redis URL.
    pub redis_url: Text,
    /// A team's name (the team's own rule: 1 to 64 of `A-Z a-z 0-9 . _ -`).
    pub team_name: Text,
    /// The local API's routes (Settings → Local API): first match wins, so a few do.
    pub routes: Items,
    /// A desktop notification's title and body.
    pub notification_title: Text,
    pub notification_body: Text,
    /// A named token's name (a member's rule: 1 to 64 of `A-Z a-z 0-9 . _ - @`).
    pub token_name: Text,
    /// A named token's budget: dollars, and tokens, per period.
    pub token_budget_usd: Range<f64>,
    pub token_budget_tokens: Range<u64>,
    /// A named token's rates, per minute, and the requests it may have in flight.
    pub token_requests_per_minute: Range<u32>,
    pub token_tokens_per_minute: Range<u64>,
    pub token_in_flight: Range<u32>,
    /// The model globs a named token may ask for.
    pub token_models: Items,
}

pub const LIMITS: Limits = Limits {
    api_key: Text { max_chars: 4096 },
    key_label: Text { max_chars: 100 },
    import_text: Bytes { max_bytes: 16 * 1024 * 1024 },
    bulk_ids: Items { max_items: 100_000 },
    quota_group: Text { max_chars: 64 },
    weight: Defaulted { min: 1, max: 100, default: 1 },
    rpm_limit: Range { min: 1, max: 100_000 },
    max_concurrent: Range { min: 1, max: 1_000 },
    provider_name: Text { max_chars: 60 },
    models: Items { max_items: 100 },
    model_name: Bytes { max_bytes: keypool_gateway::MAX_MODEL_BYTES },
    id: Bytes { max_bytes: keypool_gateway::MAX_SESSION_BYTES },
    chat_title: Text { max_chars: 200 },
    system_prompt: Text { max_chars: 50_000 },
    message: Text { max_chars: 200_000 },
    attachments: Items { max_items: crate::service::MAX_ATTACHMENTS },
    image_file: Bytes { max_bytes: crate::service::MAX_IMAGE_BYTES },
    text_file: Bytes { max_bytes: crate::service::MAX_TEXT_BYTES },
    attachment_name: Text { max_chars: 255 },
    // Base64 of the largest image.
    attachment_data: Bytes { max_bytes: crate::service::MAX_IMAGE_BYTES.div_ceil(3) * 4 },
    search_query: Text { max_chars: 200 },
    max_wait_seconds: Range { min: 0, max: MAX_WAIT_LIMIT_SECONDS },
    binding_idle_minutes: Range { min: 1, max: 1_440 },
    usage_retention_days: Range { min: 1, max: 3_650 },
    price: Range { min: 0.0, max: 100_000.0 },
    series_buckets: Items { max_items: 10_000 },
    proxy_url: Text { max_chars: 2048 },
    port: Defaulted { min: 1024, max: 65535, default: DEFAULT_PORT },
    redis_url: Text { max_chars: 2048 },
    team_name: Text { max_chars: 64 },
    token_name: Text { max_chars: 64 },
    token_budget_usd: Range { min: 0.0, max: 1_000_000.0 },
    token_budget_tokens: Range { min: 0, max: 1_000_000_000_000 },
    token_requests_per_minute: Range { min: 1, max: 1_000_000 },
    token_tokens_per_minute: Range { min: 1, max: 1_000_000_000_000 },
    token_in_flight: Range { min: 1, max: 10_000 },
    token_models: Items { max_items: 50 },
    notification_title: Text { max_chars: 200 },
    notification_body: Text { max_chars: 1_000 },
    routes: Items { max_items: 100 },
};

/// `LIMITS` as the TypeScript bindings declare it: a constant object, one bound a line in the
/// order declared here, its values literal types.
pub(super) fn typescript() -> String {
    // Compact JSON keeps the fields' order. Every value is a number, so the only strings are
    // names, which TypeScript takes unquoted.
    let json = serde_json::to_string(&LIMITS).expect("the limits serialize");
    let mut object = String::new();
    let mut depth = 0;
    for c in json.chars() {
        match c {
            '{' => {
                depth += 1;
                object.push_str(if depth == 1 { "{\n  " } else { "{ " });
            }
            '}' => {
                depth -= 1;
                object.push_str(if depth == 0 { ",\n}" } else { " }" });
            }
            ',' => object.push_str(if depth == 1 { ",\n  " } else { ", " }),
            ':' => object.push_str(": "),
            '"' => {}
            c => object.push(c),
        }
    }
    format!(
        "/**\n * The bounds of the commands' arguments (src-tauri/crates/api/src/ipc/limits.rs).\n */\n\
         export const LIMITS = {object} as const;\n"
    )
}
