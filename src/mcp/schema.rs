//! The JSON Schemas `tools/list` shows, made compact (SPEC §5): an agent pays for every
//! byte of a tool's schema out of its context window, so what the request types
//! generate is trimmed to what tells the agent something, without changing what the
//! schema means.
//!
//! * `"default": null` goes (an optional field that is absent is null anyway), and so
//!   do the numeric `format`s schemars adds (`int64`, `double`, …: not JSON Schema
//!   formats), `title`, `$schema` and the `/v1` document's `x-` annotations.
//! * An input schema keeps its fields' descriptions (the `/v1` documentation of each
//!   field) but not the descriptions of object types (the request type's names its
//!   route; a nested item's says it is an item).
//! * An output schema is structure only: clients validate `structuredContent` against
//!   it; no model reads it, so it carries no descriptions and no enums (the `/v1`
//!   document lists the values).
//! * What repeats inside one schema — the value-or-operators object of each list filter
//!   kind — is defined once in `$defs` and referenced (built so by the list tools).
//!
//! [`resolve`] inlines the references again: `tools/call` checks arguments against the
//! resolved schema, which is the uncompacted one minus annotations the check never read.

use serde_json::{Map, Value};

/// Schema keywords whose value is a map of property names to schemas.
const SCHEMA_MAPS: &[&str] = &["properties", "patternProperties", "$defs"];
/// Schema keywords whose value is a schema or a list of schemas.
const SUBSCHEMAS: &[&str] = &["items", "additionalProperties", "anyOf", "oneOf", "allOf", "not", "prefixItems"];

/// Whether the schema is a tool's input (field descriptions kept) or output (none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Input,
    Output,
}

/// The compact form of a generated schema.
pub fn compact(schema: Value, side: Side) -> Value {
    trim(schema, side)
}

fn trim(schema: Value, side: Side) -> Value {
    let Value::Object(object) = schema else { return schema };
    let describes_a_type = object.contains_key("properties");
    let mut out = Map::with_capacity(object.len());
    for (key, value) in object {
        let noise = match key.as_str() {
            "default" => value.is_null(),
            "format" => value
                .as_str()
                .is_some_and(|f| f.starts_with("int") || f.starts_with("uint") || f == "double" || f == "float"),
            // `x-kobana-extension` and the like: the `/v1` document's.
            "title" | "$schema" => true,
            other if other.starts_with("x-") => true,
            "description" => side == Side::Output || describes_a_type,
            "enum" => side == Side::Output,
            _ => false,
        };
        if noise {
            continue;
        }
        let value = if SCHEMA_MAPS.contains(&key.as_str()) {
            match value {
                Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, trim(v, side))).collect()),
                other => other,
            }
        } else if SUBSCHEMAS.contains(&key.as_str()) {
            match value {
                Value::Array(list) => Value::Array(list.into_iter().map(|v| trim(v, side)).collect()),
                other => trim(other, side),
            }
        } else {
            value
        };
        out.insert(key, value);
    }
    Value::Object(out)
}

/// The schema with every local reference (`#/$defs/name`) replaced by its definition
/// and `$defs` removed. A reference to something that is not there stays as it is.
pub fn resolve(schema: &Value) -> Value {
    let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut resolved = inline(schema, &defs, 0);
    if let Some(root) = resolved.as_object_mut() {
        root.remove("$defs");
    }
    resolved
}

fn inline(schema: &Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match schema {
        Value::Object(object) => {
            if let Some(target) = object.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
                if let Some(definition) = defs.get(target).filter(|_| depth < 32) {
                    return inline(definition, defs, depth + 1);
                }
            }
            let mut out = Map::with_capacity(object.len());
            for (key, value) in object {
                let value = if SCHEMA_MAPS.contains(&key.as_str()) && key != "$defs" {
                    match value {
                        Value::Object(map) => {
                            Value::Object(map.iter().map(|(k, v)| (k.clone(), inline(v, defs, depth))).collect())
                        }
                        other => other.clone(),
                    }
                } else if SUBSCHEMAS.contains(&key.as_str()) {
                    match value {
                        Value::Array(list) => Value::Array(list.iter().map(|v| inline(v, defs, depth)).collect()),
                        other => inline(other, defs, depth),
                    }
                } else {
                    value.clone()
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn noise_goes_and_property_names_are_never_mistaken_for_keywords() {
        let generated = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "BillingCreate",
            "description": "`POST /v1/payables`",
            "type": "object",
            "properties": {
                "description": { "type": "string", "description": "What the bill is for" },
                "title": { "type": ["string", "null"], "default": null },
                "default": { "type": "integer", "format": "int64", "default": 3 },
                "due": { "type": "string", "format": "date" },
            },
            "required": ["description"],
        });
        let input = compact(generated.clone(), Side::Input);
        assert_eq!(
            input,
            json!({
                "type": "object",
                "properties": {
                    "description": { "type": "string", "description": "What the bill is for" },
                    "title": { "type": ["string", "null"] },
                    "default": { "type": "integer", "default": 3 },
                    "due": { "type": "string", "format": "date" },
                },
                "required": ["description"],
            })
        );
        let output = compact(generated, Side::Output);
        assert_eq!(output["properties"]["description"], json!({ "type": "string" }));
        assert!(output["properties"]["title"].is_object());
    }

    #[test]
    fn resolve_inlines_local_references() {
        let schema = json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/$defs/uuid" }, "b": { "type": "array", "items": { "$ref": "#/$defs/uuid" } }, "c": { "$ref": "#/$defs/missing" } },
            "$defs": { "uuid": { "type": "string", "format": "uuid" } },
        });
        assert_eq!(
            resolve(&schema),
            json!({
                "type": "object",
                "properties": { "a": { "type": "string", "format": "uuid" }, "b": { "type": "array", "items": { "type": "string", "format": "uuid" } }, "c": { "$ref": "#/$defs/missing" } },
            })
        );
    }
}
