//! `fields` applied while a record is serialised: only the chosen top-level members are
//! written, straight into the answer's bytes. A payable has some forty fields, nested
//! allocations and tax charges among them; an agent that asks for six should not pay
//! for building the other thirty-four and throwing them away, nor for an intermediate
//! JSON tree of the six.
//!
//! [`write`] gives exactly what serialising the whole record and keeping the chosen
//! members gives (a unit test compares both); a record that does not serialise as a
//! struct or map is serialised whole and then projected.
//!
//! A name `fields` holds that the answer does not have is refused ([`check`]), as an
//! unknown filter is: both doors (`/v1`'s `fields=` and a tool's `fields`) ask it before
//! the operation reads anything.

use std::cell::Cell;

use schemars::JsonSchema;
use serde::ser::{self, Error as _, Impossible, Serialize};
use serde_json::ser::{CompactFormatter, Compound};
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::ops::Page;

/// Refuses a name in `fields` that `T`'s answer does not have: 400 `bad_request` (the
/// code of an unknown filter), `details.field` `fields`, the name (`value`) and the
/// names it may hold (`known`).
pub fn check<T: JsonSchema + 'static>(fields: Option<&[String]>) -> Result<(), ApiError> {
    check_in(crate::ops::machinery::validate::cached_schema::<T>(), fields)
}

/// [`check`] against an answer's schema (an object's `properties`).
pub fn check_in(schema: &Value, fields: Option<&[String]>) -> Result<(), ApiError> {
    let Some(fields) = fields else { return Ok(()) };
    let known = schema.get("properties").and_then(Value::as_object);
    let Some(unknown) = fields.iter().find(|f| !known.is_some_and(|k| k.contains_key(f.as_str()))) else {
        return Ok(());
    };
    let unknown = crate::domain::text::one_line(unknown, 60);
    let names: Vec<&String> = known.map(|k| k.keys().collect()).unwrap_or_default();
    Err(ApiError::bad_request(format!("Unknown field in fields: {unknown}"))
        .with_details(json!({ "field": "fields", "reason": "unknown_field", "value": unknown, "known": names })))
}

/// `fields` as `/v1` takes them: `fields=a,b` (empty names left out).
pub fn from_query(value: &str) -> Vec<String> {
    value.split(',').map(str::trim).filter(|f| !f.is_empty()).map(str::to_string).collect()
}

/// A record serialised: with `fields`, only those members, else whole.
pub fn record<T: Serialize>(record: &T, fields: Option<&[String]>) -> Result<Vec<u8>, ApiError> {
    let mut out = Vec::with_capacity(1024);
    write(&mut out, record, fields).map_err(|_| ApiError::internal())?;
    Ok(out)
}

/// A `{data, meta}` page serialised, with `fields` applied to each row.
pub fn page<T: Serialize>(page: &Page<T>, fields: Option<&[String]>) -> Result<Vec<u8>, ApiError> {
    let mut out = Vec::with_capacity(256 + page.data.len() * 512);
    out.extend_from_slice(b"{\"data\":[");
    let mut memo = Memo::default();
    for (i, row) in page.data.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_with(&mut out, row, fields, &mut memo).map_err(|_| ApiError::internal())?;
    }
    out.extend_from_slice(b"],\"meta\":");
    serde_json::to_writer(&mut out, &page.meta).map_err(|_| ApiError::internal())?;
    out.push(b'}');
    Ok(out)
}

type Json<'w> = serde_json::Serializer<&'w mut Vec<u8>>;

/// Writes `record` as JSON into `out`: whole, or with `fields` only the members they
/// name.
pub fn write<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    record: &T,
    fields: Option<&[String]>,
) -> Result<(), serde_json::Error> {
    write_with(out, record, fields, &mut Memo::default())
}

/// Which of a struct's members were chosen, by their place: the records of a page are
/// of one type, so the choice is made on the first and looked up for the others (a
/// member's name is a `&'static str`, the same one each time, checked by address).
#[derive(Default)]
pub struct Memo(Vec<(usize, bool)>);

/// As [`write`], remembering the choice of members in `memo` for the next record.
pub fn write_with<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    record: &T,
    fields: Option<&[String]>,
    memo: &mut Memo,
) -> Result<(), serde_json::Error> {
    let Some(fields) = fields else { return serde_json::to_writer(&mut *out, record) };
    let start = out.len();
    let refused = Cell::new(false);
    match record.serialize(Picker {
        json: &mut serde_json::Serializer::new(&mut *out),
        fields,
        memo,
        refused: &refused,
    }) {
        Err(_) if refused.get() => {
            out.truncate(start);
            let projected = match serde_json::to_value(record)? {
                Value::Object(map) => Value::Object(map.into_iter().filter(|(k, _)| wanted(fields, k)).collect()),
                other => other,
            };
            serde_json::to_writer(&mut *out, &projected)
        }
        done => done,
    }
}

fn wanted(fields: &[String], key: &str) -> bool {
    fields.iter().any(|f| f == key)
}

/// What a [`Picker`] answers for anything but a struct or a map (and a map for a key
/// that is not text), having noted it in `refused`: [`write`] then serialises the
/// record whole.
fn unsupported(refused: &Cell<bool>) -> serde_json::Error {
    refused.set(true);
    serde_json::Error::custom("not a struct or map")
}

struct Picker<'a, 'w> {
    json: &'a mut Json<'w>,
    fields: &'a [String],
    memo: &'a mut Memo,
    refused: &'a Cell<bool>,
}

/// A struct being written: its chosen members go through, the others are skipped.
struct PickedStruct<'a, 'w> {
    inner: Compound<'a, &'w mut Vec<u8>, CompactFormatter>,
    fields: &'a [String],
    memo: &'a mut Memo,
    at: usize,
}

impl ser::SerializeStruct for PickedStruct<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_field<V: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &V,
    ) -> Result<(), serde_json::Error> {
        let address = key.as_ptr() as usize;
        let chosen = match self.memo.0.get(self.at) {
            Some(&(seen, chosen)) if seen == address => chosen,
            _ => {
                let chosen = wanted(self.fields, key);
                self.memo.0.truncate(self.at);
                self.memo.0.push((address, chosen));
                chosen
            }
        };
        self.at += 1;
        if chosen {
            ser::SerializeStruct::serialize_field(&mut self.inner, key, value)?;
        }
        Ok(())
    }

    fn end(self) -> Result<(), serde_json::Error> {
        ser::SerializeStruct::end(self.inner)
    }
}

/// A map being written (a struct with flattened members): each key is looked at, as
/// text, to choose.
struct PickedMap<'a, 'w> {
    inner: Compound<'a, &'w mut Vec<u8>, CompactFormatter>,
    fields: &'a [String],
    keep: bool,
    refused: &'a Cell<bool>,
}

impl ser::SerializeMap for PickedMap<'_, '_> {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_key<K: Serialize + ?Sized>(&mut self, key: &K) -> Result<(), serde_json::Error> {
        self.keep = key.serialize(KeyChosen(self.fields, self.refused))?;
        if self.keep {
            ser::SerializeMap::serialize_key(&mut self.inner, key)?;
        }
        Ok(())
    }

    fn serialize_value<V: Serialize + ?Sized>(&mut self, value: &V) -> Result<(), serde_json::Error> {
        if self.keep {
            ser::SerializeMap::serialize_value(&mut self.inner, value)?;
        }
        Ok(())
    }

    fn end(self) -> Result<(), serde_json::Error> {
        ser::SerializeMap::end(self.inner)
    }
}

/// Whether a map key (text) is among the chosen fields, without copying it.
struct KeyChosen<'a>(&'a [String], &'a Cell<bool>);

/// The `Serializer` methods of a [`Picker`] or a [`KeyChosen`] that end in
/// [`unsupported`]: each reads one kind of value (records; text) and nothing else.
/// A macro because `Serializer` has no default methods: a function cannot stand for
/// the dozen method definitions each serializer must write.
macro_rules! refused {
    ($ok:ty; $($name:ident: $t:ty),* $(,)?) => {
        $(fn $name(self, _: $t) -> Result<$ok, serde_json::Error> { Err(unsupported(self.refused())) })*
        fn serialize_none(self) -> Result<$ok, serde_json::Error> {
            Err(unsupported(self.refused()))
        }
        fn serialize_unit(self) -> Result<$ok, serde_json::Error> {
            Err(unsupported(self.refused()))
        }
        fn serialize_newtype_variant<V: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &V) -> Result<$ok, serde_json::Error> {
            Err(unsupported(self.refused()))
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, serde_json::Error> {
            Err(unsupported(self.refused()))
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, serde_json::Error> {
            Err(unsupported(self.refused()))
        }
        fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, serde_json::Error> {
            Err(unsupported(self.refused()))
        }
        fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
            Err(unsupported(self.refused()))
        }
        fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant, serde_json::Error> {
            Err(unsupported(self.refused()))
        }
    };
}

impl KeyChosen<'_> {
    fn refused(&self) -> &Cell<bool> {
        self.1
    }
}

impl ser::Serializer for KeyChosen<'_> {
    type Ok = bool;
    type Error = serde_json::Error;
    type SerializeSeq = Impossible<bool, serde_json::Error>;
    type SerializeTuple = Impossible<bool, serde_json::Error>;
    type SerializeTupleStruct = Impossible<bool, serde_json::Error>;
    type SerializeTupleVariant = Impossible<bool, serde_json::Error>;
    type SerializeMap = Impossible<bool, serde_json::Error>;
    type SerializeStruct = Impossible<bool, serde_json::Error>;
    type SerializeStructVariant = Impossible<bool, serde_json::Error>;

    refused!(bool; serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_f32: f32, serialize_f64: f64,
        serialize_char: char, serialize_bytes: &[u8], serialize_unit_struct: &'static str);

    fn serialize_str(self, key: &str) -> Result<bool, serde_json::Error> {
        Ok(wanted(self.0, key))
    }
    fn serialize_some<V: Serialize + ?Sized>(self, _: &V) -> Result<bool, serde_json::Error> {
        Err(unsupported(self.refused()))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<bool, serde_json::Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &V,
    ) -> Result<bool, serde_json::Error> {
        value.serialize(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, serde_json::Error> {
        Err(unsupported(self.refused()))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, serde_json::Error> {
        Err(unsupported(self.refused()))
    }
}

impl Picker<'_, '_> {
    fn refused(&self) -> &Cell<bool> {
        self.refused
    }
}

impl<'a, 'w> ser::Serializer for Picker<'a, 'w> {
    type Ok = ();
    type Error = serde_json::Error;
    type SerializeSeq = Impossible<(), serde_json::Error>;
    type SerializeTuple = Impossible<(), serde_json::Error>;
    type SerializeTupleStruct = Impossible<(), serde_json::Error>;
    type SerializeTupleVariant = Impossible<(), serde_json::Error>;
    type SerializeMap = PickedMap<'a, 'w>;
    type SerializeStruct = PickedStruct<'a, 'w>;
    type SerializeStructVariant = Impossible<(), serde_json::Error>;

    refused!((); serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_f32: f32, serialize_f64: f64,
        serialize_char: char, serialize_str: &str, serialize_bytes: &[u8], serialize_unit_struct: &'static str);

    fn serialize_some<V: Serialize + ?Sized>(self, value: &V) -> Result<(), serde_json::Error> {
        value.serialize(self)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), serde_json::Error> {
        Err(unsupported(self.refused()))
    }
    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &V,
    ) -> Result<(), serde_json::Error> {
        value.serialize(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<PickedMap<'a, 'w>, serde_json::Error> {
        Ok(PickedMap {
            inner: ser::Serializer::serialize_map(self.json, None)?,
            fields: self.fields,
            keep: false,
            refused: self.refused,
        })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<PickedStruct<'a, 'w>, serde_json::Error> {
        Ok(PickedStruct {
            inner: ser::Serializer::serialize_struct(self.json, name, len)?,
            fields: self.fields,
            memo: self.memo,
            at: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    struct Sparse {
        id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        amount: i64,
    }

    #[derive(serde::Serialize)]
    struct Plain {
        id: String,
        amount: i64,
    }

    fn pick<T: Serialize>(record: &T, fields: &[String]) -> Value {
        let mut out = b"[".to_vec();
        write(&mut out, record, Some(fields)).unwrap();
        out.push(b']');
        // Written into a larger answer, then read back.
        serde_json::from_slice::<Vec<Value>>(&out).unwrap().remove(0)
    }

    fn projected<T: Serialize>(record: &T, fields: &[String]) -> Value {
        match serde_json::to_value(record).unwrap() {
            Value::Object(map) => Value::Object(map.into_iter().filter(|(k, _)| fields.contains(k)).collect()),
            other => other,
        }
    }

    /// Picking while writing gives what projecting the whole record gives: plain
    /// structs, flattened members (serialised as a map), skipped and nested members,
    /// unknown names, and values that are not records (written whole, after whatever
    /// the answer held before).
    #[test]
    fn picking_is_projecting_the_whole_record() {
        let record = Record {
            id: "r1".into(),
            amount: "10.00".into(),
            note: None,
            nested: vec![Inner { a: 1, b: None }],
            extra: Inner { a: 2, b: Some("x".into()) },
        };
        let plain = Plain { id: "p1".into(), amount: 7 };
        for fields in [
            vec![],
            vec!["id"],
            vec!["id", "nested", "note"],
            vec!["a", "b", "amount"],
            vec!["nope"],
            vec!["amount", "note"],
        ] {
            let fields: Vec<String> = fields.into_iter().map(String::from).collect();
            assert_eq!(pick(&record, &fields), projected(&record, &fields), "{fields:?}");
            assert_eq!(pick(&plain, &fields), projected(&plain, &fields), "{fields:?}");
            assert_eq!(pick(&json!([1, 2]), &fields), json!([1, 2]));
            assert_eq!(pick(&json!({"id": 1, "x": 2}), &fields), projected(&json!({"id": 1, "x": 2}), &fields));
            // A map whose keys are not text is refused at its first key, then projected whole.
            let numbered = std::collections::BTreeMap::from([(1, "one"), (2, "two")]);
            assert_eq!(pick(&numbered, &fields), projected(&numbered, &fields), "{fields:?}");
            assert_eq!(pick(&Some(&plain), &fields), projected(&plain, &fields), "{fields:?}");
            // A page: the records share one memo of the choice, across a skipped member.
            let noted = Record {
                note: Some("n".into()),
                ..Record {
                    id: "r2".into(),
                    amount: "2.00".into(),
                    note: None,
                    nested: vec![],
                    extra: Inner { a: 3, b: None },
                }
            };
            let bare = Record {
                id: "r3".into(),
                amount: "3.00".into(),
                note: None,
                nested: vec![],
                extra: Inner { a: 4, b: None },
            };
            let mut memo = Memo::default();
            for one in [&record, &noted, &bare, &noted] {
                let mut out = Vec::new();
                write_with(&mut out, one, Some(&fields), &mut memo).unwrap();
                assert_eq!(serde_json::from_slice::<Value>(&out).unwrap(), projected(one, &fields), "{fields:?}");
            }
            let mut memo = Memo::default();
            let sparse = [
                Sparse { id: "s1".into(), note: Some("x".into()), amount: 1 },
                Sparse { id: "s2".into(), note: None, amount: 2 },
            ];
            for one in [&sparse[0], &sparse[1], &sparse[1], &sparse[0]] {
                let mut out = Vec::new();
                write_with(&mut out, one, Some(&fields), &mut memo).unwrap();
                assert_eq!(serde_json::from_slice::<Value>(&out).unwrap(), projected(one, &fields), "{fields:?}");
            }
            let mut memo = Memo::default();
            for one in [&plain, &Plain { id: "p2".into(), amount: 8 }] {
                let mut out = Vec::new();
                write_with(&mut out, one, Some(&fields), &mut memo).unwrap();
                assert_eq!(serde_json::from_slice::<Value>(&out).unwrap(), projected(one, &fields), "{fields:?}");
            }
        }
    }
}
