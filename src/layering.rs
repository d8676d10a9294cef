//! The layering of the crate, checked on its sources: a layer never names a layer above
//! it (see the crate documentation for the order). Comments are not code and are not
//! read. Beside it, the size a source file may grow to before it is split by concern.

use std::path::{Path, PathBuf};

/// Each checked folder of `src/` and the modules it must not name.
const RULES: &[(&str, &[&str])] = &[
    ("storage", &["ops", "mcp", "transport", "app"]),
    ("auth", &["ops", "mcp", "transport", "app"]),
    ("domain", &["ops", "mcp", "transport", "app"]),
    ("protocol", &["ops", "mcp", "transport", "app"]),
    ("ops", &["mcp", "transport", "app"]),
    ("gateway", &["storage", "ops", "mcp", "transport", "app"]),
    ("mcp", &["transport"]),
    ("oauth", &["ops", "mcp", "transport", "app"]),
];

/// Known crossings, as (file under `src/`, module named), each to be removed with the
/// change that ends it. None today.
const ALLOWED: &[(&str, &str)] = &[];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a source names through `crate::`, `crate::{a, b::c}` included.
fn named_modules(source: &str) -> Vec<String> {
    let code: String = source.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let mut named = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        named.push(std::mem::take(&mut item));
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            named.push(item);
        } else {
            named.push(rest.to_string());
        }
    }
    named
        .iter()
        .map(|path| path.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
        .filter(|name: &String| !name.is_empty())
        .collect()
}

#[test]
fn no_layer_names_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut crossings = Vec::new();
    let mut allowed_seen = Vec::new();
    for (folder, forbidden) in RULES {
        let mut files = Vec::new();
        sources(&src.join(folder), &mut files);
        for file in files {
            let relative = file.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
            let source = std::fs::read_to_string(&file).unwrap();
            for name in named_modules(&source) {
                if !forbidden.contains(&name.as_str()) {
                    continue;
                }
                match ALLOWED.iter().find(|allowed| **allowed == (relative.as_str(), name.as_str())) {
                    Some(allowed) => allowed_seen.push(*allowed),
                    None => crossings.push(format!("{relative} names crate::{name}")),
                }
            }
        }
    }
    crossings.sort();
    crossings.dedup();
    assert!(crossings.is_empty(), "layering crossed:\n{}", crossings.join("\n"));
    let stale: Vec<_> = ALLOWED.iter().filter(|allowed| !allowed_seen.contains(allowed)).collect();
    assert!(stale.is_empty(), "allowed crossings that no longer happen (remove them): {stale:?}");
}

/// The most lines a file of `src/` may hold: past it, a file holds more than one concern.
const MOST_LINES: usize = 800;

#[test]
fn no_source_file_is_over_the_line_bound() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 50, "the sources of src/ were not found");
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(file).unwrap().lines().count();
            (lines > MOST_LINES).then(|| format!("{} has {lines} lines", file.strip_prefix(&src).unwrap().display()))
        })
        .collect();
    long.sort();
    assert!(long.is_empty(), "split by concern, each file at most {MOST_LINES} lines:\n{}", long.join("\n"));
}

#[test]
fn grouped_and_nested_paths_are_read() {
    let source = "use crate::{app::AppState, ops::{self, Channel}};\n// crate::transport in a comment\nlet x = crate::mcp::tools::find;";
    assert_eq!(named_modules(source), ["app", "ops", "mcp"]);
}
