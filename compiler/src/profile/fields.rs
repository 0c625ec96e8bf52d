//! The keys a fact kind takes, read from its derived `Deserialize`: a
//! deserializer that only records the field names a struct asks for, so the
//! keys of each kind are never a second, hand-kept list.

use std::cell::Cell;

use serde::Deserialize;
use serde::de::{self, Visitor};

/// The field names a derived `Deserialize` struct asks for.
pub(super) fn fields<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    let seen = Cell::new(&[][..]);
    let _ = T::deserialize(FieldNames(&seen));
    seen.get()
}

/// A deserializer that only records the fields a struct asks for.
struct FieldNames<'a>(&'a Cell<&'static [&'static str]>);

impl<'de> de::Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only a struct's field names are read"))
    }

    fn deserialize_struct<V: Visitor<'de>>(self, _: &'static str, fields: &'static [&'static str], _: V) -> Result<V::Value, Self::Error> {
        self.0.set(fields);
        Err(de::Error::custom("only a struct's field names are read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit unit_struct
        newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}
