//! Typed views of the members of a stored SOL document that a row copies into its indexed
//! columns. A member that is absent or not of its type reads as absent, as the columns
//! always took it (`as_str()` / `as_bool()` of the member).

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The view `T` of `body`; all absent when `body` is not an object.
pub(crate) fn index_of<'a, T: Deserialize<'a> + Default>(body: &'a Value) -> T {
    T::deserialize(body).unwrap_or_default()
}

/// A member's value as what the index keeps of it: the string or boolean, or nothing.
#[derive(Default)]
enum Scalar<'a> {
    Text(&'a str),
    Bool(bool),
    #[default]
    Other,
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Text(text))
    }

    fn visit_str<E>(self, _: &str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other)
    }

    fn visit_bool<E>(self, flag: bool) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Bool(flag))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other)
    }

    fn visit_unit<E>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other)
    }

    fn visit_none<E>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other)
    }
}

pub(crate) fn lenient_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de str>, D::Error> {
    Ok(match deserializer.deserialize_any(ScalarVisitor)? {
        Scalar::Text(text) => Some(text),
        _ => None,
    })
}

pub(crate) fn lenient_bool<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<bool>, D::Error> {
    Ok(match deserializer.deserialize_any(ScalarVisitor)? {
        Scalar::Bool(flag) => Some(flag),
        _ => None,
    })
}
