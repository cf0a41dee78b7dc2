//! The provider kinds, each one row of [`KINDS`]: the wire format it speaks, where it lives by
//! default, how its keys look and how a key is verified, and whether its keys share one quota.
//!
//! Everything that differs between kinds is read from the row or from the row's [`Wire`]: the
//! failover loop, the relay, the ledger and the local API never match on a kind. The SQL check
//! on `providers.kind`, the TypeScript union and the provider form's options follow the table
//! (generated, or held to it by a test), so a new kind is a variant and a row.

use keypool::KeyShape;
use serde::{Deserialize, Serialize};

use crate::balance::{BalanceDialect, BalanceRead, ReadAt, ReadAuth};
use crate::plan::{WindowDialect, WindowRead};
use crate::wire::{Wire, WireFormat};

/// Which kind of service a provider is; each kind is one row of keypool-llm's kind table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI's Chat Completions API, and everything compatible with it (local servers, gateways).
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
    /// Google Gemini's native API (`generateContent`); the base URL is the host root.
    Gemini,
    /// OpenRouter: OpenAI's wire format, keys checked (and their credit read) at `GET key`.
    Openrouter,
    /// DeepSeek: OpenAI's wire format; one account's keys share its limits; its balance read.
    Deepseek,
    /// Moonshot (Kimi's API platform): OpenAI's wire format; its balance read.
    Moonshot,
    /// SiliconFlow: OpenAI's wire format; its balance read.
    Siliconflow,
    /// Groq: OpenAI's wire format; limits per organisation.
    Groq,
    /// xAI: OpenAI's wire format; limits per team.
    Xai,
    /// Z.ai's (Zhipu's) GLM Coding Plan on its Anthropic-compatible endpoint: windows of 5 hours
    /// and a week or a month, read at its monitor.
    Zai,
    /// MiniMax's Coding Plan on its Anthropic-compatible endpoint: a 5-hour window, read.
    Minimax,
    /// Kimi Code (Moonshot's coding plan) on its Anthropic-compatible endpoint: its windows known
    /// only from the refusals that name their reset.
    Kimi,
    /// Mistral: OpenAI's wire format; limits per workspace.
    Mistral,
    /// Together AI: OpenAI's wire format.
    Together,
    /// Fireworks AI: OpenAI's wire format.
    Fireworks,
    /// Ollama on this machine, on its Anthropic-compatible API; no key.
    Ollama,
    /// LM Studio on this machine, on its OpenAI-compatible API; no key.
    Lmstudio,
    /// Azure OpenAI's v1 API (`https://RESOURCE.openai.azure.com/openai/v1`): OpenAI's wire, the
    /// resource's key as a bearer, deployments as models; one resource's keys share its limits.
    Azure,
    /// Amazon Bedrock's OpenAI-compatible API (`https://bedrock-runtime.REGION.amazonaws.com/openai/v1`)
    /// with a Bedrock API key as a bearer; one account's keys share its limits in a region.
    Bedrock,
}

/// How a key is verified: the cheapest authenticated request that says whether the provider
/// knows the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// Listing models with the key (the wire's model list).
    ModelList,
    /// A request about the key itself, at `path` under the base URL, answering with the key's
    /// credit (OpenRouter's `GET /api/v1/key`: `data.limit`, `data.limit_remaining`, `data.usage`).
    KeyInfo { path: &'static str },
}

/// Whether a kind's keys count against one quota when the user named no quota group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaSharing {
    /// Each key has limits of its own (unless the user groups them).
    PerKey,
    /// The provider's keys share one account's limits (OpenRouter governs capacity per account).
    PerProvider,
}

/// One provider kind's facts.
#[derive(Debug)]
pub struct KindRow {
    pub kind: ProviderKind,
    /// The kind as stored and as it travels (`"openai"`).
    pub id: &'static str,
    /// The name people know it by.
    pub label: &'static str,
    pub wire: WireFormat,
    /// Where the service lives unless the user says otherwise.
    pub default_base_url: &'static str,
    /// How its keys look, for a bulk import.
    pub key_shapes: &'static [KeyShape],
    pub verification: Verification,
    pub quota_sharing: QuotaSharing,
    /// How a key's balance is read, where the provider tells it (prepaid accounts).
    pub balance: Option<BalanceRead>,
    /// How a key's plan windows are read, where the provider tells them (coding plans).
    pub windows: Option<WindowRead>,
    /// What its base URL must look like, beyond being a URL.
    pub base_url_rule: BaseUrlRule,
    /// When a key expires, where its keys say (a short-term Bedrock key).
    pub key_expiry: Option<fn(&str) -> Option<keypool::Timestamp>>,
}

/// What a kind's base URL must look like, beyond being a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseUrlRule {
    /// Anything the general rules take (https, or http to a local host).
    Any,
    /// `https://RESOURCE.openai.azure.com/openai/v1` (or `.cognitiveservices.azure.com`), the
    /// resource's name 2 to 64 lowercase letters, digits and hyphens.
    AzureResource,
    /// `https://bedrock-runtime.REGION.amazonaws.com/openai/v1`, the region such as `us-east-1`.
    BedrockRegion,
}

/// Why a base URL is not one its kind takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseUrlProblem {
    /// Not an Azure OpenAI resource's v1 address.
    AzureResource,
    /// Not a Bedrock runtime's OpenAI-compatible address in a region.
    BedrockRegion,
}

impl BaseUrlRule {
    /// Whether `base_url` is one this rule takes. A stand-in on this machine or a private
    /// network (a gateway in front of the cloud, a test's fake) is taken as it is.
    pub fn check(self, base_url: &str) -> Result<(), BaseUrlProblem> {
        if self == BaseUrlRule::Any || crate::net::is_local_url(base_url) {
            return Ok(());
        }
        let url = reqwest::Url::parse(base_url.trim()).ok();
        let host = url.as_ref().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default();
        // As written: a URL's host reads in lowercase, and `RESOURCE` is a placeholder, no name.
        let written = base_url.trim().split_once("://").and_then(|(_, rest)| rest.split(['/', '?', '#']).next());
        let host = if written == Some(host.as_str()) { host } else { String::new() };
        let https = url.as_ref().is_some_and(|u| u.scheme() == "https" && u.port().is_none());
        let path_is = |wanted: &str| url.as_ref().is_some_and(|u| u.path().trim_end_matches('/') == wanted);
        match self {
            BaseUrlRule::Any => Ok(()),
            BaseUrlRule::AzureResource => {
                let resource = host
                    .strip_suffix(".openai.azure.com")
                    .or_else(|| host.strip_suffix(".cognitiveservices.azure.com"));
                let named = resource.is_some_and(|name| {
                    (2..=64).contains(&name.len())
                        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                        && !name.starts_with('-')
                        && !name.ends_with('-')
                });
                (https && named && path_is("/openai/v1")).then_some(()).ok_or(BaseUrlProblem::AzureResource)
            }
            BaseUrlRule::BedrockRegion => {
                let region = host.strip_prefix("bedrock-runtime.").and_then(|rest| rest.strip_suffix(".amazonaws.com"));
                // `us-east-1`, `eu-central-2`, `us-gov-west-1`, `ap-southeast-3`.
                let parts: Vec<&str> = region.map(|r| r.split('-').collect()).unwrap_or_default();
                let regional = (3..=4).contains(&parts.len())
                    && parts[0].len() == 2
                    && parts[..parts.len() - 1]
                        .iter()
                        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase()))
                    && parts[parts.len() - 1].chars().all(|c| c.is_ascii_digit())
                    && !parts[parts.len() - 1].is_empty();
                (https && regional && path_is("/openai/v1")).then_some(()).ok_or(BaseUrlProblem::BedrockRegion)
            }
        }
    }
}

const OPENAI_KEY: KeyShape = KeyShape::prefixed("sk-", 20).except(&["sk-ant-", "sk-or-"]);
const ANTHROPIC_KEY: KeyShape = KeyShape::prefixed("sk-ant-", 16);
const OPENROUTER_KEY: KeyShape = KeyShape::prefixed("sk-or-", 17);
const GEMINI_KEY: KeyShape = KeyShape::exact("AIza", 39);
/// `sk-` and 32 hexadecimal digits.
const DEEPSEEK_KEY: KeyShape = KeyShape::exact("sk-", 35);
/// `sk-` and 48 letters and digits (Moonshot's and SiliconFlow's keys look alike).
const SK_48_KEY: KeyShape = KeyShape::exact("sk-", 51);
const GROQ_KEY: KeyShape = KeyShape::exact("gsk_", 56);
const XAI_KEY: KeyShape = KeyShape::prefixed("xai-", 20);
const KIMI_KEY: KeyShape = KeyShape::prefixed("sk-kimi-", 20);
const TOGETHER_KEY: KeyShape = KeyShape::prefixed("tgp_v1_", 20);
const FIREWORKS_KEY: KeyShape = KeyShape::prefixed("fw_", 16);

/// Every provider kind, in the order the UI offers them.
pub static KINDS: [KindRow; 19] = [
    KindRow {
        kind: ProviderKind::Openai,
        id: "openai",
        label: "OpenAI-compatible",
        wire: WireFormat::OpenAiChat,
        default_base_url: "https://api.openai.com/v1",
        key_shapes: &[OPENAI_KEY],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerKey,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Anthropic,
        id: "anthropic",
        label: "Anthropic",
        wire: WireFormat::AnthropicMessages,
        default_base_url: "https://api.anthropic.com",
        key_shapes: &[ANTHROPIC_KEY],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerKey,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Gemini,
        id: "gemini",
        label: "Google Gemini",
        wire: WireFormat::GeminiGenerate,
        default_base_url: "https://generativelanguage.googleapis.com",
        key_shapes: &[GEMINI_KEY],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerKey,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Openrouter,
        id: "openrouter",
        label: "OpenRouter",
        wire: WireFormat::OpenAiChat,
        default_base_url: "https://openrouter.ai/api/v1",
        key_shapes: &[OPENROUTER_KEY],
        // Its model list is public: only this request tells a revoked key.
        verification: Verification::KeyInfo { path: "key" },
        quota_sharing: QuotaSharing::PerProvider,
        balance: Some(BalanceRead { at: ReadAt::UnderBase("key"), dialect: BalanceDialect::OpenRouterKey }),
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Deepseek,
        id: "deepseek",
        label: "DeepSeek",
        wire: WireFormat::OpenAiChat,
        default_base_url: "https://api.deepseek.com",
        key_shapes: &[DEEPSEEK_KEY],
        verification: Verification::ModelList,
        // "regardless of which API key is used": its limits are the account's.
        quota_sharing: QuotaSharing::PerProvider,
        balance: Some(BalanceRead { at: ReadAt::AtRoot("/user/balance"), dialect: BalanceDialect::DeepSeek }),
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Moonshot,
        id: "moonshot",
        label: "Moonshot (Kimi)",
        wire: WireFormat::OpenAiChat,
        default_base_url: "https://api.moonshot.ai/v1",
        key_shapes: &[SK_48_KEY],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerKey,
        balance: Some(BalanceRead { at: ReadAt::UnderBase("users/me/balance"), dialect: BalanceDialect::Moonshot }),
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Siliconflow,
        id: "siliconflow",
        label: "SiliconFlow",
        wire: WireFormat::OpenAiChat,
        // The international API: the Chinese one (`api.siliconflow.cn`) no longer answers
        // balance reads with an API key.
        default_base_url: "https://api.siliconflow.com/v1",
        key_shapes: &[SK_48_KEY],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerKey,
        balance: Some(BalanceRead { at: ReadAt::UnderBase("user/info"), dialect: BalanceDialect::SiliconFlow }),
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Groq,
        id: "groq",
        label: "Groq",
        wire: WireFormat::OpenAiChat,
        default_base_url: "https://api.groq.com/openai/v1",
        key_shapes: &[GROQ_KEY],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerProvider,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Xai,
        id: "xai",
        label: "xAI",
        wire: WireFormat::OpenAiChat,
        default_base_url: "https://api.x.ai/v1",
        key_shapes: &[XAI_KEY],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerProvider,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Zai,
        id: "zai",
        label: "Z.ai GLM Coding Plan",
        wire: WireFormat::AnthropicMessages,
        // Zhipu's own, in China: https://open.bigmodel.cn/api/anthropic (the same monitor at its root).
        default_base_url: "https://api.z.ai/api/anthropic",
        // `<32 hex>.<16 letters and digits>`: no prefix to tell them by.
        key_shapes: &[],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerKey,
        balance: None,
        windows: Some(WindowRead {
            at: ReadAt::AtRoot("/api/monitor/usage/quota/limit"),
            auth: ReadAuth::Raw,
            dialect: WindowDialect::ZhipuQuota,
        }),
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Minimax,
        id: "minimax",
        label: "MiniMax Coding Plan",
        wire: WireFormat::AnthropicMessages,
        default_base_url: "https://api.minimax.io/anthropic",
        key_shapes: &[],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerKey,
        balance: None,
        windows: Some(WindowRead {
            at: ReadAt::AtRoot("/v1/api/openplatform/coding_plan/remains"),
            auth: ReadAuth::AsRequests,
            dialect: WindowDialect::MiniMaxRemains,
        }),
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Kimi,
        id: "kimi",
        label: "Kimi Code",
        wire: WireFormat::AnthropicMessages,
        default_base_url: "https://api.kimi.com/coding",
        key_shapes: &[KIMI_KEY],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerKey,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Mistral,
        id: "mistral",
        label: "Mistral",
        wire: WireFormat::OpenAiChat,
        // Its keys are 32 letters and digits: no prefix to tell them by.
        default_base_url: "https://api.mistral.ai/v1",
        key_shapes: &[],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerProvider,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Together,
        id: "together",
        label: "Together AI",
        wire: WireFormat::OpenAiChat,
        default_base_url: "https://api.together.xyz/v1",
        key_shapes: &[TOGETHER_KEY],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerProvider,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Fireworks,
        id: "fireworks",
        label: "Fireworks AI",
        wire: WireFormat::OpenAiChat,
        default_base_url: "https://api.fireworks.ai/inference/v1",
        key_shapes: &[FIREWORKS_KEY],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerProvider,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Ollama,
        id: "ollama",
        label: "Ollama",
        wire: WireFormat::AnthropicMessages,
        // Its Anthropic-compatible API; the built-in Local is its OpenAI-compatible one.
        default_base_url: "http://127.0.0.1:11434",
        key_shapes: &[],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerKey,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Lmstudio,
        id: "lmstudio",
        label: "LM Studio",
        wire: WireFormat::OpenAiChat,
        default_base_url: "http://127.0.0.1:1234/v1",
        key_shapes: &[],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerKey,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::Any,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Azure,
        id: "azure",
        label: "Azure OpenAI",
        wire: WireFormat::OpenAiChat,
        // RESOURCE is the user's own: the dialog fills this in for them to replace.
        default_base_url: "https://RESOURCE.openai.azure.com/openai/v1",
        key_shapes: &[],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerProvider,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::AzureResource,
        key_expiry: None,
    },
    KindRow {
        kind: ProviderKind::Bedrock,
        id: "bedrock",
        label: "Amazon Bedrock",
        wire: WireFormat::OpenAiChat,
        default_base_url: "https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1",
        // `bedrock-api-key-…` (short-term) and `ABSK…` (long-term) hold standard base64 (`+/=`),
        // which no key shape takes: an import takes each line's token.
        key_shapes: &[],
        verification: Verification::ModelList,
        quota_sharing: QuotaSharing::PerProvider,
        balance: None,
        windows: None,
        base_url_rule: BaseUrlRule::BedrockRegion,
        key_expiry: Some(crate::expiry::bedrock_key_expiry),
    },
];

impl ProviderKind {
    /// This kind's row.
    pub fn row(self) -> &'static KindRow {
        KINDS.iter().find(|row| row.kind == self).expect("every kind has a row")
    }

    /// The kind stored as `id`, if there is one.
    pub fn parse(id: &str) -> Option<Self> {
        KINDS.iter().find(|row| row.id == id).map(|row| row.kind)
    }

    pub fn as_str(self) -> &'static str {
        self.row().id
    }

    /// How this kind's requests and answers are written and read.
    pub fn wire(self) -> &'static dyn Wire {
        self.row().wire.wire()
    }

    /// Every kind, in the table's order.
    pub fn all() -> impl Iterator<Item = ProviderKind> {
        KINDS.iter().map(|row| row.kind)
    }
}

/// The quota group a key of `row`'s kind with no group of its own is in: none (a group of its
/// own) where each key has its own limits; where the kind's keys share the account's, the group
/// of the provider's ungrouped keys, [`ACCOUNT_GROUP`].
impl KindRow {
    pub fn quota_group_of(&self, named: Option<String>) -> Option<String> {
        let named = named.filter(|group| !group.trim().is_empty());
        match self.quota_sharing {
            QuotaSharing::PerKey => named,
            QuotaSharing::PerProvider => named.or_else(|| Some(ACCOUNT_GROUP.to_owned())),
        }
    }
}

/// The quota group of a provider's ungrouped keys where they share one account's limits.
pub const ACCOUNT_GROUP: &str = "account";

/// The keys of every kind's shape: what a text holds that some provider would take as a key.
pub fn every_key_shape() -> Vec<KeyShape> {
    KINDS.iter().flat_map(|row| row.key_shapes.iter().copied()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_one_row_and_round_trips_as_text() {
        for row in &KINDS {
            assert_eq!(row.kind.row().id, row.id, "{:?} finds its own row", row.kind);
            assert_eq!(ProviderKind::parse(row.id), Some(row.kind), "{} parses back", row.id);
            let json = serde_json::to_string(&row.kind).unwrap();
            assert_eq!(json, format!("\"{}\"", row.id), "serde spells a kind as its row's id");
            assert_eq!(row.wire.wire().format(), row.wire, "a row's wire is the wire it names");
        }
        assert_eq!(ProviderKind::parse("mystery"), None, "no fallback for an unknown kind");
    }

    #[test]
    fn openrouter_keys_share_one_quota_unless_grouped_and_others_keep_their_own() {
        let openrouter = ProviderKind::Openrouter.row();
        assert_eq!(openrouter.quota_group_of(None).as_deref(), Some(ACCOUNT_GROUP), "one account's keys, one quota");
        assert_eq!(openrouter.quota_group_of(Some(" ".into())).as_deref(), Some(ACCOUNT_GROUP), "blank is none");
        assert_eq!(openrouter.quota_group_of(Some("team-b".into())).as_deref(), Some("team-b"), "a named group stays");
        for kind in [ProviderKind::Openai, ProviderKind::Anthropic, ProviderKind::Gemini, ProviderKind::Moonshot] {
            assert_eq!(kind.row().quota_group_of(None), None, "{kind:?}: each key its own limits");
        }
        for kind in [ProviderKind::Deepseek, ProviderKind::Groq, ProviderKind::Xai] {
            let row = kind.row();
            assert_eq!(row.quota_group_of(None).as_deref(), Some(ACCOUNT_GROUP), "{kind:?}: limits per account");
        }
    }

    #[test]
    fn each_kind_takes_its_own_keys_and_no_other_vendor_s() {
        let keys = [
            (ProviderKind::Openai, "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx_yz-0123456789"),
            (ProviderKind::Anthropic, "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-AAAA"),
            (ProviderKind::Openrouter, "sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
            (ProviderKind::Gemini, "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
            (ProviderKind::Deepseek, "sk-0123456789abcdef0123456789abcdef"),
            (ProviderKind::Moonshot, "sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl"),
            (ProviderKind::Together, "tgp_v1_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
            (ProviderKind::Fireworks, "fw_AbCdEfGhIjKlMnOpQrStUvWx"),
            (ProviderKind::Kimi, "sk-kimi-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
            (ProviderKind::Groq, "gsk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOp"),
            (ProviderKind::Xai, "xai-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd"),
        ];
        // Keys that look alike: OpenAI-compatible is every `sk-` service's kind, and Moonshot's and
        // SiliconFlow's keys have one shape.
        let alike = |kind: ProviderKind, other: ProviderKind| {
            (other == ProviderKind::Openai
                && [ProviderKind::Deepseek, ProviderKind::Moonshot, ProviderKind::Kimi].contains(&kind))
                || (kind == ProviderKind::Moonshot && other == ProviderKind::Siliconflow)
        };
        for (kind, key) in keys {
            for other in ProviderKind::all() {
                let takes = other.row().key_shapes.iter().any(|shape| shape.matches(key));
                assert_eq!(takes, other == kind || alike(kind, other), "{other:?} takes a {kind:?} key: {takes}");
            }
        }
    }

    #[test]
    fn azure_and_bedrock_take_only_their_own_addresses() {
        let azure = ProviderKind::Azure.row().base_url_rule;
        for good in
            ["https://contoso.openai.azure.com/openai/v1", "https://my-res-2.cognitiveservices.azure.com/openai/v1/"]
        {
            assert_eq!(azure.check(good), Ok(()), "{good}");
        }
        for bad in [
            "https://RESOURCE.openai.azure.com/openai/v1",
            "https://contoso.openai.azure.com/openai/deployments/gpt",
            "http://contoso.openai.azure.com/openai/v1",
            "https://-x.openai.azure.com/openai/v1",
            "https://c.openai.azure.com/openai/v1",
            "https://contoso.openai.azure.com.evil.example/openai/v1",
            "https://contoso.openai.azure.com:8443/openai/v1",
        ] {
            assert_eq!(azure.check(bad), Err(BaseUrlProblem::AzureResource), "{bad}");
        }
        let bedrock = ProviderKind::Bedrock.row().base_url_rule;
        for good in [
            "https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1",
            "https://bedrock-runtime.us-gov-west-1.amazonaws.com/openai/v1",
            "https://bedrock-runtime.ap-southeast-3.amazonaws.com/openai/v1/",
        ] {
            assert_eq!(bedrock.check(good), Ok(()), "{good}");
        }
        for bad in [
            "https://bedrock-runtime.amazonaws.com/openai/v1",
            "https://bedrock-runtime.US-EAST-1.amazonaws.com/openai/v1",
            "https://bedrock-runtime.us-east.amazonaws.com/openai/v1",
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/x/invoke",
            "https://bedrock.us-east-1.amazonaws.com/openai/v1",
        ] {
            assert_eq!(bedrock.check(bad), Err(BaseUrlProblem::BedrockRegion), "{bad}");
        }
        for row in KINDS.iter().filter(|row| row.base_url_rule == BaseUrlRule::Any) {
            assert_eq!(row.base_url_rule.check("anything"), Ok(()), "{}", row.id);
        }
        assert!(azure.check(ProviderKind::Azure.row().default_base_url).is_err(), "the placeholder must be replaced");
        for local in ["http://127.0.0.1:4000/openai/v1", "http://10.0.0.7/v1"] {
            assert_eq!(
                (azure.check(local), bedrock.check(local)),
                (Ok(()), Ok(())),
                "a stand-in on this network: {local}"
            );
        }
        assert_eq!(bedrock.check(ProviderKind::Bedrock.row().default_base_url), Ok(()), "us-east-1 by default");
    }
}
