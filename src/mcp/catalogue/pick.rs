//! `fields` applied while a record is serialised: only the chosen top-level fields are
//! turned into JSON values. A payable has some forty fields, nested allocations and
//! tax charges among them; an agent that asks for six should not pay for building the
//! other thirty-four and throwing them away.
//!
//! [`pick`] gives exactly what serialising the whole record and keeping the chosen
//! members gives (a unit test compares both); a record that does not serialise as a
//! struct or map is serialised whole and then projected.

use serde::ser::{self, Impossible, Serialize};
use serde_json::{Map, Value};

/// `record` as a JSON object holding only the members named in `fields`.
pub fn pick<T: Serialize>(record: &T, fields: &[String]) -> Result<Value, serde_json::Error> {
    match record.serialize(Picker { fields }) {
        Ok(value) => Ok(value),
        Err(Unsupported) => {
            let whole = serde_json::to_value(record)?;
            Ok(match whole {
                Value::Object(map) => Value::Object(map.into_iter().filter(|(k, _)| wanted(fields, k)).collect()),
                other => other,
            })
        }
    }
}

fn wanted(fields: &[String], key: &str) -> bool {
    fields.iter().any(|f| f == key)
}

/// Anything but a struct or a map, or a member that failed to serialise: [`pick`] then
/// serialises the record whole (and reports a real error from there).
#[derive(Debug)]
struct Unsupported;

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a struct or map")
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Unsupported
    }
}

struct Picker<'a> {
    fields: &'a [String],
}

/// The chosen members collected so far (`pending`: a map key waiting for its value).
struct Picked<'a> {
    fields: &'a [String],
    members: Map<String, Value>,
    pending: Option<String>,
}

impl<'a> Picked<'a> {
    fn new(fields: &'a [String]) -> Self {
        Picked { fields, members: Map::new(), pending: None }
    }

    fn member<V: Serialize + ?Sized>(&mut self, key: &str, value: &V) -> Result<(), Unsupported> {
        if wanted(self.fields, key) {
            self.members.insert(key.to_string(), serde_json::to_value(value).map_err(|_| Unsupported)?);
        }
        Ok(())
    }
}

impl ser::SerializeStruct for Picked<'_> {
    type Ok = Value;
    type Error = Unsupported;

    fn serialize_field<V: Serialize + ?Sized>(&mut self, key: &'static str, value: &V) -> Result<(), Unsupported> {
        self.member(key, value)
    }

    fn end(self) -> Result<Value, Unsupported> {
        Ok(Value::Object(self.members))
    }
}

impl ser::SerializeMap for Picked<'_> {
    type Ok = Value;
    type Error = Unsupported;

    fn serialize_key<K: Serialize + ?Sized>(&mut self, key: &K) -> Result<(), Unsupported> {
        match serde_json::to_value(key) {
            Ok(Value::String(key)) => {
                self.pending = Some(key);
                Ok(())
            }
            _ => Err(Unsupported),
        }
    }

    fn serialize_value<V: Serialize + ?Sized>(&mut self, value: &V) -> Result<(), Unsupported> {
        let key = self.pending.take().ok_or(Unsupported)?;
        self.member(&key, value)
    }

    fn end(self) -> Result<Value, Unsupported> {
        Ok(Value::Object(self.members))
    }
}

macro_rules! unsupported {
    ($($name:ident: $t:ty),* $(,)?) => {
        $(fn $name(self, _: $t) -> Result<Value, Unsupported> { Err(Unsupported) })*
    };
}

impl<'a> ser::Serializer for Picker<'a> {
    type Ok = Value;
    type Error = Unsupported;
    type SerializeSeq = Impossible<Value, Unsupported>;
    type SerializeTuple = Impossible<Value, Unsupported>;
    type SerializeTupleStruct = Impossible<Value, Unsupported>;
    type SerializeTupleVariant = Impossible<Value, Unsupported>;
    type SerializeMap = Picked<'a>;
    type SerializeStruct = Picked<'a>;
    type SerializeStructVariant = Impossible<Value, Unsupported>;

    unsupported!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_f32: f32, serialize_f64: f64,
        serialize_char: char, serialize_str: &str, serialize_bytes: &[u8], serialize_unit_struct: &'static str);

    fn serialize_none(self) -> Result<Value, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_some<V: Serialize + ?Sized>(self, value: &V) -> Result<Value, Unsupported> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<Value, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_newtype_struct<V: Serialize + ?Sized>(self, _: &'static str, value: &V) -> Result<Value, Unsupported> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<V: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &V) -> Result<Value, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Picked<'a>, Unsupported> {
        Ok(Picked::new(self.fields))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Picked<'a>, Unsupported> {
        Ok(Picked::new(self.fields))
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant, Unsupported> {
        Err(Unsupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(serde::Serialize)]
    struct Inner {
        a: i64,
        b: Option<String>,
    }

    #[derive(serde::Serialize)]
    struct Record {
        id: String,
        amount: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        nested: Vec<Inner>,
        #[serde(flatten)]
        extra: Inner,
    }

    #[derive(serde::Serialize)]
    struct Plain {
        id: String,
        amount: i64,
    }

    fn projected<T: Serialize>(record: &T, fields: &[String]) -> Value {
        match serde_json::to_value(record).unwrap() {
            Value::Object(map) => Value::Object(map.into_iter().filter(|(k, _)| fields.contains(k)).collect()),
            other => other,
        }
    }

    /// Picking while serialising gives what projecting the whole record gives: plain
    /// structs, flattened members (serialised as a map), skipped and nested members,
    /// unknown names, and values that are not records.
    #[test]
    fn picking_is_projecting_the_whole_record() {
        let record = Record { id: "r1".into(), amount: "10.00".into(), note: None, nested: vec![Inner { a: 1, b: None }], extra: Inner { a: 2, b: Some("x".into()) } };
        let plain = Plain { id: "p1".into(), amount: 7 };
        for fields in [vec![], vec!["id"], vec!["id", "nested", "note"], vec!["a", "b", "amount"], vec!["nope"]] {
            let fields: Vec<String> = fields.into_iter().map(String::from).collect();
            assert_eq!(pick(&record, &fields).unwrap(), projected(&record, &fields), "{fields:?}");
            assert_eq!(pick(&plain, &fields).unwrap(), projected(&plain, &fields), "{fields:?}");
            assert_eq!(pick(&json!([1, 2]), &fields).unwrap(), json!([1, 2]));
            assert_eq!(pick(&json!({"id": 1, "x": 2}), &fields).unwrap(), projected(&json!({"id": 1, "x": 2}), &fields));
        }
    }
}
