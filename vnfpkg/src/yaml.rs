//! Forgiving serde building blocks for reading TOSCA YAML into typed records.
//!
//! A VNFD is hand-written: a member of an unexpected shape must not make the whole file
//! unreadable, it reads as absent (what the summary then reports, or refuses, by name).
//! Every field of the TOSCA records is therefore declared with `#[serde(default)]` and one of
//! the helpers below, and maps keep the order they are written in (it decides the order of
//! VDUs, CPs and levels in the summary).

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer};
use serde_yaml_ng::Value;

use crate::units::parse_size;

/// `value` as the TOSCA records read it: every YAML tag (`!foo x`) dropped (TOSCA gives
/// tags no meaning, and the accessors of `serde_yaml_ng::Value` look through them too), and
/// every entry with a key that is not a string left out (no TOSCA name is one; serde would
/// take an integer key for a field's index).
pub(crate) fn normalise(value: Value) -> Value {
    match value {
        Value::Tagged(t) => normalise(t.value),
        Value::Sequence(seq) => Value::Sequence(seq.into_iter().map(normalise).collect()),
        Value::Mapping(m) => Value::Mapping(
            m.into_iter()
                .map(|(k, v)| (normalise(k), v))
                .filter(|(k, _)| k.is_string())
                .map(|(k, v)| (k, normalise(v)))
                .collect(),
        ),
        other => other,
    }
}

/// `T` read from `value`, or `T::default()` when the value has another shape.
pub(crate) fn read<T: DeserializeOwned + Default>(value: Value) -> T {
    serde_yaml_ng::from_value(value).unwrap_or_default()
}

/// A field of the wrong shape reads as its default.
pub(crate) fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<T, D::Error> {
    Value::deserialize(d).map(read)
}

/// A field that is present (even as `~` or of the wrong shape) is `Some`; with
/// `#[serde(default)]` an absent one is `None`.
pub(crate) fn present<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<Option<T>, D::Error> {
    Value::deserialize(d).map(|v| Some(read(v)))
}

/// `Some` only for a YAML mapping.
pub(crate) fn mapping<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<Option<T>, D::Error> {
    Value::deserialize(d).map(|v| v.is_mapping().then(|| read(v)))
}

/// A YAML mapping in document order; entries with a non-string key are skipped, a value of
/// the wrong shape reads as `T::default()`. Anything but a mapping reads as empty.
#[derive(Debug, Clone)]
pub(crate) struct Entries<T>(pub Vec<(String, T)>);

impl<T> Default for Entries<T> {
    fn default() -> Self {
        Entries(Vec::new())
    }
}

impl<T> Entries<T> {
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub(crate) fn find(&self, key: &str) -> Option<&T> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<T: DeserializeOwned + Default> Entries<T> {
    fn of(value: Value) -> Self {
        let Value::Mapping(m) = value else { return Entries::default() };
        Entries(m.into_iter().filter_map(|(k, v)| Some((k.as_str()?.to_owned(), read(v)))).collect())
    }
}

impl<'de, T: DeserializeOwned + Default> Deserialize<'de> for Entries<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Entries::of)
    }
}

/// TOSCA 1.2 writes policies and substitution requirements as a list of single-entry maps;
/// a plain map is accepted too. Items that are not maps are skipped.
#[derive(Debug, Clone)]
pub(crate) struct Pairs<T>(pub Vec<(String, T)>);

impl<T> Default for Pairs<T> {
    fn default() -> Self {
        Pairs(Vec::new())
    }
}

impl<'de, T: DeserializeOwned + Default> Deserialize<'de> for Pairs<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Pairs(match Value::deserialize(d)? {
            Value::Sequence(seq) => seq.into_iter().flat_map(|item| Entries::<T>::of(item).0).collect(),
            other => Entries::of(other).0,
        }))
    }
}

/// A YAML sequence whose items of the wrong shape read as `T::default()`; anything but a
/// sequence reads as empty.
#[derive(Debug, Clone)]
pub(crate) struct Seq<T>(pub Vec<T>);

impl<T> Default for Seq<T> {
    fn default() -> Self {
        Seq(Vec::new())
    }
}

impl<'de, T: DeserializeOwned + Default> Deserialize<'de> for Seq<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Sequence(seq) => Seq(seq.into_iter().map(read).collect()),
            _ => Seq::default(),
        })
    }
}

/// A scalar as text (TOSCA versions and ids are often written as bare numbers).
pub(crate) fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Tagged(t) => scalar_string(&t.value),
        _ => None,
    }
}

pub(crate) fn text(v: &Option<Value>) -> Option<String> {
    v.as_ref().and_then(scalar_string)
}

pub(crate) fn as_u32(v: &Option<Value>) -> Option<u32> {
    match v.as_ref()? {
        Value::Number(n) => n.as_u64().and_then(|x| u32::try_from(x).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A TOSCA `scalar-unit.size` (`8 GB`) or a plain number of bytes.
pub(crate) fn as_size(v: &Option<Value>) -> Option<u64> {
    match v.as_ref()? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => parse_size(s),
        _ => None,
    }
}

/// A list of scalars, or one scalar as a list of one.
pub(crate) fn strings(v: &Option<Value>) -> Vec<String> {
    match v {
        Some(Value::Sequence(seq)) => seq.iter().filter_map(scalar_string).collect(),
        Some(other) => scalar_string(other).into_iter().collect(),
        None => Vec::new(),
    }
}
