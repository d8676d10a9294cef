//! The catalogue as `tools/list` shows it, serialised before the server starts.
//!
//! Each tool's schemas come from the request types and never change while the server
//! runs, so generating them (schemars, then [`super::schema::compact`]) on a request's
//! path — even once, on the first `tools/list` after a cold start — is work the build
//! can do. `listing.tsv`, embedded in the binary, holds one line per tool in catalogue
//! order: the JSON fragments `tools/list` splices (name, annotations, description,
//! inputSchema, outputSchema or nothing, title, separated by tabs — compact JSON never
//! holds a raw tab or newline). A request copies bytes, it builds nothing; the first
//! one only splits the embedded text into slices. A unit test regenerates the file from
//! the catalogue and fails when it differs; `KFIN_WRITE_CATALOGUE=1 cargo test --lib
//! listing` rewrites it.

use std::sync::OnceLock;

use serde_json::Value;

use super::schema;

/// One tool's serialised parts (each a JSON value as text), in the order of the keys of
/// the tool object: `annotations`, `description`, `inputSchema`, `name`, `outputSchema`,
/// `title`.
pub struct Listed {
    pub name: &'static str,
    pub annotations: &'static str,
    pub description: &'static str,
    pub input: &'static str,
    pub output: Option<&'static str>,
    pub title: &'static str,
    /// The input schema resolved (no `$ref`): what `tools/call` checks, parsed on the
    /// tool's first call.
    check: OnceLock<Option<Value>>,
}

impl Listed {
    fn parse(line: &'static str) -> Option<Listed> {
        let mut parts = line.split('\t');
        let mut next = || parts.next();
        let (name, annotations, description, input, output, title) =
            (next()?, next()?, next()?, next()?, next()?, next()?);
        let output = (!output.is_empty()).then_some(output);
        Some(Listed { name, annotations, description, input, output, title, check: OnceLock::new() })
    }

    /// Appends the tool object as the era shows it: 2025-03-26 has no `title` and no
    /// `outputSchema`.
    pub fn write(&self, out: &mut String, with_title_and_output: bool) {
        out.push_str("{\"annotations\":");
        out.push_str(self.annotations);
        out.push_str(",\"description\":");
        out.push_str(self.description);
        out.push_str(",\"inputSchema\":");
        out.push_str(self.input);
        out.push_str(",\"name\":\"");
        out.push_str(self.name);
        out.push('"');
        if with_title_and_output {
            if let Some(output) = self.output {
                out.push_str(",\"outputSchema\":");
                out.push_str(output);
            }
            out.push_str(",\"title\":");
            out.push_str(self.title);
        }
        out.push('}');
    }

    /// The serialised length of [`Listed::write`] with everything.
    pub fn serialised_len(&self) -> usize {
        90 + self.annotations.len()
            + self.description.len()
            + self.input.len()
            + self.name.len()
            + self.output.map_or(0, str::len)
            + self.title.len()
    }

    /// The resolved input schema `tools/call` checks arguments against; `None` if the
    /// entry could not be read (the caller then generates the schema from the tool).
    pub fn check_schema(&self) -> Option<&Value> {
        self.check.get_or_init(|| serde_json::from_str(self.input).ok().map(|input| schema::resolve(&input))).as_ref()
    }
}

const LISTING: &str = include_str!("listing.tsv");

/// Every tool's serialised parts, in catalogue order.
pub fn all() -> &'static [Listed] {
    static ALL: OnceLock<Vec<Listed>> = OnceLock::new();
    ALL.get_or_init(|| LISTING.lines().filter_map(Listed::parse).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::schema::Side;
    use crate::mcp::tools::{catalogue, ToolSpec};

    /// The parts of `tool` as the catalogue generates them now.
    fn generate(tool: &ToolSpec) -> (String, String, String, Option<String>, String) {
        let described = tool.describe(&schema::compact(tool.input_schema(), Side::Input));
        let part = |key: &str| described[key].to_string();
        (
            part("annotations"),
            part("description"),
            part("inputSchema"),
            described.get("outputSchema").map(Value::to_string),
            part("title"),
        )
    }

    fn render() -> String {
        let mut file = String::new();
        for tool in catalogue() {
            let (annotations, description, input, output, title) = generate(tool);
            let line =
                [tool.name, &annotations, &description, &input, output.as_deref().unwrap_or(""), &title].join("\t");
            assert!(!line.contains('\n') && line.split('\t').count() == 6, "{}", tool.name);
            file.push_str(&line);
            file.push('\n');
        }
        file
    }

    /// The committed fragments are what the catalogue generates: a change to a tool, a
    /// request type or the compaction shows here until the file is regenerated.
    #[test]
    fn listing_is_generated_from_the_catalogue() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/mcp/listing.tsv");
        let expected = render();
        if std::env::var_os("KFIN_WRITE_CATALOGUE").is_some() {
            std::fs::write(path, &expected).unwrap();
        }
        let committed = std::fs::read_to_string(path).unwrap();
        assert!(
            committed == expected,
            "src/mcp/listing.tsv is out of date: run KFIN_WRITE_CATALOGUE=1 cargo test --lib listing"
        );
    }

    /// `tools/call` checks arguments against each tool's resolved input schema: the check
    /// enforces every keyword that schema states.
    #[test]
    fn every_input_schema_is_enforced_by_the_check() {
        let mut refused = Vec::new();
        for listed in all() {
            let schema = listed.check_schema().expect(listed.name);
            refused.extend(
                crate::ops::machinery::validate::unenforced(schema)
                    .into_iter()
                    .map(|k| format!("{}: {k}", listed.name)),
            );
        }
        assert!(refused.is_empty(), "keywords the argument check does not enforce:\n{}", refused.join("\n"));
    }

    /// Spliced, each tool is byte for byte the object the catalogue describes, in both
    /// era forms, and the check schema is the resolved input schema.
    #[test]
    fn spliced_tools_are_the_described_ones() {
        let tools: Vec<&ToolSpec> = catalogue().collect();
        assert_eq!(tools.len(), all().len());
        for (tool, listed) in tools.iter().zip(all()) {
            assert_eq!(tool.name, listed.name);
            let mut described = tool.describe(&schema::compact(tool.input_schema(), Side::Input));
            let mut out = String::new();
            listed.write(&mut out, true);
            assert_eq!(out, described.to_string(), "{}", tool.name);
            assert!(out.len() <= listed.serialised_len(), "{}", tool.name);
            let object = described.as_object_mut().unwrap();
            object.remove("title");
            object.remove("outputSchema");
            out.clear();
            listed.write(&mut out, false);
            assert_eq!(out, described.to_string(), "{}", tool.name);
            assert_eq!(
                listed.check_schema(),
                Some(&schema::resolve(&schema::compact(tool.input_schema(), Side::Input))),
                "{}",
                tool.name
            );
        }
    }
}
