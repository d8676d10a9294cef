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
fn cached_schema<T: JsonSchema + 'static>() -> &'static Value {
    static SCHEMAS: OnceLock<RwLock<HashMap<TypeId, &'static Value>>> = OnceLock::new();
    let schemas = SCHEMAS.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(schema) = schemas.read().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return schema;
    }
    let mut schemas = schemas.write().unwrap_or_else(|e| e.into_inner());
    schemas.entry(id).or_insert_with(|| Box::leak(Box::new(schema_of::<T>())))
}

/// Checks `value` against `T`'s schema and deserialises it.
pub fn parse<T: JsonSchema + DeserializeOwned + 'static>(value: Value) -> Result<T, ApiError> {
    let Value::Object(object) = &value else {
        return Err(ApiError::bad_request("The request body must be a JSON object")
            .with_details(json!({"reason": "not_an_object"})));
    };
    check_object(cached_schema::<T>(), object, "")?;
    serde_json::from_value(value).map_err(|_| {
        ApiError::bad_request("The request body does not match the schema")
            .with_details(json!({"reason": "invalid_body"}))
    })
}

fn field_error(path: &str, reason: &str, message: String) -> ApiError {
    ApiError::bad_request(message).with_details(json!({ "field": path, "reason": reason }))
}

/// Checks an object against a schema: unknown fields (when `additionalProperties` is
/// false), required fields, and each present field's type, enum, string length, format
/// (`uuid`, `date`), pattern (the money patterns) and numeric range, recursing into
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
    // `anyOf`/`oneOf` (nullable enums and objects): one branch must accept the value.
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let mut last = None;
            for branch in branches {
                match check_value(branch, value, path) {
                    Ok(()) => return Ok(()),
                    Err(e) => last = Some(e),
                }
            }
            return Err(last.unwrap_or_else(|| field_error(path, "invalid_value", format!("Invalid value for {path}"))));
        }
    }
    if let Some(constant) = schema.get("const") {
        if constant != value {
            return Err(field_error(path, "invalid_value", format!("Invalid value for {path}")));
        }
    }
    if let Some(expected) = schema.get("type") {
        if !type_matches(expected, value) {
            return Err(ApiError::bad_request(format!("Field {path} has the wrong type"))
                .with_details(json!({ "field": path, "reason": "wrong_type", "expected": expected })));
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.contains(value) {
            return Err(ApiError::bad_request(format!("Field {path} is not one of the allowed values"))
                .with_details(json!({ "field": path, "reason": "invalid_value", "allowed": allowed })));
        }
    }
    if let Some(text) = value.as_str() {
        let chars = text.chars().count() as u64;
        if schema.get("minLength").and_then(Value::as_u64).is_some_and(|min| chars < min) {
            return Err(field_error(path, "too_short", format!("Field {path} is too short")));
        }
        if schema.get("maxLength").and_then(Value::as_u64).is_some_and(|max| chars > max) {
            return Err(field_error(path, "too_long", format!("Field {path} is too long")));
        }
    }
    if let (Some(format), Some(text)) = (schema.get("format").and_then(Value::as_str), value.as_str()) {
        match format {
            "uuid" if uuid::Uuid::parse_str(text).is_err() => {
                return Err(field_error(path, "invalid_uuid", format!("Field {path} must be a UUID")))
            }
            "date" if !crate::domain::dates::is_valid_date(text) => {
                return Err(field_error(path, "invalid_date", format!("Field {path} must be a date YYYY-MM-DD")))
            }
            _ => {}
        }
    }
    if let (Some(pattern), Some(text)) = (schema.get("pattern").and_then(Value::as_str), value.as_str()) {
        if let Some(reason) = crate::domain::money::pattern_refusal(pattern, text) {
            return Err(field_error(
                path,
                reason,
                format!("Field {path} must be an amount with 1-2 decimals, e.g. \"1500.00\""),
            ));
        }
    }
    if let Some(number) = value.as_f64() {
        let below = schema.get("minimum").and_then(Value::as_f64).is_some_and(|min| number < min);
        let above = schema.get("maximum").and_then(Value::as_f64).is_some_and(|max| number > max);
        if below || above {
            return Err(field_error(path, "out_of_range", format!("Field {path} is out of range")));
        }
    }
    match value {
        Value::Object(inner) if schema.get("properties").is_some() => check_object(schema, inner, path)?,
        Value::Array(items) => {
            if schema.get("maxItems").and_then(Value::as_u64).is_some_and(|max| items.len() as u64 > max) {
                return Err(field_error(path, "too_many_items", format!("Field {path} has too many items")));
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
