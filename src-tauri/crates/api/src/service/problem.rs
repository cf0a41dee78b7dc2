//! The rules an input can break, as codes with parameters: the services name what is wrong,
//! the UI words it in the user's language, and [`english`] gives the fallback.

use serde::Serialize;
use ts_rs::TS;

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

/// One rule broken by one input field, named as the service's input names it (snake_case);
/// empty when the rule is about the input as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub code: IssueCode,
    pub params: IssueParams,
}

impl FieldError {
    pub fn new(field: &str, code: IssueCode) -> FieldError {
        FieldError { field: field.to_owned(), code, params: IssueParams::default() }
    }

    pub fn with(self, params: IssueParams) -> FieldError {
        FieldError { params, ..self }
    }

    /// The English wording, for logs and as the UI's fallback.
    pub fn message(&self) -> String {
        english(self.code, &self.params)
    }
}

/// The English fallback of an issue.
pub(crate) fn english(code: IssueCode, p: &IssueParams) -> String {
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
        IssueCode::NotAModel => "must be one of the provider's models".into(),
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
        IssueCode::CannotWrite => format!("could not be written: {}", p.reason.as_deref().unwrap_or("unknown error")),
        IssueCode::Invalid => p.reason.clone().unwrap_or_else(|| "is invalid".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_read_back_from_their_names() {
        for code in [IssueCode::Required, IssueCode::KeyHasSpaces, IssueCode::TooManyBuckets, IssueCode::Invalid] {
            assert_eq!(IssueCode::parse(&code.name()), code, "{code:?} round-trips");
        }
        assert_eq!(IssueCode::KeyHasSpaces.name(), "key_has_spaces", "names are snake_case");
        assert_eq!(IssueCode::parse("no such rule"), IssueCode::Invalid, "unknown names are `invalid`");
    }
}
