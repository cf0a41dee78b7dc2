//! What is wrong with an argument, as a code with parameters the UI words in the user's
//! language; the English `message` is only a fallback.
//!
//! Rules (garde's built-in ones through [`Coded`], ours directly) say what failed as
//! `code` or `code:name=value,...`; [`Issue::of_rule`] reads that back.

use std::borrow::Cow;
use std::fmt::Display;

use garde::i18n::{I18n, InvalidCreditCard, InvalidEmail, InvalidPhoneNumber, InvalidUrl, IpKind};
use serde::Serialize;
use ts_rs::TS;

use crate::service::{english, FieldError};
pub use crate::service::{IssueCode, IssueParams};

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
        Issue::new(camel_case_path(&error.field), error.code, error.params)
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
}
