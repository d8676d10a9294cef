//! The workspace a request names for its connection: `X-Workspace-Id` or
//! `?workspace_id=`, which must agree. Both doors resolve it here, so the hint means the
//! same on `/v1` and on the MCP endpoint; which workspace a call then acts in (the hint,
//! a tool's `workspace_id`, else the caller's only one) is `OpContext::workspace`'s.

use http::HeaderMap;

use crate::error::ApiError;

/// The connection's default workspace, as the request named it.
#[derive(Debug, Default, Clone)]
pub struct WorkspaceHint {
    /// `X-Workspace-Id` (trimmed).
    pub header: Option<String>,
    /// `?workspace_id=`.
    pub query: Option<String>,
}

impl WorkspaceHint {
    /// The hint of a request: its `X-Workspace-Id` header (trimmed) and the first
    /// `workspace_id` of its query string, given as the form-decoded pairs its door
    /// read. An empty one names nothing.
    pub fn of_request<K: AsRef<str>, V: AsRef<str>>(
        headers: &HeaderMap,
        query: impl IntoIterator<Item = (K, V)>,
    ) -> WorkspaceHint {
        let named = |value: &str| Some(value.to_string()).filter(|v| !v.is_empty());
        let header = headers.get("x-workspace-id").and_then(|v| v.to_str().ok()).and_then(|v| named(v.trim()));
        let query = query
            .into_iter()
            .find(|(name, _)| name.as_ref() == "workspace_id")
            .and_then(|(_, value)| named(value.as_ref()));
        WorkspaceHint { header, query }
    }

    /// The default workspace: header and query must agree when both are given (400).
    pub fn resolve(&self) -> Result<Option<String>, ApiError> {
        match (&self.header, &self.query) {
            (Some(h), Some(q)) if h != q => {
                Err(ApiError::bad_request("X-Workspace-Id and ?workspace_id= name different workspaces"))
            }
            (h, q) => Ok(h.clone().or_else(|| q.clone())),
        }
    }

    /// What the request named, for the log line.
    pub fn named(&self) -> Option<&str> {
        self.header.as_deref().or(self.query.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_query_must_agree() {
        let hint = |header: Option<&str>, query: Option<&str>| {
            WorkspaceHint { header: header.map(str::to_string), query: query.map(str::to_string) }.resolve()
        };
        assert_eq!(hint(None, None).unwrap(), None);
        assert_eq!(hint(Some("a"), None).unwrap().as_deref(), Some("a"));
        assert_eq!(hint(None, Some("b")).unwrap().as_deref(), Some("b"));
        assert_eq!(hint(Some("a"), Some("a")).unwrap().as_deref(), Some("a"));
        assert_eq!(hint(Some("a"), Some("b")).unwrap_err().status(), http::StatusCode::BAD_REQUEST);
    }

    #[test]
    fn a_request_names_a_workspace_by_a_non_empty_header_or_its_first_decoded_query_parameter() {
        let of = |header: Option<&str>, query: Option<&str>| {
            let mut headers = HeaderMap::new();
            if let Some(h) = header {
                headers.insert("x-workspace-id", h.parse().unwrap());
            }
            let hint = WorkspaceHint::of_request(&headers, url::form_urlencoded::parse(query.unwrap_or("").as_bytes()));
            (hint.header, hint.query)
        };
        assert_eq!(of(None, None), (None, None));
        assert_eq!(
            of(Some(" a "), Some("limit=5&workspace_id=b%2Dc&workspace_id=d")),
            (Some("a".into()), Some("b-c".into()))
        );
        assert_eq!(of(Some("  "), Some("workspace_id=")), (None, None));
        assert_eq!(of(None, Some("workspace_idx=a&xworkspace_id=b")), (None, None));
    }
}
