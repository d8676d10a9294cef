//! Request validation shared by both doors: a JSON body is checked against the JSON
//! Schema generated from its Rust type (unknown and missing fields, JSON types, enums),
//! then deserialised into that type. Errors name the offending field in `details` and
//! never echo the caller's input.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use crate::domain::{money, percent, text};
use crate::error::ApiError;

/// The JSON Schema (2020-12, sub-schemas inlined) of a request type.
pub fn schema_of<T: JsonSchema>() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// `T`'s schema, generated on the first request of that type and kept for the life of
/// the process (a handful of request types, a few kilobytes each): no request pays for
/// schema generation but the first.
pub(crate) fn cached_schema<T: JsonSchema + 'static>() -> &'static Value {
    cached_by::<T>(schema_of::<T>)
}

/// The schema `make` makes, made on the first request of the key `K` and kept.
fn cached_by<K: 'static>(make: fn() -> Value) -> &'static Value {
    static SCHEMAS: OnceLock<RwLock<HashMap<TypeId, &'static Value>>> = OnceLock::new();
    let schemas = SCHEMAS.get_or_init(Default::default);
    let id = TypeId::of::<K>();
    if let Some(schema) = schemas.read().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return schema;
    }
    let mut schemas = schemas.write().unwrap_or_else(|e| e.into_inner());
    schemas.entry(id).or_insert_with(|| Box::leak(Box::new(make())))
}

/// Drops from a `PATCH` body the fields of `Record`'s answer that `Request` does not
/// take (`id`, `created_at`, a computed total, a field fixed at creation), as the real
/// API does: a client may send back what it read with one field changed. A field of
/// neither is left for the check to refuse as unknown.
/// Items of an array the request takes lose the answer's fields the same way (a tax
/// charge's `tax_name`), and a `*_name` sent beside its `*_id` is the name the read
/// answered for that id: the id decides.
pub fn strip_answer<Record: JsonSchema + 'static, Request: JsonSchema + 'static>(body: &mut Map<String, Value>) {
    strip_object(cached_schema::<Record>(), cached_schema::<Request>(), body);
}

/// [`strip_answer`] against an answer schema a function makes (a get's, with the record's
/// files), made on the first request of the key `K` and kept.
pub fn strip_answer_of<K: 'static, Request: JsonSchema + 'static>(
    answer: fn() -> Value,
    body: &mut Map<String, Value>,
) {
    /// The key of `K`'s answer schema, apart from any type's own schema.
    struct Answer<K>(std::marker::PhantomData<K>);
    strip_object(cached_by::<Answer<K>>(answer), cached_schema::<Request>(), body);
}

/// Whether a property's schema accepts `null`.
fn takes_null(schema: &Value) -> bool {
    let null = |t: &Value| t == "null" || t.as_array().is_some_and(|types| types.iter().any(|t| t == "null"));
    schema.get("type").is_some_and(null)
        || ["anyOf", "oneOf"].iter().any(|key| {
            schema.get(*key).and_then(Value::as_array).is_some_and(|branches| branches.iter().any(takes_null))
        })
}

fn strip_object<'s>(answer: &'s Value, taken: &'s Value, body: &mut Map<String, Value>) {
    let properties = |schema: &'s Value| schema.get("properties").and_then(Value::as_object);
    let (Some(answer), Some(taken)) = (properties(answer), properties(taken)) else { return };
    // A field of the answer the request does not take, or a `null` the answer may hold
    // (what a read answers for an unset field) where the request takes none.
    body.retain(|field, value| match taken.get(field) {
        Some(schema) => !(value.is_null() && answer.get(field).is_some_and(takes_null) && !takes_null(schema)),
        None => !answer.contains_key(field),
    });
    let named: Vec<String> = body
        .keys()
        .filter_map(|field| field.strip_suffix("_name"))
        .filter(|stem| body.contains_key(&format!("{stem}_id")) && answer.contains_key(&format!("{stem}_name")))
        .map(|stem| format!("{stem}_name"))
        .collect();
    for field in named {
        body.remove(&field);
    }
    for (field, value) in body.iter_mut() {
        let items = |schema: Option<&'s Value>| schema.and_then(|s| s.get("items"));
        let (Some(answer_item), Some(taken_item), Value::Array(values)) =
            (items(answer.get(field)), items(taken.get(field)), value)
        else {
            continue;
        };
        for value in values.iter_mut() {
            if let Value::Object(item) = value {
                strip_object(answer_item, taken_item, item);
            }
        }
    }
}

/// Checks `value` against `T`'s schema and deserialises it.
pub fn parse<T: JsonSchema + DeserializeOwned + 'static>(value: Value) -> Result<T, ApiError> {
    let Value::Object(object) = &value else {
        return Err(ApiError::bad_request("The request body must be a JSON object")
            .with_details(json!({"reason": "not_an_object"})));
    };
    check_object(cached_schema::<T>(), object, "")?;
    serde_json::from_value(value).map_err(|_| {
        ApiError::unprocessable("The request body does not match the schema")
            .with_details(json!({"reason": "invalid_body"}))
    })
}

/// A query string checked against `T`'s schema and read into it, as a body is: each
/// pair is a property (an `integer` property's text read as a whole number), so the
/// query's schema (a tool's arguments, OpenAPI's parameters) and its check are one type.
/// A key given twice, an unknown key (`unknown_filter`) and a value outside its schema
/// are 400 `bad_request` naming the parameter, with the reasons a body's field gets.
pub fn parse_query<T: JsonSchema + DeserializeOwned + 'static>(pairs: &[(String, String)]) -> Result<T, ApiError> {
    let schema = cached_schema::<T>();
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut object = Map::new();
    for (key, text) in pairs {
        let whole = properties
            .and_then(|p| p.get(key))
            .and_then(|p| p.get("type"))
            .is_some_and(|t| type_matches(t, &Value::from(0)) && !type_matches(t, &Value::from("")));
        let value = match whole {
            true => text
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| query_error(key, "wrong_type", format!("Parameter {key} must be a whole number")))?,
            false => Value::String(text.clone()),
        };
        if object.insert(key.clone(), value).is_some() {
            return Err(query_error(key, "invalid_value", format!("Parameter {key} appears twice")));
        }
    }
    check_object(schema, &object, "").map_err(|mut e| {
        e.code = crate::error::ErrorCode::BadRequest;
        e.message = e.message.replacen("Field ", "Parameter ", 1);
        if let Some(details) = e.details.as_mut().and_then(Value::as_object_mut) {
            if details.get("reason").and_then(Value::as_str) == Some("unknown_field") {
                let field = details.get("field").and_then(Value::as_str).unwrap_or_default().to_string();
                e.message = format!("Unknown parameter: {field}");
                details.insert("reason".into(), "unknown_filter".into());
            }
        }
        e
    })?;
    serde_json::from_value(Value::Object(object)).map_err(|_| {
        ApiError::bad_request("The query does not match its parameters")
            .with_details(json!({"reason": "invalid_query"}))
    })
}

fn query_error(key: &str, reason: &str, message: String) -> ApiError {
    ApiError::bad_request(message).with_details(json!({ "field": key, "reason": reason }))
}

/// A field that fails its schema: 422 `unprocessable_entity` naming it, as the real
/// document answers (400 `bad_request` is for a body that is not JSON or not an object).
fn field_error(path: &str, reason: &str, message: String) -> ApiError {
    ApiError::unprocessable(message).with_details(json!({ "field": path, "reason": reason }))
}

/// Checks an object against a schema: unknown fields (when `additionalProperties` is
/// false), required fields, and each present field's type, enum, string length, format
/// (`uuid`, `date`), pattern (each of [`Pattern`]) and numeric range, recursing into
/// nested objects and array items.
pub fn check_object(schema: &Value, object: &Map<String, Value>, prefix: &str) -> Result<(), ApiError> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (field, value) in object {
        let path = if prefix.is_empty() { field.clone() } else { format!("{prefix}.{field}") };
        match properties.and_then(|p| p.get(field)) {
            None if closed => return Err(field_error(&path, "unknown_field", format!("Unknown field: {path}"))),
            None => {}
            Some(property) => check_value(property, value, &path)?,
        }
    }
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for field in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(field) {
                let path = if prefix.is_empty() { field.to_string() } else { format!("{prefix}.{field}") };
                return Err(field_error(&path, "required", format!("Missing required field: {path}")));
            }
        }
    }
    Ok(())
}

fn check_value(schema: &Value, value: &Value, path: &str) -> Result<(), ApiError> {
    // `anyOf`/`oneOf` (nullable enums and objects): one branch must accept the value;
    // when none does, the refusal is the one of the branch of the value's type (a
    // malformed id given where an id or an object of operators is taken is
    // `invalid_uuid`), else the last branch's.
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let (mut of_its_type, mut last) = (None, None);
            for branch in branches {
                match check_value(branch, value, path) {
                    Ok(()) => return Ok(()),
                    Err(e) if of_its_type.is_none() && branch.get("type").is_some_and(|t| type_matches(t, value)) => {
                        of_its_type = Some(e)
                    }
                    Err(e) => last = Some(e),
                }
            }
            let refusal = of_its_type.or(last);
            return Err(
                refusal.unwrap_or_else(|| field_error(path, "invalid_value", format!("Invalid value for {path}")))
            );
        }
    }
    if let Some(constant) = schema.get("const") {
        if constant != value {
            return Err(field_error(path, "invalid_value", format!("Invalid value for {path}")));
        }
    }
    if let Some(expected) = schema.get("type") {
        if !type_matches(expected, value) {
            return Err(ApiError::unprocessable(format!("Field {path} has the wrong type"))
                .with_details(json!({ "field": path, "reason": "wrong_type", "expected": expected })));
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.contains(value) {
            return Err(ApiError::unprocessable(format!("Field {path} is not one of the allowed values"))
                .with_details(json!({ "field": path, "reason": "invalid_value", "allowed": allowed })));
        }
    }
    if let Some(text) = value.as_str() {
        let chars = text.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64).filter(|&min| chars < min) {
            return Err(field_error(
                path,
                "too_short",
                format!("Field {path} is too short: at least {min} characters"),
            ));
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64).filter(|&max| chars > max) {
            return Err(field_error(path, "too_long", format!("Field {path} is too long: at most {max} characters")));
        }
    }
    if let (Some(format), Some(text)) = (schema.get("format").and_then(Value::as_str), value.as_str()) {
        match format {
            "uuid" if uuid::Uuid::parse_str(text).is_err() => {
                return Err(field_error(path, "invalid_uuid", format!("Field {path} must be a UUID")))
            }
            "date" if !crate::domain::dates::is_valid_date(text) => {
                return Err(field_error(
                    path,
                    "invalid_date",
                    format!("Field {path} must be a date YYYY-MM-DD or an RFC 3339 date-time"),
                ))
            }
            "email" if !crate::domain::email::is_address(text.trim()) => {
                return Err(field_error(
                    path,
                    "invalid_email",
                    format!("Field {path} must be an e-mail address (name@example.com)"),
                ))
            }
            "date-time" if crate::domain::dates::Timestamp::parse_input(text).is_none() => {
                return Err(field_error(
                    path,
                    "invalid_date",
                    format!("Field {path} must be an RFC 3339 date-time or a date YYYY-MM-DD"),
                ))
            }
            _ => {}
        }
    }
    if let (Some(pattern), Some(text)) = (schema.get("pattern").and_then(Value::as_str), value.as_str()) {
        match Pattern::of(pattern) {
            Some(Pattern::Amount) => {
                if let Some(reason) = money::pattern_refusal(pattern, text) {
                    return Err(field_error(
                        path,
                        reason,
                        format!("Field {path} must be an amount with 1-2 decimals, e.g. \"1500.00\""),
                    ));
                }
            }
            Some(Pattern::Rate) if !percent::fits_rate_pattern(text) => {
                return Err(field_error(path, "invalid_format", percent::RATE_FORMAT.to_string()))
            }
            Some(Pattern::Plain) if !text::is_plain(text) => {
                return Err(field_error(path, "invalid_characters", format!("Field {path} {}", text::PLAIN_RULE)))
            }
            // No schema carries another pattern (`unenforced` is pinned empty for all).
            Some(Pattern::Rate | Pattern::Plain) | None => {}
        }
    }
    if let Some((min, max)) = schema.get("format").and_then(Value::as_str).and_then(integer_bounds) {
        let integer = value.as_i64().map(i128::from).or(value.as_u64().map(i128::from));
        if integer.is_some_and(|n| n < min || n > max) {
            return Err(field_error(path, "out_of_range", format!("Field {path} must be between {min} and {max}")));
        }
    }
    if let Some(number) = value.as_f64() {
        let (min, max) = (schema.get("minimum"), schema.get("maximum"));
        let below = min.and_then(Value::as_f64).is_some_and(|min| number < min);
        let above = max.and_then(Value::as_f64).is_some_and(|max| number > max);
        if below || above {
            let bounds = match (min, max) {
                (Some(min), Some(max)) => format!("between {min} and {max}"),
                (Some(min), None) => format!("at least {min}"),
                (None, Some(max)) => format!("at most {max}"),
                (None, None) => String::from("within its range"),
            };
            return Err(field_error(path, "out_of_range", format!("Field {path} must be {bounds}")));
        }
    }
    match value {
        Value::Object(inner) if schema.get("properties").is_some() => check_object(schema, inner, path)?,
        Value::Array(items) => {
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64).filter(|&max| items.len() as u64 > max) {
                return Err(field_error(
                    path,
                    "too_many_items",
                    format!("Field {path} has too many items: at most {max}"),
                ));
            }
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64).filter(|&min| (items.len() as u64) < min)
            {
                return Err(field_error(
                    path,
                    "too_few_items",
                    format!("Field {path} has too few items: at least {min}"),
                ));
            }
            if let Some(item) = schema.get("items") {
                for (i, value) in items.iter().enumerate() {
                    check_value(item, value, &format!("{path}[{i}]"))?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The range of an integer `format` as schemars writes it for a Rust integer type.
fn integer_bounds(format: &str) -> Option<(i128, i128)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" | "uint" => (0, u64::MAX.into()),
        _ => return None,
    })
}

/// The patterns the request types' schemas carry, each checked by its domain type.
enum Pattern {
    /// [`money::AMOUNT_PATTERN`], [`money::SIGNED_AMOUNT_PATTERN`].
    Amount,
    /// [`percent::RATE_PATTERN`].
    Rate,
    /// [`text::PLAIN_PATTERN`]: a name or a description.
    Plain,
}

impl Pattern {
    fn of(pattern: &str) -> Option<Pattern> {
        match pattern {
            money::AMOUNT_PATTERN | money::SIGNED_AMOUNT_PATTERN => Some(Pattern::Amount),
            percent::RATE_PATTERN => Some(Pattern::Rate),
            text::PLAIN_PATTERN => Some(Pattern::Plain),
            _ => None,
        }
    }
}

fn type_matches(expected: &Value, value: &Value) -> bool {
    match expected {
        Value::String(t) => match t.as_str() {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            "null" => value.is_null(),
            _ => true,
        },
        Value::Array(types) => types.iter().any(|t| type_matches(t, value)),
        _ => true,
    }
}

/// Deserialises a field that distinguishes "absent" (`None`) from "null" (`Some(None)`),
/// for PATCH bodies where null clears a value.
pub fn nullable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(deserializer).map(Some)
}

/// The keywords of a generated schema that say what a value is, without constraining
/// it: the check has nothing to enforce for them.
/// (`contentEncoding` is one in JSON Schema 2020-12: the upload tool decodes its base64
/// itself, refusing `invalid_base64` with the field.)
const ANNOTATIONS: &[&str] =
    &["$schema", "title", "description", "default", "examples", "readOnly", "writeOnly", "contentEncoding"];

/// Where `schema` says more than [`check_object`] enforces: each keyword (with its JSON
/// path) the check would let a value through despite — an unknown keyword, a `format`
/// or `pattern` it does not check, an open `additionalProperties` schema. Empty for
/// every schema the doors check arguments and bodies against (a unit test walks them).
pub fn unenforced(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    walk(schema, "#", &mut found);
    found
}

fn walk(schema: &Value, path: &str, found: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        if !schema.is_boolean() {
            found.push(format!("{path}: not a schema"));
        }
        return;
    };
    for (key, value) in object {
        let at = format!("{path}/{key}");
        match key.as_str() {
            "type" | "enum" | "const" | "required" | "minLength" | "maxLength" | "minimum" | "maximum" | "maxItems"
            | "minItems" => {}
            _ if ANNOTATIONS.contains(&key.as_str()) || key.starts_with("x-") => {}
            "properties" => {
                for (name, property) in value.as_object().into_iter().flatten() {
                    walk(property, &format!("{at}/{name}"), found);
                }
            }
            "anyOf" | "oneOf" => {
                for (i, branch) in value.as_array().into_iter().flatten().enumerate() {
                    walk(branch, &format!("{at}/{i}"), found);
                }
            }
            "items" => walk(value, &at, found),
            // `false` is enforced (unknown fields refused); `true` allows what it says.
            "additionalProperties" if value.is_boolean() => {}
            "format"
                if value.as_str().is_some_and(|f| {
                    matches!(f, "uuid" | "date" | "date-time" | "email") || integer_bounds(f).is_some()
                }) => {}
            "pattern" if value.as_str().and_then(Pattern::of).is_some() => {}
            _ => found.push(at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(schema: Value, value: Value) -> Option<String> {
        let object = json!({ "x": value });
        let schema = json!({ "type": "object", "properties": { "x": schema }, "additionalProperties": false });
        check_object(&schema, object.as_object().unwrap(), "").err().map(|e| {
            let details = e.details.unwrap_or_default();
            assert_eq!(details["field"], "x");
            details["reason"].as_str().unwrap_or("").to_string()
        })
    }

    #[test]
    fn the_check_enforces_formats_and_patterns_it_claims() {
        let int64 = json!({ "type": "integer", "format": "int64" });
        assert_eq!(reason(int64.clone(), json!(i64::MAX)), None);
        assert_eq!(reason(int64, json!(u64::MAX)).as_deref(), Some("out_of_range"));
        assert_eq!(
            reason(json!({ "type": "integer", "format": "uint8" }), json!(256)).as_deref(),
            Some("out_of_range")
        );
        let rate = json!({ "type": "string", "pattern": percent::RATE_PATTERN });
        assert_eq!(reason(rate.clone(), json!("1.50")), None);
        for bad in ["1", "1000.00", "-1.00", "1,50"] {
            assert_eq!(reason(rate.clone(), json!(bad)).as_deref(), Some("invalid_format"), "{bad}");
        }
        let amount = json!({ "type": "string", "pattern": money::AMOUNT_PATTERN });
        assert_eq!(reason(amount, json!("-1.00")).as_deref(), Some("invalid_amount"));
        let some = json!({ "type": "array", "minItems": 1, "maxItems": 2 });
        assert_eq!(reason(some.clone(), json!([])).as_deref(), Some("too_few_items"));
        assert_eq!(reason(some.clone(), json!([1])), None);
        assert_eq!(reason(some, json!([1, 2, 3])).as_deref(), Some("too_many_items"));
    }

    /// A value no branch of an `anyOf` takes is refused as the branch of its type
    /// refuses it: a malformed id where an id or an object of operators is taken.
    #[test]
    fn a_value_no_branch_takes_is_refused_by_the_branch_of_its_type() {
        let id_or_operators = json!({ "anyOf": [{ "type": "string", "format": "uuid" }, { "type": "object", "additionalProperties": false }] });
        assert_eq!(reason(id_or_operators.clone(), json!("nope")).as_deref(), Some("invalid_uuid"));
        assert_eq!(reason(id_or_operators, json!(1)).as_deref(), Some("wrong_type"));
        let nullable = json!({ "anyOf": [{ "type": "null" }, { "type": "string", "enum": ["a"] }] });
        assert_eq!(reason(nullable, json!("b")).as_deref(), Some("invalid_value"));
    }

    #[test]
    fn unenforced_names_what_the_check_would_let_through() {
        let schema = json!({
            "type": "object",
            "description": "d",
            "properties": {
                "a": { "type": "array", "uniqueItems": true, "minItems": 1, "items": { "type": "string", "format": "hostname" } },
                "b": { "anyOf": [{ "type": "string", "pattern": "^[a-z]+$" }, { "type": "null" }] },
                "c": { "type": "object", "additionalProperties": { "type": "string" } },
                "d": { "type": "string", "format": "uuid", "pattern": money::SIGNED_AMOUNT_PATTERN, "x-note": 1 }
            },
            "additionalProperties": false,
            "required": ["a"]
        });
        assert_eq!(
            unenforced(&schema),
            [
                "#/properties/a/items/format",
                "#/properties/a/uniqueItems",
                "#/properties/b/anyOf/0/pattern",
                "#/properties/c/additionalProperties"
            ]
        );
    }
}
