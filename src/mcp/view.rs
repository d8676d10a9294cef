//! Views of the one server (SPEC §5.4): narrower catalogues for clients that need them.
//! Cursor hands an agent only a server's first 40 tools, and a reporting agent should
//! not be able to change anything, so a connection may ask for some toolsets only
//! (`/mcp/x/payables,receivables`, `X-MCP-Toolsets: payables,receivables`) and for the
//! read-only tools only (`/mcp/readonly`, `X-MCP-Readonly: true`). Path and headers
//! together narrow to what both allow.
//!
//! A view is not a permission: it only hides. Whatever a view leaves out is unknown on
//! that connection (`tools/call` answers -32602 as for a name that does not exist), and
//! whatever it keeps is still subject to the token's scopes and the caller's role.

use http::HeaderMap;

use std::sync::OnceLock;

use crate::domain::roles::{Access, Resource};
use crate::ops::machinery::resource::{Declaration, Deletable, Records, Registrar, Writable, Written};
use crate::protocol::rpc::RpcError;

/// A toolset of SPEC §5.4: the tools of one line of the registry
/// ([`crate::ops::registry::register`]), in its order, under the name that line gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Toolset(u8);

/// Each toolset's name and the resource its tools work on, in the registry's order.
struct Toolsets(Vec<(&'static str, Resource)>);

impl Registrar for Toolsets {
    fn records<R: Writable + Deletable>(&mut self, toolset: &'static str, declaration: &'static Declaration) {
        self.0.push((toolset, declaration.resource));
    }

    fn read_only<R: Records>(&mut self, toolset: &'static str, declaration: &'static Declaration) {
        self.0.push((toolset, declaration.resource));
    }

    fn own(&mut self, toolset: &'static str, declaration: &'static Declaration) {
        self.0.push((toolset, declaration.resource));
    }

    fn written(&mut self, written: &'static Written) {
        if let Some(toolset) = written.toolset {
            self.0.push((toolset, written.resource));
        }
    }
}

fn toolsets() -> &'static [(&'static str, Resource)] {
    static TOOLSETS: OnceLock<Vec<(&'static str, Resource)>> = OnceLock::new();
    TOOLSETS.get_or_init(|| {
        let mut toolsets = Toolsets(Vec::new());
        crate::ops::registry::register(&mut toolsets);
        assert!(toolsets.0.len() < u32::BITS as usize, "a view keeps its toolsets in a u32");
        toolsets.0
    })
}

impl Toolset {
    /// In catalogue order (SPEC §5: the money flow first).
    pub fn all() -> impl Iterator<Item = Toolset> {
        (0..toolsets().len()).map(|i| Toolset(i as u8))
    }

    pub fn as_str(self) -> &'static str {
        toolsets()[usize::from(self.0)].0
    }

    pub fn parse(name: &str) -> Option<Toolset> {
        Toolset::all().find(|t| t.as_str() == name)
    }

    /// The toolset of the tool `name` (`finance_<toolset>_<action>`); none for the
    /// workspace list.
    pub fn of_tool(name: &str) -> Option<Toolset> {
        let rest = name.strip_prefix("finance_")?;
        Toolset::all().find(|t| rest.strip_prefix(t.as_str()).is_some_and(|action| action.starts_with('_')))
    }

    /// The toolset whose tools work on `resource` (transactions, not transfers, for
    /// [`Resource::Transactions`]); none for who has access.
    pub fn of_resource(resource: Resource) -> Option<Toolset> {
        Toolset::all().find(|t| toolsets()[usize::from(t.0)].1 == resource)
    }

    fn bit(self) -> u32 {
        1 << self.0
    }

    fn names() -> String {
        Toolset::all().map(Toolset::as_str).collect::<Vec<_>>().join(", ")
    }
}

/// A toolset is taken by its name (find mode's `toolset` argument).
impl<'de> serde::Deserialize<'de> for Toolset {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Toolset, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Toolset::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown toolset {:?}; valid toolsets are {}",
                truncated(&name),
                Toolset::names()
            ))
        })
    }
}

/// Its names, as a string enum.
impl schemars::JsonSchema for Toolset {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Toolset".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Toolset::all().map(Toolset::as_str).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

/// What one request's connection may see of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    toolsets: u32,
    read_only: bool,
    /// Find mode (SPEC §5.5): a small fixed catalogue that searches and runs the tools
    /// of the view (`/mcp/find`, `X-MCP-Find: true`).
    find: bool,
}

impl View {
    /// The whole server (`/`, `/mcp` without view headers).
    /// Every toolset, every tool.
    pub fn all() -> View {
        View { toolsets: (1 << toolsets().len()) - 1, read_only: false, find: false }
    }

    /// The view a request asks for by its path and headers. The path is one of the MCP
    /// endpoint's: `/`, `/mcp`, `/mcp/readonly`, `/mcp/x/{toolsets}`,
    /// `/mcp/x/{toolsets}/readonly`, `/mcp/find` or `/mcp/find/readonly`; an unknown
    /// toolset name or a malformed header is 400, -32602, naming the valid values.
    pub fn of_request(path: &str, headers: &HeaderMap) -> Result<View, RpcError> {
        let mut view = View::all();
        let segments: Vec<&str> = path.strip_prefix("/mcp/").map(|rest| rest.split('/').collect()).unwrap_or_default();
        match segments.as_slice() {
            [] => {}
            ["readonly"] => view.read_only = true,
            ["find"] => view.find = true,
            ["find", "readonly"] => {
                view.find = true;
                view.read_only = true;
            }
            ["x", list] => view.toolsets &= parse_toolsets(&percent_decode(list), "the path /mcp/x/{toolsets}")?,
            ["x", list, "readonly"] => {
                view.toolsets &= parse_toolsets(&percent_decode(list), "the path /mcp/x/{toolsets}")?;
                view.read_only = true;
            }
            _ => {
                return Err(RpcError::bad_params(
                    "Unknown view path: use /mcp/x/{toolsets}, /mcp/readonly, /mcp/x/{toolsets}/readonly, /mcp/find \
                     or /mcp/find/readonly",
                ))
            }
        }
        if let Some(value) = headers.get("x-mcp-toolsets") {
            let value = value.to_str().map_err(|_| invalid_toolsets("X-MCP-Toolsets", "not text"))?;
            view.toolsets &= parse_toolsets(value, "X-MCP-Toolsets")?;
        }
        if flag(headers, "x-mcp-readonly", "X-MCP-Readonly")? {
            view.read_only = true;
        }
        if flag(headers, "x-mcp-find", "X-MCP-Find")? {
            view.find = true;
        }
        Ok(view)
    }

    /// Only these toolsets.
    #[cfg(test)]
    pub fn of(toolsets: &[Toolset], read_only: bool) -> View {
        View { toolsets: toolsets.iter().fold(0, |bits, t| bits | t.bit()), read_only, find: false }
    }

    #[cfg(test)]
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Find mode (SPEC §5.5): `tools/list` and `tools/call` answer the search and the
    /// runners, which reach the tools this view offers.
    pub fn is_find(&self) -> bool {
        self.find
    }

    pub fn has(&self, toolset: Toolset) -> bool {
        self.toolsets & toolset.bit() != 0
    }

    /// Whether the view offers the tool named `name` (read-only views: only the tools
    /// that only read).
    pub fn offers_tool(&self, name: &str, read_only_tool: bool) -> bool {
        (read_only_tool || !self.read_only) && Toolset::of_tool(name).is_none_or(|t| self.has(t))
    }

    /// Whether the view offers the records of `resource` (record templates, their
    /// completion).
    pub fn offers_resource(&self, resource: Resource) -> bool {
        Toolset::of_resource(resource).is_some_and(|t| self.has(t))
    }

    /// Whether the view offers a prompt that needs `needs`: every resource it works on
    /// is in the view, and in a read-only view it changes nothing.
    pub fn offers_prompt(&self, needs: &[(Resource, Access)]) -> bool {
        needs
            .iter()
            .all(|&(resource, access)| self.offers_resource(resource) && (access == Access::Read || !self.read_only))
    }
}

/// A `true`/`false` header (any case); absent is false.
fn flag(headers: &HeaderMap, name: &str, shown: &str) -> Result<bool, RpcError> {
    let Some(value) = headers.get(name) else { return Ok(false) };
    match value.to_str().map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        Ok("true") => Ok(true),
        Ok("false") => Ok(false),
        _ => Err(RpcError::bad_params(format!("{shown} must be true or false"))),
    }
}

fn invalid_toolsets(source: &str, what: &str) -> RpcError {
    RpcError::bad_params(format!("{source}: {what}; valid toolsets are {}", Toolset::names()))
}

/// A comma-separated list of toolset names (surrounding whitespace ignored).
fn parse_toolsets(list: &str, source: &str) -> Result<u32, RpcError> {
    let mut bits = 0;
    for name in list.split(',').map(str::trim) {
        match Toolset::parse(name) {
            Some(t) => bits |= t.bit(),
            None if name.is_empty() => return Err(invalid_toolsets(source, "an empty toolset name")),
            None => return Err(invalid_toolsets(source, &format!("unknown toolset {:?}", truncated(name)))),
        }
    }
    Ok(bits)
}

/// A name as an error message may quote it: short, printable.
fn truncated(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).take(40).collect()
}

/// `%2C` and friends in a path segment (clients may encode the comma).
fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toolset(name: &str) -> Toolset {
        Toolset::parse(name).unwrap()
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn paths_and_headers_narrow_together() {
        let none = HeaderMap::new();
        assert_eq!(View::of_request("/", &none).unwrap(), View::all());
        assert_eq!(View::of_request("/mcp", &none).unwrap(), View::all());
        assert_eq!(View::of_request("/mcp/readonly", &none).unwrap(), View { read_only: true, ..View::all() });
        let pr = View::of(&[toolset("payables"), toolset("receivables")], false);
        assert_eq!(View::of_request("/mcp/x/payables,receivables", &none).unwrap(), pr);
        assert_eq!(View::of_request("/mcp/x/payables%2Creceivables", &none).unwrap(), pr);
        assert_eq!(
            View::of_request("/mcp/x/payables,receivables/readonly", &none).unwrap(),
            View { read_only: true, ..pr }
        );
        assert_eq!(View::of_request("/", &headers(&[("x-mcp-toolsets", " payables , receivables ")])).unwrap(), pr);
        // Both: what both allow.
        let both = View::of_request(
            "/mcp/x/payables,receivables",
            &headers(&[("x-mcp-toolsets", "receivables,taxes"), ("x-mcp-readonly", "true")]),
        )
        .unwrap();
        assert_eq!(both, View::of(&[toolset("receivables")], true));
        // Find mode: by path (alone or read-only) or by header on any view.
        let find = View::of_request("/mcp/find", &none).unwrap();
        assert!(find.is_find() && !find.is_read_only());
        assert_eq!(View { find: false, ..find }, View::all());
        assert!(View::of_request("/mcp/find/readonly", &none).unwrap().is_read_only());
        let narrowed = View::of_request("/mcp/x/payables", &headers(&[("x-mcp-find", "True")])).unwrap();
        assert_eq!(narrowed, View { find: true, ..View::of(&[toolset("payables")], false) });
        assert!(View::of_request("/mcp/find", &headers(&[("x-mcp-find", "false")])).unwrap().is_find());
        // A header cannot widen what the path narrowed.
        assert!(View::of_request("/mcp/readonly", &headers(&[("x-mcp-readonly", "false")])).unwrap().is_read_only());
    }

    #[test]
    fn unknown_names_and_malformed_headers_are_refused_naming_the_valid_values() {
        let none = HeaderMap::new();
        for (path, h) in [
            ("/mcp/x/payables,wages", none.clone()),
            ("/mcp/x/payables,", none.clone()),
            ("/", headers(&[("x-mcp-toolsets", "Payables")])),
            ("/", headers(&[("x-mcp-toolsets", "")])),
        ] {
            let e = View::of_request(path, &h).unwrap_err();
            assert_eq!((e.status.as_u16(), e.code), (400, crate::protocol::rpc::INVALID_PARAMS), "{path}");
            assert!(
                e.message.contains("payables, receivables, reconciliations, transactions, transfers"),
                "{}",
                e.message
            );
        }
        for value in ["yes", "1", ""] {
            let mut h = HeaderMap::new();
            h.insert("x-mcp-readonly", value.parse().unwrap());
            let e = View::of_request("/mcp", &h).unwrap_err();
            assert_eq!((e.status.as_u16(), e.code), (400, crate::protocol::rpc::INVALID_PARAMS), "{value:?}");
            assert!(e.message.contains("true or false"));
            let mut h = HeaderMap::new();
            h.insert("x-mcp-find", value.parse().unwrap());
            assert!(View::of_request("/mcp", &h).unwrap_err().message.contains("X-MCP-Find must be true or false"));
        }
    }

    #[test]
    fn a_toolset_is_taken_by_its_name() {
        for toolset in Toolset::all() {
            let parsed: Toolset = serde_json::from_value(serde_json::json!(toolset.as_str())).unwrap();
            assert_eq!(parsed, toolset);
        }
        let unknown = serde_json::from_value::<Toolset>(serde_json::json!("ledger")).unwrap_err().to_string();
        assert!(unknown.contains("unknown toolset \"ledger\"") && unknown.contains("reports, cash_flow"), "{unknown}");
        assert_eq!(View::all(), View::of(&Toolset::all().collect::<Vec<_>>(), false));
    }

    #[test]
    fn every_tool_name_has_its_toolset() {
        assert_eq!(Toolset::of_tool("finance_workspaces_list"), None);
        assert_eq!(Toolset::of_tool("finance_transfers_create"), Toolset::parse("transfers"));
        assert_eq!(Toolset::of_tool("finance_transactions_aggregates"), Toolset::parse("transactions"));
        assert_eq!(Toolset::of_tool("finance_cost_centers_list"), Toolset::parse("cost_centers"));
        let read_only = View::of(&[toolset("payables")], true);
        assert!(read_only.offers_tool("finance_payables_list", true));
        assert!(!read_only.offers_tool("finance_payables_settle", false));
        assert!(!read_only.offers_tool("finance_receivables_list", true));
        assert!(read_only.offers_tool("finance_workspaces_list", true));
    }
}
