//! What answers without a token: `GET /health` (the process and its database, no data),
//! and the page a browser gets at the MCP endpoint, while an MCP client's `GET` keeps its
//! 405 (SPEC §2).

use crate::common::*;
use http::Method;
use serde_json::json;

fn get(path: &str, accept: Option<&str>) -> Mcp {
    let request = Mcp::raw("").method(Method::GET).path(path);
    match accept {
        Some(accept) => request.header("accept", accept),
        None => request,
    }
}

#[tokio::test]
async fn health_answers_ok_while_the_database_answers_and_needs_no_token() {
    let h = Harness::new().await;
    for request in [get("/health", None), get("/health", None).bearer("not-a-token")] {
        let reply = h.send(request.build()).await;
        assert_eq!(reply.status, 200, "{}", text(&reply));
        assert_eq!(reply.json(), json!({"status": "ok", "database": "ok"}));
        assert_eq!(reply.header("content-type"), Some("application/json"));
        assert_eq!(reply.header("cache-control"), Some("no-store"));
    }
}

#[tokio::test]
async fn health_is_503_when_the_database_does_not_answer() {
    let h = Harness::new().await;
    h.state.db.close().await;
    let reply = h.send(get("/health", None).build()).await;
    assert_eq!(reply.status, 503, "{}", text(&reply));
    assert_eq!(reply.json(), json!({"status": "unavailable", "database": "unavailable"}));
    assert!(reply.header("retry-after").is_some_and(|v| v.parse::<u64>().is_ok()));
}

#[tokio::test]
async fn a_browser_at_the_endpoint_gets_a_page_saying_how_to_connect() {
    let h = Harness::new().await;
    let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    for path in ["/", "/mcp"] {
        let reply = h.send(get(path, Some(browser)).header("accept-language", "en-US,en;q=0.9").build()).await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.header("content-type"), Some("text/html; charset=utf-8"));
        assert_eq!(reply.header("x-frame-options"), Some("DENY"));
        let page = text(&reply);
        for words in [
            "Kobana Finance MCP server",
            "It is not a website",
            &format!("{PUBLIC_URL}/mcp"),
            &format!("claude mcp add --transport http kobana {PUBLIC_URL}/mcp"),
            &format!("{PUBLIC_URL}/mcp/find"),
            &format!("{PUBLIC_URL}/v1/openapi.json"),
            &format!("{PUBLIC_URL}/health"),
        ] {
            assert!(page.contains(words), "{path}: {words:?} missing from\n{page}");
        }
    }
    let portuguese = text(&h.send(get("/", Some("text/html")).header("accept-language", "pt-BR").build()).await);
    assert!(portuguese.contains("Servidor MCP do Kobana Finance"), "{portuguese}");
}

#[tokio::test]
async fn an_mcp_clients_get_keeps_its_405() {
    let h = Harness::new().await;
    for (path, accept) in [
        ("/", None),
        ("/", Some("text/event-stream")),
        ("/mcp", Some("application/json, text/event-stream")),
        ("/mcp", Some("*/*")),
    ] {
        let reply = h.send(get(path, accept).build()).await;
        assert_eq!(reply.status, 405, "{path} {accept:?}");
        assert_eq!(reply.header("allow"), Some("POST"));
        assert!(reply.bytes.is_empty());
    }
    let delete = h.send(Mcp::raw("").method(Method::DELETE).header("accept", "text/html").build()).await;
    assert_eq!(delete.status, 405, "only a GET gets the page");
}
