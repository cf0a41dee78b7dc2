//! JSON settings files merged without reordering them: an agent's `settings.json` read into
//! values whose objects keep their keys in the file's order, a few keys set, and written back
//! as the agents write it (two spaces, a final line break). `serde_json::Value` would sort the
//! keys (its map is a `BTreeMap` unless a feature changes it for the whole workspace).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// A JSON value, its objects in the order written.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Object),
}

/// An object's members, in order.
pub(super) type Object = Vec<(String, Json)>;

/// Reads a settings file: a JSON object (a UTF-8 byte order mark, and a file holding only
/// spaces, read as an empty object). `Err`: why it is not one, as the parser says (a line and
/// a column, never the file's text).
pub(super) fn parse_object(bytes: &[u8]) -> Result<Object, String> {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Vec::new());
    }
    match serde_json::from_slice::<Json>(bytes).map_err(|e| e.to_string())? {
        Json::Object(object) => Ok(object),
        _ => Err("the file holds JSON, but not an object".to_owned()),
    }
}

/// An object as a settings file: two spaces of indentation, a line break at the end.
pub(super) fn write_object(object: &Object) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(&Json::Object(object.clone())).expect("JSON values serialize");
    bytes.push(b'\n');
    bytes
}

/// The member `key` of `object`.
pub(super) fn get<'a>(object: &'a Object, key: &str) -> Option<&'a Json> {
    object.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// The text of the member `key`, if it is text.
pub(super) fn text<'a>(object: &'a Object, key: &str) -> Option<&'a str> {
    match get(object, key)? {
        Json::String(text) => Some(text),
        _ => None,
    }
}

/// The object under `key`, made empty at the end when there is none. `Err` when `key` holds
/// something else: merging would have to throw it away.
pub(super) fn object_at<'a>(object: &'a mut Object, key: &str) -> Result<&'a mut Object, String> {
    let index = match object.iter().position(|(k, _)| k == key) {
        Some(index) => index,
        None => {
            object.push((key.to_owned(), Json::Object(Vec::new())));
            object.len() - 1
        }
    };
    match &mut object[index].1 {
        Json::Object(inner) => Ok(inner),
        _ => Err(format!("`{key}` is not an object")),
    }
}

/// Sets `key` to `value`: in place when it is there (later duplicates dropped), else at the end.
pub(super) fn set(object: &mut Object, key: &str, value: Json) {
    match object.iter().position(|(k, _)| k == key) {
        Some(index) => {
            object[index].1 = value;
            let mut seen = 0;
            object.retain(|(k, _)| k != key || (seen += 1, seen == 1).1);
        }
        None => object.push((key.to_owned(), value)),
    }
}

/// Removes every member `key`.
pub(super) fn remove(object: &mut Object, key: &str) {
    object.retain(|(k, _)| k != key);
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(n).map(Json::Number).ok_or_else(|| E::custom("a number JSON cannot hold"))
    }
    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            members.push((key, value));
        }
        Ok(Json::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_keeps_its_order_and_its_values_through_a_round_trip() {
        let text = b"{\n  \"zeta\": 1,\n  \"alpha\": [\n    true,\n    null,\n    2.5,\n    \"x\"\n  ],\n  \"mid\": {\n    \"b\": {},\n    \"a\": -3\n  }\n}\n";
        let object = parse_object(text).unwrap();
        assert_eq!(
            object.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["zeta", "alpha", "mid"],
            "the file's order, not sorted"
        );
        assert_eq!(write_object(&object), text.to_vec(), "written back as it was (two spaces, a final line break)");
        let compact = parse_object(br#"{"zeta":1,"alpha":[true,null,2.5,"x"],"mid":{"b":{},"a":-3}}"#).unwrap();
        assert_eq!(
            write_object(&compact),
            text.to_vec(),
            "a compact file: the same values, written as the agents write"
        );
    }

    #[test]
    fn setting_a_key_replaces_it_in_place_and_drops_its_duplicates() {
        let mut object = parse_object(br#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        set(&mut object, "a", Json::String("x".into()));
        assert_eq!(object, vec![("a".into(), Json::String("x".into())), ("b".into(), Json::Number(2.into()))]);
        set(&mut object, "c", Json::Bool(true));
        assert_eq!(object.last().map(|(k, _)| k.as_str()), Some("c"), "a new key goes at the end");
    }

    #[test]
    fn what_is_not_an_object_says_where_without_quoting_the_file() {
        let error = parse_object(b"{\"env\": {\"KEY\": \"sk-secret\",}}").unwrap_err();
        assert!(error.contains("line 1"), "a position: {error}");
        assert!(!error.contains("sk-secret"), "no text of the file: {error}");
        assert!(parse_object(b"[1, 2]").is_err(), "an array is not a settings file");
        assert_eq!(parse_object(b"  \n").unwrap(), Vec::new(), "an empty file is an empty object");
        assert!(
            object_at(&mut parse_object(br#"{"env": 3}"#).unwrap(), "env").is_err(),
            "a non-object is not merged into"
        );
    }
}
