//! What is wrong with an argument, as a code with parameters the UI words in the user's
//! language; the English `message` is only a fallback.
//!
//! Rules (garde's built-in ones through [`Coded`], ours directly) say what failed as
//! `code` or `code:name=value,...`; [`Issue::of_rule`] reads that back. The rules the services
//! check themselves ([`Rule`]) become issues here too: the wire's codes are the transport's.

use std::borrow::Cow;
use std::fmt::Display;

use garde::i18n::{I18n, InvalidCreditCard, InvalidEmail, InvalidPhoneNumber, InvalidUrl, IpKind};
use serde::Serialize;
use ts_rs::TS;

use crate::service::{FieldError, Rule};

/// What is wrong with one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum IssueCode {
    /// A field that must be given is missing.
    Required,
    /// `null` where a value or nothing was expected (leave the field out instead).
    NotNull,
    /// A value of the wrong type (`expected`, `got`).
    WrongType,
    /// A field the command does not know.
    UnknownField,
    /// The arguments are not an object.
    NotAnObject,
    /// Empty or only spaces.
    Blank,
    /// Fewer than `min` characters (or items).
    TooShort,
    /// More than `max` characters (or items).
    TooLong,
    /// Below `min`.
    TooSmall,
    /// Above `max`.
    TooLarge,
    /// An API key with spaces or line breaks inside (one key at a time).
    KeyHasSpaces,
    /// `$` not followed by an environment variable name.
    BadEnvName,
    /// Not a URL.
    BadUrl,
    /// A scheme other than https (or http to a local host).
    NotHttps,
    /// Plain http to a host that is not this machine or a private network.
    HttpNotLocal,
    /// Plain http to a host on a local network, without `onMyNetwork: true`: the keys would
    /// travel to it unencrypted, which the user must choose.
    PlainHttpNeedsConsent,
    /// An Azure OpenAI base URL without a resource's name: `https://RESOURCE.openai.azure.com/openai/v1`.
    AzureResourceUrl,
    /// An Amazon Bedrock base URL without a region: `https://bedrock-runtime.REGION.amazonaws.com/openai/v1`.
    BedrockRegionUrl,
    /// A proxy address that cannot be used (`reason`).
    BadProxy,
    /// A URL without a host.
    NoHost,
    /// A default model that is not among the provider's models.
    NotAModel,
    /// The key ids of a reorder are not each of the provider's keys once (`count`: how many).
    IdsMismatch,
    /// An update that changes nothing.
    NothingToChange,
    /// The chat's provider was deleted: choose another.
    ProviderDeleted,
    /// There is no user message to answer.
    NothingToAnswer,
    /// The provider lists no models: give one.
    NoModels,
    /// `from` is not before `to`.
    RangeOrder,
    /// A range with too many buckets for a series (`max`).
    TooManyBuckets,
    /// A file could not be written (`reason`).
    CannotWrite,
    /// The base URL would move to another host while the provider holds keys (see `details`).
    HostChange,
    /// An attached file that is neither a PNG, JPEG, WebP or GIF image nor UTF-8 text.
    UnsupportedFile,
    /// An attached file over `max` bytes.
    FileTooLarge,
    /// An image that cannot be decoded, or is too large to (`reason`).
    ImageUnreadable,
    /// An image of `count` pixels, over the `max` it may have (decoding and scaling it would hold
    /// too much memory).
    ImageTooLarge,
    /// Another provider already has this name (any case).
    NameTaken,
    /// A Redis URL that is not `redis://host:port` or `rediss://host:port`.
    BadRedisUrl,
    /// A team name other than 1 to 64 of `A-Z a-z 0-9 . _ -`.
    BadTeamName,
    /// A team secret that is not 64 hex digits (`count`: how many characters it had).
    BadTeamSecret,
    /// A text to import keys from holds none.
    NoKeysFound,
    /// A bulk change names keys of more than one provider (or none).
    KeysOfSeveralProviders,
    /// A route's glob with characters other than a model's and `*` or `?`.
    BadGlob,
    /// A provider id that names no provider.
    UnknownProvider,
    /// Not the local API's token now.
    TokenMismatch,
    /// The local API's token is needed: no connected agent holds it.
    TokenRequired,
    /// The local API is off: turn it on first.
    LocalApiOff,
    /// A token's name other than 1 to 64 of `A-Z a-z 0-9 . _ - @`.
    BadTokenName,
    /// Another named token has this name (any case).
    TokenNameTaken,
    /// An expiry that is not ahead of now.
    ExpiryPassed,
    /// A key helper asked for an agent that cannot run one (only Claude Code can).
    NoKeyHelper,
    /// Folder trust turned off for an agent that has no such setting (only Gemini CLI has).
    NoFolderTrust,
    /// Any other problem; the message says which.
    Invalid,
}

impl IssueCode {
    /// The code as the wire spells it.
    pub fn name(self) -> String {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(name)) => name,
            _ => unreachable!("an IssueCode serializes to its name"),
        }
    }

    /// The code spelled `name`; unknown names are `invalid`.
    pub fn parse(name: &str) -> IssueCode {
        serde_json::from_value(serde_json::Value::String(name.to_owned())).unwrap_or(IssueCode::Invalid)
    }
}

/// The numbers and words an issue's wording needs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct IssueParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// What was expected (for `wrong_type`: `string`, `integer`, `boolean`, `list`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What came instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub got: Option<String>,
    /// The fields that could change (for `nothing_to_change`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<String>>,
    /// Why, in the system's words (for `cannot_write`, `invalid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One problem with one argument: `path` is camelCase as the UI sent it (e.g. `weight`), empty
/// for a problem with the arguments as a whole. The UI words `code` with `params`; `message` is
/// the English fallback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct Issue {
    pub path: String,
    pub code: IssueCode,
    #[serde(skip_serializing_if = "params_empty")]
    #[ts(optional)]
    pub params: Option<IssueParams>,
    pub message: String,
}

fn params_empty(params: &Option<IssueParams>) -> bool {
    params.as_ref().is_none_or(|p| *p == IssueParams::default())
}

impl Issue {
    pub fn new(path: impl Into<String>, code: IssueCode, params: IssueParams) -> Issue {
        let message = english(code, &params);
        let params = (params != IssueParams::default()).then_some(params);
        Issue { path: path.into(), code, params, message }
    }

    /// An issue from a rule's coded message (`code` or `code:name=value,...`); a message that is
    /// not coded is kept as the fallback of an `invalid` issue.
    pub fn of_rule(path: impl Into<String>, rule: &str) -> Issue {
        let (name, list) = rule.split_once(':').unwrap_or((rule, ""));
        let code = IssueCode::parse(name);
        if code == IssueCode::Invalid && name != "invalid" {
            return Issue { path: path.into(), code, params: None, message: rule.to_owned() };
        }
        let mut params = IssueParams::default();
        for pair in list.split(',').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "min" => params.min = value.parse().ok(),
                "max" => params.max = value.parse().ok(),
                "count" => params.count = value.parse().ok(),
                "expected" => params.expected = Some(value.to_owned()),
                "got" => params.got = Some(value.to_owned()),
                "fields" => params.fields = Some(value.split('+').map(str::to_owned).collect()),
                "reason" => params.reason = Some(value.to_owned()),
                _ => {}
            }
        }
        Issue::new(path, code, params)
    }
}

impl From<FieldError> for Issue {
    fn from(error: FieldError) -> Self {
        let none = IssueParams::default;
        let (code, params) = match error.rule {
            Rule::NotAModel => (IssueCode::NotAModel, none()),
            Rule::PlainHttpNeedsConsent => (IssueCode::PlainHttpNeedsConsent, none()),
            Rule::AzureResourceUrl => (IssueCode::AzureResourceUrl, none()),
            Rule::BedrockRegionUrl => (IssueCode::BedrockRegionUrl, none()),
            Rule::BadProxy { reason } => (IssueCode::BadProxy, IssueParams { reason: Some(reason), ..none() }),
            Rule::UnknownKind(kind) => {
                (IssueCode::Invalid, IssueParams { reason: Some(format!("unknown provider kind {kind}")), ..none() })
            }
            Rule::IdsMismatch { count } => {
                (IssueCode::IdsMismatch, IssueParams { count: i64::try_from(count).ok(), ..none() })
            }
            Rule::NothingToAnswer => (IssueCode::NothingToAnswer, none()),
            Rule::ProviderDeleted => (IssueCode::ProviderDeleted, none()),
            Rule::NoModels => (IssueCode::NoModels, none()),
            Rule::RangeOrder => (IssueCode::RangeOrder, none()),
            Rule::CannotWrite { reason } => (IssueCode::CannotWrite, IssueParams { reason: Some(reason), ..none() }),
            Rule::UnsupportedFile => (IssueCode::UnsupportedFile, none()),
            Rule::FileTooLarge { max } => {
                (IssueCode::FileTooLarge, IssueParams { max: i64::try_from(max).ok(), ..none() })
            }
            Rule::ImageTooLarge { pixels, max } => (
                IssueCode::ImageTooLarge,
                IssueParams { count: i64::try_from(pixels).ok(), max: i64::try_from(max).ok(), ..none() },
            ),
            Rule::ImageUnreadable { reason } => {
                (IssueCode::ImageUnreadable, IssueParams { reason: Some(reason), ..none() })
            }
            Rule::TooManyAttachments { max } => {
                (IssueCode::TooLong, IssueParams { max: i64::try_from(max).ok(), ..none() })
            }
            Rule::NameTaken => (IssueCode::NameTaken, none()),
            Rule::BadRedisUrl => (IssueCode::BadRedisUrl, none()),
            Rule::BadTeamName => (IssueCode::BadTeamName, none()),
            Rule::BadTeamSecret { found } => {
                (IssueCode::BadTeamSecret, IssueParams { count: i64::try_from(found).ok(), ..none() })
            }
            Rule::TeamSecretRequired => (IssueCode::Required, none()),
            Rule::NoKeysFound => (IssueCode::NoKeysFound, none()),
            Rule::KeysOfSeveralProviders => (IssueCode::KeysOfSeveralProviders, none()),
            Rule::Blank => (IssueCode::Blank, none()),
            Rule::BadGlob => (IssueCode::BadGlob, none()),
            Rule::UnknownProvider => (IssueCode::UnknownProvider, none()),
            Rule::TokenMismatch => (IssueCode::TokenMismatch, none()),
            Rule::TokenRequired => (IssueCode::TokenRequired, none()),
            Rule::LocalApiOff => (IssueCode::LocalApiOff, none()),
            Rule::BadTokenName => (IssueCode::BadTokenName, none()),
            Rule::TokenNameTaken => (IssueCode::TokenNameTaken, none()),
            Rule::ExpiryPassed => (IssueCode::ExpiryPassed, none()),
            Rule::NoKeyHelper => (IssueCode::NoKeyHelper, none()),
            Rule::NoFolderTrust => (IssueCode::NoFolderTrust, none()),
        };
        Issue::new(camel_case_path(&error.field), code, params)
    }
}

/// A rule's coded message.
pub(crate) fn coded(code: IssueCode) -> String {
    code.name()
}

/// A rule's coded message with parameters.
pub(crate) fn coded_with(code: IssueCode, params: &[(&str, &dyn Display)]) -> String {
    let list: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{}:{}", code.name(), list.join(","))
}

/// garde's built-in rules, answering in codes.
pub(crate) struct Coded;

impl I18n for Coded {
    fn length_lower_than(&self, min: usize) -> Cow<'static, str> {
        if min == 1 {
            return coded(IssueCode::Blank).into();
        }
        coded_with(IssueCode::TooShort, &[("min", &min)]).into()
    }
    fn length_greater_than(&self, max: usize) -> Cow<'static, str> {
        coded_with(IssueCode::TooLong, &[("max", &max)]).into()
    }
    fn range_lower_than(&self, min: &dyn Display) -> Cow<'static, str> {
        coded_with(IssueCode::TooSmall, &[("min", &min)]).into()
    }
    fn range_greater_than(&self, max: &dyn Display) -> Cow<'static, str> {
        coded_with(IssueCode::TooLarge, &[("max", &max)]).into()
    }
    fn credit_card_invalid(&self, _: InvalidCreditCard) -> Cow<'static, str> {
        coded(IssueCode::Invalid).into()
    }
    fn pattern_no_match(&self, _: &dyn Display) -> Cow<'static, str> {
        coded(IssueCode::Invalid).into()
    }
    fn contains_missing(&self, _: &dyn Display) -> Cow<'static, str> {
        coded(IssueCode::Invalid).into()
    }
    fn url_invalid(&self, _: InvalidUrl) -> Cow<'static, str> {
        coded(IssueCode::BadUrl).into()
    }
    fn prefix_missing(&self, _: &dyn Display) -> Cow<'static, str> {
        coded(IssueCode::Invalid).into()
    }
    fn suffix_missing(&self, _: &dyn Display) -> Cow<'static, str> {
        coded(IssueCode::Invalid).into()
    }
    fn phone_number_invalid(&self, _: InvalidPhoneNumber) -> Cow<'static, str> {
        coded(IssueCode::Invalid).into()
    }
    fn ip_invalid(&self, _: IpKind) -> Cow<'static, str> {
        coded(IssueCode::Invalid).into()
    }
    fn matches_field_mismatch(&self, _: &dyn Display) -> Cow<'static, str> {
        coded(IssueCode::Invalid).into()
    }
    fn email_invalid(&self, _: InvalidEmail) -> Cow<'static, str> {
        coded(IssueCode::Invalid).into()
    }
    fn ascii_invalid(&self) -> Cow<'static, str> {
        coded(IssueCode::Invalid).into()
    }
    fn alphanumeric_invalid(&self) -> Cow<'static, str> {
        coded(IssueCode::Invalid).into()
    }
    fn required_not_set(&self) -> Cow<'static, str> {
        coded(IssueCode::Required).into()
    }
}

/// `provider_id` → `providerId`; `ids[2]` stays `ids[2]`.
pub(super) fn camel_case_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut upper = false;
    for c in path.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The English fallback of an issue.
fn english(code: IssueCode, p: &IssueParams) -> String {
    let n = |v: Option<i64>| v.map_or_else(String::new, |v| v.to_string());
    match code {
        IssueCode::Required => "is required".into(),
        IssueCode::NotNull => "must not be null (leave the field out)".into(),
        IssueCode::WrongType => format!(
            "must be {}, got {}",
            p.expected.as_deref().unwrap_or("another type"),
            p.got.as_deref().unwrap_or("another value")
        ),
        IssueCode::UnknownField => "is not an argument of this command".into(),
        IssueCode::NotAnObject => format!("arguments must be an object, got {}", p.got.as_deref().unwrap_or("something else")),
        IssueCode::Blank => "must not be empty".into(),
        IssueCode::TooShort => format!("must be at least {} characters long", n(p.min)),
        IssueCode::TooLong => format!("must be at most {} characters long", n(p.max)),
        IssueCode::TooSmall => format!("must be at least {}", n(p.min)),
        IssueCode::TooLarge => format!("must be at most {}", n(p.max)),
        IssueCode::KeyHasSpaces => "must not contain spaces or line breaks (add one key at a time)".into(),
        IssueCode::BadEnvName => {
            "after `$` give an environment variable name (letters, digits, `_`; e.g. $OPENAI_API_KEY)".into()
        }
        IssueCode::BadUrl => "must be a URL such as https://api.openai.com/v1".into(),
        IssueCode::NotHttps => "must be an https:// address".into(),
        IssueCode::HttpNotLocal => "plain http:// would send your API keys unencrypted over the internet: use https://, \
                                    or http:// only to this machine or a private network (e.g. http://127.0.0.1:11434/v1)"
            .into(),
        IssueCode::NoHost => "must name a host, such as https://api.openai.com/v1".into(),
        IssueCode::BadProxy => "must be a proxy address such as http://proxy.example:3128".into(),
        IssueCode::PlainHttpNeedsConsent => "plain http:// to another machine sends your API keys to it unencrypted: \
                                             confirm that the host is on your own network (onMyNetwork: true), or use https://"
            .into(),
        IssueCode::NotAModel => "must be one of the provider's models".into(),
        IssueCode::AzureResourceUrl => "must be your Azure OpenAI resource's address, https://RESOURCE.openai.azure.com/openai/v1, \
                                        RESOURCE its name (2 to 64 lowercase letters, digits or hyphens)"
            .into(),
        IssueCode::BedrockRegionUrl => "must be Amazon Bedrock's address in a region, \
                                        https://bedrock-runtime.REGION.amazonaws.com/openai/v1 (e.g. us-east-1)"
            .into(),
        IssueCode::IdsMismatch => format!("must list each of the provider's {} keys exactly once", n(p.count)),
        IssueCode::NothingToChange => match &p.fields {
            Some(fields) => format!("nothing to change: give at least one of {}", fields.join(", ")),
            None => "nothing to change".into(),
        },
        IssueCode::ProviderDeleted => "this chat's provider was deleted: choose another provider for it".into(),
        IssueCode::NothingToAnswer => "there is no message to answer: write one".into(),
        IssueCode::NoModels => "the provider lists no models: give one".into(),
        IssueCode::RangeOrder => "must be before `to`".into(),
        IssueCode::TooManyBuckets => {
            format!("the range holds more than {} buckets: choose larger buckets or a shorter range", n(p.max))
        }
        IssueCode::HostChange => "changing the host would send the provider's keys there: confirm the change".into(),
        IssueCode::NameTaken => "another provider already has this name: choose another".into(),
        IssueCode::NoKeysFound => "holds no API key".into(),
        IssueCode::KeysOfSeveralProviders => "must name keys of one provider".into(),
        IssueCode::BadGlob => "only `*` and `?` are wildcards; no spaces, brackets or braces".into(),
        IssueCode::UnknownProvider => "names no provider".into(),
        IssueCode::TokenMismatch => "is not the local API's token".into(),
        IssueCode::TokenRequired => "the local API's token is needed".into(),
        IssueCode::LocalApiOff => "the local API is off: turn it on first".into(),
        IssueCode::BadTokenName => "must be 1 to 64 letters, digits, dots, dashes, underscores or @".into(),
        IssueCode::TokenNameTaken => "another token has this name (in any case)".into(),
        IssueCode::ExpiryPassed => "the expiry must be ahead of now".into(),
        IssueCode::NoKeyHelper => "only Claude Code can read its key from a command".into(),
        IssueCode::NoFolderTrust => "only Gemini CLI has a folder trust setting".into(),
        IssueCode::CannotWrite => format!("could not be written: {}", p.reason.as_deref().unwrap_or("unknown error")),
        IssueCode::UnsupportedFile => "is neither a PNG, JPEG, WebP or GIF image nor a UTF-8 text file".into(),
        IssueCode::FileTooLarge => format!("is larger than {} bytes", p.max.unwrap_or_default()),
        IssueCode::ImageTooLarge => format!(
            "is an image of {} pixels; at most {} can be attached: scale it down first",
            p.count.unwrap_or_default(),
            p.max.unwrap_or_default()
        ),
        IssueCode::ImageUnreadable => {
            format!("is an image that cannot be read: {}", p.reason.as_deref().unwrap_or("unknown error"))
        }
        IssueCode::BadRedisUrl => "must be a Redis URL such as redis://127.0.0.1:6379 or rediss://host:6380".into(),
        IssueCode::BadTeamName => "must be 1 to 64 letters, digits, dots, dashes or underscores".into(),
        IssueCode::BadTeamSecret => {
            format!("must be 64 hex digits (0-9, a-f); this has {} characters", n(p.count))
        }
        IssueCode::Invalid => p.reason.clone().unwrap_or_else(|| "is invalid".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_camel_case() {
        assert_eq!(camel_case_path("provider_id"), "providerId", "snake_case fields map to camelCase");
        assert_eq!(camel_case_path("ids[2]"), "ids[2]", "indexes are kept");
    }

    #[test]
    fn coded_rule_messages_read_back_as_codes_with_params() {
        let issue = Issue::of_rule("weight", &coded_with(IssueCode::TooLarge, &[("max", &100)]));
        assert_eq!((issue.code, issue.params.as_ref().and_then(|p| p.max)), (IssueCode::TooLarge, Some(100)));
        assert_eq!(issue.message, "must be at most 100", "with an English fallback");
        let plain = Issue::of_rule("x", "some words");
        assert_eq!((plain.code, plain.message.as_str()), (IssueCode::Invalid, "some words"), "uncoded text is kept");
    }

    #[test]
    fn codes_read_back_from_their_names() {
        for code in [IssueCode::Required, IssueCode::KeyHasSpaces, IssueCode::TooManyBuckets, IssueCode::Invalid] {
            assert_eq!(IssueCode::parse(&code.name()), code, "{code:?} round-trips");
        }
        assert_eq!(IssueCode::KeyHasSpaces.name(), "key_has_spaces", "names are snake_case");
        assert_eq!(IssueCode::parse("no such rule"), IssueCode::Invalid, "unknown names are `invalid`");
    }
}
