//! What answers without a token: `GET /health`, for a load balancer or a deploy check
//! (the process is up and the database answers; no data), and the page a browser gets at
//! the MCP endpoint (`GET` with `Accept: text/html`): what this server is and how to
//! connect a client. An MCP client's `GET` still gets its 405 (SPEC §2).

use askama::Template;
use axum::extract::State;
use axum::response::Response;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde_json::json;

use super::response;
use crate::app::AppState;
use crate::oauth::pages::{render, Lang};

/// How long `/health` waits for the database before it says it does not answer.
const DATABASE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// 200 `{"status":"ok","database":"ok"}` when the database answers a statement within
/// [`DATABASE_WAIT`], else 503 `{"status":"unavailable","database":"unavailable"}` with
/// `Retry-After`.
pub async fn health(State(state): State<AppState>) -> Response {
    let answers = tokio::time::timeout(DATABASE_WAIT, state.db.answers()).await.unwrap_or(false);
    if answers {
        response::json(StatusCode::OK, &json!({"status": "ok", "database": "ok"}), None)
    } else {
        let body = json!({"status": "unavailable", "database": "unavailable"});
        let mut answer = response::json(StatusCode::SERVICE_UNAVAILABLE, &body, None);
        answer.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        answer
    }
}

/// Whether a `GET` of the MCP endpoint comes from a browser: it asks for HTML, which no
/// MCP client does (they ask for JSON or an event stream).
pub fn wants_page(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| item.split(';').next().is_some_and(|media| media.trim().eq_ignore_ascii_case("text/html")))
}

/// The page: what this is, the URL to give a client, the REST API; in Portuguese, or in
/// English when the browser prefers it.
pub fn page(state: &AppState, headers: &HeaderMap) -> Response {
    let lang = Lang::of(headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()));
    let (public, api) = (&state.config.public_url, &state.config.api_base_url);
    let html = render(&Home {
        lang: lang.tag(),
        t: texts(lang),
        mcp_url: &format!("{public}/mcp"),
        find_url: &format!("{public}/mcp/find"),
        api_url: &format!("{api}/v1"),
        openapi_url: &format!("{api}/v1/openapi.json"),
        health_url: &format!("{public}/health"),
    });
    super::oauth::page(200, html, Vec::new())
}

#[derive(Template)]
#[template(path = "home.html")]
struct Home<'a> {
    lang: &'a str,
    t: &'a HomeTexts,
    mcp_url: &'a str,
    find_url: &'a str,
    api_url: &'a str,
    openapi_url: &'a str,
    health_url: &'a str,
}

struct HomeTexts {
    title: &'static str,
    what: &'static str,
    connect: &'static str,
    url_is: &'static str,
    sign_in: &'static str,
    find: &'static str,
    connector: &'static str,
    token: &'static str,
    rest: &'static str,
    rest_is: &'static str,
    health: &'static str,
}

fn texts(lang: Lang) -> &'static HomeTexts {
    match lang {
        Lang::Pt => &PT,
        Lang::En => &EN,
    }
}

static PT: HomeTexts = HomeTexts {
    title: "Servidor MCP do Kobana Finance",
    what: "Este servidor dá a agentes de IA (Claude, ChatGPT, Claude Code, Cursor, qualquer cliente MCP) acesso \
           ao financeiro de uma empresa no Kobana Finance — contas a pagar e a receber, contas, movimentações, \
           relatórios — em nome de quem entra. Não é um site: adicione o endereço abaixo ao seu cliente.",
    connect: "Conectar um cliente",
    url_is: "Endereço do servidor MCP:",
    sign_in: "Na primeira conexão o cliente abre esta página de entrada (OAuth): você entra e autoriza.",
    find: "cinco ferramentas que alcançam todas, para clientes que mostram poucas.",
    connector: "adicione um conector personalizado com o endereço acima (precisa ser alcançável pela internet).",
    token: "Com um token, em qualquer cliente que envie um cabeçalho:",
    rest: "API REST",
    rest_is: "com um token de API; descrita em",
    health: "Saúde do servidor:",
};

static EN: HomeTexts = HomeTexts {
    title: "Kobana Finance MCP server",
    what: "This server gives AI agents (Claude, ChatGPT, Claude Code, Cursor, any MCP client) access to a \
           company's finances in Kobana Finance — payables, receivables, accounts, transactions, reports — on \
           behalf of the person who signs in. It is not a website: add the address below to your client.",
    connect: "Connect a client",
    url_is: "MCP server URL:",
    sign_in: "On its first connection the client opens this server's sign-in page (OAuth): sign in and approve.",
    find: "five tools that reach all of them, for clients that show only a few.",
    connector: "add a custom connector with the URL above (it must be reachable from the internet).",
    token: "With a token, in any client that sends a header:",
    rest: "REST API",
    rest_is: "with an API token; described in",
    health: "Server health:",
};
