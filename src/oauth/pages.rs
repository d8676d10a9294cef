//! The pages a person sees while signing in: the consent page, the development login, and
//! a message (an error that cannot go back to the client, a refusal). HTML written by
//! askama templates (`templates/oauth/`, escaped by the template, checked at build
//! time), no JavaScript, usable by keyboard and in a narrow window; Portuguese by
//! default, English when the browser prefers it (`Accept-Language`).

use askama::Template;

use crate::domain::roles::{Access, Resource, Role};

/// The language of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Pt,
    En,
}

impl Lang {
    /// The browser's preference among Portuguese and English (`Accept-Language`, by
    /// its weights); Portuguese when it states none of them.
    pub fn of(accept_language: Option<&str>) -> Lang {
        let mut best: Option<(f32, Lang)> = None;
        for item in accept_language.unwrap_or_default().split(',') {
            let mut parts = item.split(';');
            let tag = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let weight =
                parts.find_map(|p| p.trim().strip_prefix("q=").and_then(|q| q.parse::<f32>().ok())).unwrap_or(1.0);
            let lang = match tag.split('-').next() {
                Some("pt") => Lang::Pt,
                Some("en") => Lang::En,
                _ => continue,
            };
            if best.is_none_or(|(w, _)| weight > w) {
                best = Some((weight, lang));
            }
        }
        best.map_or(Lang::Pt, |(_, lang)| lang)
    }

    pub fn tag(self) -> &'static str {
        match self {
            Lang::Pt => "pt-BR",
            Lang::En => "en",
        }
    }

    pub fn texts(self) -> &'static Texts {
        match self {
            Lang::Pt => &PT,
            Lang::En => &EN,
        }
    }

    fn resource(self, resource: Resource) -> &'static str {
        let (pt, en) = resource.names();
        if self == Lang::Pt {
            pt
        } else {
            en
        }
    }

    fn access(self, resource: Resource, access: Access) -> &'static str {
        match (self, access) {
            (Lang::Pt, Access::Write | Access::Delete) if resource == Resource::Access => {
                "convidar pessoas, mudar papéis, remover pessoas e revogar apps"
            }
            (Lang::En, Access::Write | Access::Delete) if resource == Resource::Access => {
                "invite people, change roles, remove people and revoke apps"
            }
            (Lang::Pt, Access::Read) => "ver",
            (Lang::En, Access::Read) => "see",
            (Lang::Pt, Access::Write | Access::Delete) => "criar, alterar e excluir",
            (Lang::En, Access::Write | Access::Delete) => "create, change and delete",
            (Lang::Pt, Access::Bank) if resource == Resource::Payables => {
                "pagar pelo banco (cada pagamento confirmado por você)"
            }
            (Lang::En, Access::Bank) if resource == Resource::Payables => {
                "pay through the bank (each payment confirmed by you)"
            }
            (Lang::Pt, Access::Bank) => "cobrar pelo banco (cada cobrança confirmada por você)",
            (Lang::En, Access::Bank) => "charge through the bank (each charge confirmed by you)",
        }
    }

    fn role(self, role: Role) -> &'static str {
        match (self, role) {
            (Lang::Pt, Role::Owner) => "proprietário",
            (Lang::Pt, Role::Admin) => "administrador",
            (Lang::Pt, Role::Finance) => "financeiro",
            (Lang::Pt, Role::Viewer) => "visualizador",
            (Lang::En, role) => role.as_str(),
        }
    }
}

/// The words of the pages, in one language.
pub struct Texts {
    pub consent_title: &'static str,
    pub wants_access: &'static str,
    pub client_at: &'static str,
    pub answered_at: &'static str,
    pub local_only: &'static str,
    pub signed_in_as: &'static str,
    pub it_may: &'static str,
    pub in_your_workspaces: &'static str,
    pub role_refuses: &'static str,
    pub revoke_later: &'static str,
    pub approve: &'static str,
    pub deny: &'static str,
    pub login_title: &'static str,
    pub login_pick: &'static str,
    pub development_banner: &'static str,
    pub all_reads: &'static str,
    pub error_title: &'static str,
    pub apps_title: &'static str,
    pub apps_yours: &'static str,
    pub apps_none: &'static str,
    pub apps_since: &'static str,
    pub apps_used: &'static str,
    pub apps_workspaces: &'static str,
    pub apps_revoke: &'static str,
    pub apps_workspace: &'static str,
    pub apps_of: &'static str,
    pub apps_revoked: &'static str,
}

static PT: Texts = Texts {
    consent_title: "Autorizar acesso ao Kobana Finance",
    wants_access: "quer acessar o financeiro da sua empresa em seu nome.",
    client_at: "Aplicativo em",
    answered_at: "Depois de autorizado, você volta para",
    local_only: "Este aplicativo recebe o acesso neste computador (um endereço local). Autorize só se foi você quem o abriu agora.",
    signed_in_as: "Você entrou como",
    it_may: "Ele poderá",
    in_your_workspaces: "Nos seus espaços de trabalho",
    role_refuses: "Seu papel aqui não permite:",
    revoke_later: "Você pode revogar este acesso quando quiser; cada pagamento pelo banco, exclusão ou baixa ainda pede a sua confirmação.",
    approve: "Autorizar",
    deny: "Recusar",
    login_title: "Entrar (desenvolvimento)",
    login_pick: "Escolha a pessoa da demonstração com quem entrar.",
    development_banner: "Login de desenvolvimento: sem senha, só existe num servidor local com a sua chave de desenvolvimento gerada. Nunca em produção.",
    all_reads: "Tudo (somente leitura)",
    error_title: "Não foi possível continuar",
    apps_title: "Apps conectados",
    apps_yours: "Os seus",
    apps_none: "Nenhum app tem acesso em seu nome.",
    apps_since: "Autorizado em",
    apps_used: "último uso",
    apps_workspaces: "Alcança:",
    apps_revoke: "Revogar o acesso",
    apps_workspace: "Das pessoas dos espaços de trabalho de que você é proprietário",
    apps_of: "Em nome de",
    apps_revoked: "Acesso revogado: o app não renova mais o acesso e o próximo pedido dele é recusado.",
};

static EN: Texts = Texts {
    consent_title: "Authorize access to Kobana Finance",
    wants_access: "wants to access your company's finances on your behalf.",
    client_at: "Application at",
    answered_at: "Once authorized, you go back to",
    local_only: "This application receives the access on this computer (a local address). Authorize only if you opened it just now.",
    signed_in_as: "You are signed in as",
    it_may: "It will be able to",
    in_your_workspaces: "In your workspaces",
    role_refuses: "Your role here does not allow:",
    revoke_later: "You can revoke this access at any time; each payment through the bank, deletion or settlement still asks for your confirmation.",
    approve: "Authorize",
    deny: "Deny",
    login_title: "Sign in (development)",
    login_pick: "Pick the demo person to sign in as.",
    development_banner: "Development login: no password, only on a local server running with its generated development secret. Never in production.",
    all_reads: "Everything (read only)",
    error_title: "This cannot continue",
    apps_title: "Connected apps",
    apps_yours: "Yours",
    apps_none: "No app has access on your behalf.",
    apps_since: "Authorized on",
    apps_used: "last used",
    apps_workspaces: "Reaches:",
    apps_revoke: "Revoke access",
    apps_workspace: "Of the people of the workspaces you own",
    apps_of: "On behalf of",
    apps_revoked: "Access revoked: the app can no longer renew it and its next request is refused.",
};

/// One line of what a client may do: a resource and its accesses.
pub struct ScopeLine {
    pub resource: String,
    pub accesses: String,
}

/// One of the person's workspaces: their role and what of the scopes it refuses.
pub struct WorkspaceLine {
    pub name: String,
    pub role: String,
    pub refused: String,
}

/// The scope lines of `scope` in `lang`, in the catalogue's order of resources.
pub fn scope_lines(scope: &str, lang: Lang) -> Vec<ScopeLine> {
    let mut lines = Vec::new();
    if scope.split_ascii_whitespace().any(|s| s == crate::domain::roles::ALL_READS_SCOPE) {
        lines.push(ScopeLine {
            resource: lang.texts().all_reads.into(),
            accesses: lang.access(Resource::Reports, Access::Read).into(),
        });
    }
    for resource in Resource::EVERY {
        let accesses: Vec<&str> = [Access::Read, Access::Write, Access::Bank]
            .into_iter()
            .filter(|access| scope.split_ascii_whitespace().any(|s| Resource::of_scope(s) == Some((resource, *access))))
            .map(|access| lang.access(resource, access))
            .collect();
        if !accesses.is_empty() {
            lines.push(ScopeLine { resource: lang.resource(resource).into(), accesses: accesses.join(", ") });
        }
    }
    lines
}

/// A workspace's line: what of `scope` the person's `role` does not allow there.
pub fn workspace_line(name: &str, role: Role, scope: &str, lang: Lang) -> WorkspaceLine {
    let mut refused: Vec<String> = Vec::new();
    for resource in Resource::EVERY {
        for access in [Access::Read, Access::Write, Access::Bank] {
            let asked = scope.split_ascii_whitespace().any(|s| Resource::of_scope(s) == Some((resource, access)));
            if asked && !role.allows(resource, access) {
                refused.push(format!("{} ({})", lang.resource(resource), lang.access(resource, access)));
            }
        }
    }
    WorkspaceLine { name: name.to_string(), role: lang.role(role).to_string(), refused: refused.join("; ") }
}

#[derive(Template)]
#[template(path = "oauth/consent.html")]
pub struct Consent<'a> {
    pub t: &'a Texts,
    pub lang: &'a str,
    pub development: bool,
    pub client_name: &'a str,
    pub client_host: &'a str,
    pub redirect_host: &'a str,
    pub local_only: bool,
    pub person: &'a str,
    pub scopes: Vec<ScopeLine>,
    pub workspaces: Vec<WorkspaceLine>,
    pub action: &'a str,
    pub request: &'a str,
    pub csrf: &'a str,
}

/// A demo person on the development login.
pub struct Person {
    pub id: String,
    pub name: String,
    pub email: String,
    pub roles: String,
}

#[derive(Template)]
#[template(path = "oauth/login.html")]
pub struct DevelopmentLogin<'a> {
    pub t: &'a Texts,
    pub lang: &'a str,
    pub people: Vec<Person>,
    pub action: &'a str,
    pub request: &'a str,
    pub csrf: &'a str,
}

/// One connected app on its page.
pub struct AppLine {
    pub grant_id: String,
    pub client_name: String,
    pub client_host: String,
    pub person: String,
    pub created: String,
    pub used: String,
    pub scopes: Vec<ScopeLine>,
    pub workspaces: String,
    pub csrf: String,
}

#[derive(Template)]
#[template(path = "oauth/apps.html")]
pub struct Apps<'a> {
    pub t: &'a Texts,
    pub lang: &'a str,
    pub person: &'a str,
    pub notice: &'a str,
    pub mine: Vec<AppLine>,
    pub others: Vec<AppLine>,
    pub action: &'a str,
}

#[derive(Template)]
#[template(path = "oauth/message.html")]
pub struct Message<'a> {
    pub lang: &'a str,
    pub title: &'a str,
    pub message: &'a str,
    pub detail: &'a str,
}

/// A page's HTML, or a plain message when the template cannot be written (it always can:
/// the templates are checked when the crate is built).
pub fn render(page: &impl Template) -> String {
    page.render().unwrap_or_else(|_| "<!doctype html><title>Kobana Finance</title><p>Error</p>".into())
}

/// The page of an error that is not sent back to the client.
pub fn error(lang: Lang, message: &str) -> String {
    render(&Message { lang: lang.tag(), title: lang.texts().error_title, message, detail: "" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_is_the_browsers_preference_among_portuguese_and_english() {
        assert_eq!(Lang::of(None), Lang::Pt);
        assert_eq!(Lang::of(Some("en-US,en;q=0.9")), Lang::En);
        assert_eq!(Lang::of(Some("pt-BR,pt;q=0.9,en;q=0.8")), Lang::Pt);
        assert_eq!(Lang::of(Some("fr-FR,en;q=0.5,pt;q=0.7")), Lang::Pt);
        assert_eq!(Lang::of(Some("de")), Lang::Pt);
    }

    #[test]
    fn the_consent_page_names_the_scopes_and_what_a_role_refuses() {
        let scope = "finance.payables finance.payables.write finance.payables.dispatch finance.reports";
        let lines = scope_lines(scope, Lang::Pt);
        assert_eq!(lines[0].resource, "Contas a pagar");
        assert!(lines[0].accesses.starts_with("ver, criar, alterar e excluir, pagar pelo banco"));
        let viewer = workspace_line("Acme", Role::Viewer, scope, Lang::En);
        assert_eq!(viewer.role, "viewer");
        assert!(
            viewer.refused.contains("Payables (create, change and delete)") && viewer.refused.contains("pay through")
        );
        assert!(workspace_line("Acme", Role::Owner, scope, Lang::En).refused.is_empty());
        let page = render(&Consent {
            t: Lang::Pt.texts(),
            lang: "pt-BR",
            development: false,
            client_name: "<script>x</script>",
            client_host: "claude.ai",
            redirect_host: "claude.ai",
            local_only: false,
            person: "Ana",
            scopes: lines,
            workspaces: vec![viewer],
            action: "/authorize",
            request: "r",
            csrf: "c",
        });
        assert!(page.contains("&#60;script&#62;") || page.contains("&lt;script&gt;"), "escaped: {page}");
        assert!(!page.contains("<script>x"));
        assert!(page.contains("claude.ai") && page.contains("name=\"csrf\""));
    }
}
