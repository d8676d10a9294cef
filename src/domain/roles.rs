//! Who may do what: the token's scopes (what the person delegated to the agent)
//! intersected with the person's role in the workspace (what the person may do).
//! Both are checked for tool visibility and again inside every operation.

/// The finance resources a scope names (SPEC §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resource {
    Companies,
    Accounts,
    Transactions,
    Payables,
    Receivables,
    Categories,
    CostCenters,
    People,
    Taxes,
    Attachments,
    CashFlow,
    Reconciliations,
    AutomaticRules,
    Receipts,
    Reports,
    Banks,
    /// Who has access to a workspace: its members, their roles, its invitations, and the
    /// apps signed in as its people. Not a finance resource: no tool reaches it, no
    /// default scope names it, `finance.all` does not read it.
    Access,
}

impl Resource {
    pub const ALL: [Resource; 16] = [
        Resource::Companies,
        Resource::Accounts,
        Resource::Transactions,
        Resource::Payables,
        Resource::Receivables,
        Resource::Categories,
        Resource::CostCenters,
        Resource::People,
        Resource::Taxes,
        Resource::Attachments,
        Resource::CashFlow,
        Resource::Reconciliations,
        Resource::AutomaticRules,
        Resource::Receipts,
        Resource::Reports,
        Resource::Banks,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Companies => "companies",
            Resource::Accounts => "accounts",
            Resource::Transactions => "transactions",
            Resource::Payables => "payables",
            Resource::Receivables => "receivables",
            Resource::Categories => "categories",
            Resource::CostCenters => "cost_centers",
            Resource::People => "people",
            Resource::Taxes => "taxes",
            Resource::Attachments => "attachments",
            Resource::CashFlow => "cash_flow",
            Resource::Reconciliations => "reconciliations",
            Resource::AutomaticRules => "automatic_rules",
            Resource::Receipts => "receipts",
            Resource::Reports => "reports",
            Resource::Banks => "banks",
            Resource::Access => "access",
        }
    }

    /// What a person calls it, in Portuguese and in English (the consent page).
    pub fn names(self) -> (&'static str, &'static str) {
        match self {
            Resource::Companies => ("Empresas", "Companies"),
            Resource::Accounts => ("Contas financeiras", "Financial accounts"),
            Resource::Transactions => ("Lançamentos e transferências", "Transactions and transfers"),
            Resource::Payables => ("Contas a pagar", "Payables"),
            Resource::Receivables => ("Contas a receber", "Receivables"),
            Resource::Categories => ("Categorias", "Categories"),
            Resource::CostCenters => ("Centros de custo", "Cost centers"),
            Resource::People => ("Pessoas (fornecedores e clientes)", "People (vendors and customers)"),
            Resource::Taxes => ("Impostos", "Taxes"),
            Resource::Attachments => ("Anexos", "Attachments"),
            Resource::CashFlow => ("Fluxo de caixa", "Cash flow"),
            Resource::Reconciliations => ("Conciliações", "Reconciliations"),
            Resource::AutomaticRules => ("Regras automáticas", "Automatic rules"),
            Resource::Receipts => ("Comprovantes", "Receipts"),
            Resource::Reports => ("Relatórios", "Reports"),
            Resource::Banks => ("Bancos", "Banks"),
            Resource::Access => ("Pessoas com acesso e apps conectados", "People with access and connected apps"),
        }
    }

    /// The finance resources and [`Resource::Access`]: every resource a scope may name.
    pub const EVERY: [Resource; 17] = {
        let mut every = [Resource::Access; 17];
        let mut i = 0;
        while i < Resource::ALL.len() {
            every[i] = Resource::ALL[i];
            i += 1;
        }
        every
    };

    /// The resource and access a scope names (`None` for `finance.all` and unknown ones).
    pub fn of_scope(scope: &str) -> Option<(Resource, Access)> {
        if let Some(resource) = Resource::ALL.iter().find(|r| r.bank_scope() == Some(scope)) {
            return Some((*resource, Access::Bank));
        }
        let rest = scope.strip_prefix("finance.")?;
        let (name, access) = match rest.strip_suffix(".write") {
            Some(name) => (name, Access::Write),
            None => (rest, Access::Read),
        };
        let resource = Resource::EVERY.iter().find(|r| r.as_str() == name)?;
        (access == Access::Read || !resource.is_read_only()).then_some((*resource, access))
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }

    /// Whether it is only read (a report): it has no write scope.
    pub fn is_read_only(self) -> bool {
        matches!(self, Resource::CashFlow | Resource::Receipts | Resource::Reports | Resource::Banks)
    }

    /// The scope of its orders to the bank (action-only: a payable's dispatch, a
    /// receivable's charge), if it has one.
    pub fn bank_scope(self) -> Option<&'static str> {
        match self {
            Resource::Payables => Some("finance.payables.dispatch"),
            Resource::Receivables => Some("finance.receivables.charge"),
            _ => None,
        }
    }

    pub fn read_scope(self) -> String {
        format!("finance.{}", self.as_str())
    }

    pub fn write_scope(self) -> String {
        format!("finance.{}.write", self.as_str())
    }
}

/// What an action does to a resource. Deleting needs the write scope and a role that
/// may delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Delete,
    /// An order to the bank through the banking gateway (a payable's dispatch, a
    /// receivable's charge): its own scope ([`Resource::bank_scope`]), never implied by
    /// `.write`.
    Bank,
}

/// A workspace membership role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Owner,
    Admin,
    Finance,
    Viewer,
}

impl Role {
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "owner" => Some(Role::Owner),
            "admin" => Some(Role::Admin),
            "finance" => Some(Role::Finance),
            "viewer" => Some(Role::Viewer),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Finance => "finance",
            Role::Viewer => "viewer",
        }
    }

    /// owner/admin: everything; finance: read and write everything but may not delete
    /// companies or accounts; viewer: read only.
    pub fn allows(self, resource: Resource, access: Access) -> bool {
        match (self, access) {
            (Role::Owner | Role::Admin, _) => true,
            // Who has access: seen by every member, changed by owners and admins.
            (_, _) if resource == Resource::Access => access == Access::Read,
            (Role::Finance, Access::Delete) => !matches!(resource, Resource::Companies | Resource::Accounts),
            (Role::Finance, _) => true,
            (Role::Viewer, Access::Read) => true,
            (Role::Viewer, _) => false,
        }
    }
}

/// The scopes a token grants, parsed from its space-separated `scope` claim.
/// Each scope is independent: `.write` does not imply the read scope; `finance.all`
/// grants every read scope and no write. Unknown scopes are kept (for `granted` in
/// error details) but grant nothing.
#[derive(Debug, Clone, Default)]
pub struct ScopeSet {
    reads: u32,
    writes: u32,
    banks: u32,
    granted: Vec<String>,
}

pub const ALL_READS_SCOPE: &str = "finance.all";

impl ScopeSet {
    pub fn parse(claim: &str) -> ScopeSet {
        let mut set = ScopeSet::default();
        for scope in claim.split_ascii_whitespace() {
            if !set.granted.iter().any(|g| g == scope) {
                set.granted.push(scope.to_string());
            }
            if scope == ALL_READS_SCOPE {
                set.reads |= Resource::ALL.iter().fold(0, |bits, r| bits | r.bit());
                continue;
            }
            if let Some(resource) = Resource::ALL.iter().find(|r| r.bank_scope() == Some(scope)) {
                set.banks |= resource.bit();
                continue;
            }
            let Some(rest) = scope.strip_prefix("finance.") else { continue };
            let (name, write) = match rest.strip_suffix(".write") {
                Some(name) => (name, true),
                None => (rest, false),
            };
            if let Some(resource) = Resource::EVERY.iter().find(|r| r.as_str() == name) {
                if write && resource.is_read_only() {
                    // `finance.cash_flow.write` names nothing: kept, granting nothing.
                } else if write {
                    set.writes |= resource.bit();
                } else {
                    set.reads |= resource.bit();
                }
            }
        }
        set
    }

    pub fn allows(&self, resource: Resource, access: Access) -> bool {
        match access {
            Access::Read => self.reads & resource.bit() != 0,
            Access::Write | Access::Delete => self.writes & resource.bit() != 0,
            Access::Bank => self.banks & resource.bit() != 0 && resource.bank_scope().is_some(),
        }
    }

    /// The scope an access needs, as it is written in tokens.
    pub fn required(resource: Resource, access: Access) -> String {
        match access {
            Access::Read => resource.read_scope(),
            Access::Write | Access::Delete => resource.write_scope(),
            Access::Bank => resource.bank_scope().map_or_else(|| resource.write_scope(), str::to_string),
        }
    }

    pub fn granted(&self) -> &[String] {
        &self.granted
    }
}

/// Why a caller may not do an access on a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The token was not delegated the scope.
    Scope,
    /// The person's role in the workspace does not grant it, or they have no workspace
    /// there.
    Role,
}

/// The one rule of who may do what, asked by both doors, by `tools/list` and by the
/// workspace list: the token's scope first (what the agent was delegated), then the
/// person's role in the workspace (`None`: no membership there).
pub fn permission(scopes: &ScopeSet, role: Option<Role>, resource: Resource, access: Access) -> Result<(), Refusal> {
    if !scopes.allows(resource, access) {
        return Err(Refusal::Scope);
    }
    match role {
        Some(role) if role.allows(resource, access) => Ok(()),
        _ => Err(Refusal::Role),
    }
}

/// The 30 read, write and bank scopes (not `finance.all`; a report has no write
/// scope): what a dev token gets by default.
pub fn all_scopes() -> Vec<String> {
    Resource::ALL
        .iter()
        .flat_map(|r| {
            std::iter::once(r.read_scope())
                .chain((!r.is_read_only()).then(|| r.write_scope()))
                .chain(r.bank_scope().map(str::to_string))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_is_scope_first_then_role() {
        let payables = ScopeSet::parse("finance.payables finance.payables.write finance.companies.write");
        for (scopes, role, resource, access, expected) in [
            (&payables, Some(Role::Viewer), Resource::Payables, Access::Read, Ok(())),
            (&payables, Some(Role::Viewer), Resource::Payables, Access::Write, Err(Refusal::Role)),
            (&payables, Some(Role::Finance), Resource::Payables, Access::Delete, Ok(())),
            (&payables, Some(Role::Finance), Resource::Companies, Access::Delete, Err(Refusal::Role)),
            (&payables, Some(Role::Owner), Resource::Companies, Access::Delete, Ok(())),
            (&payables, Some(Role::Owner), Resource::Receivables, Access::Read, Err(Refusal::Scope)),
            (&payables, Some(Role::Owner), Resource::Companies, Access::Read, Err(Refusal::Scope)),
            // No membership: the scope is still asked first.
            (&payables, None, Resource::Payables, Access::Read, Err(Refusal::Role)),
            (&payables, None, Resource::Receivables, Access::Read, Err(Refusal::Scope)),
        ] {
            assert_eq!(permission(scopes, role, resource, access), expected, "{role:?} {resource:?} {access:?}");
        }
    }

    #[test]
    fn an_order_to_the_bank_has_its_own_scope() {
        let writes = ScopeSet::parse("finance.payables.write finance.receivables.write finance.all");
        assert!(!writes.allows(Resource::Payables, Access::Bank));
        assert!(!writes.allows(Resource::Receivables, Access::Bank));
        let banks = ScopeSet::parse("finance.payables.dispatch finance.receivables.charge finance.companies.dispatch");
        assert!(banks.allows(Resource::Payables, Access::Bank));
        assert!(banks.allows(Resource::Receivables, Access::Bank));
        assert!(!banks.allows(Resource::Payables, Access::Write));
        assert!(!banks.allows(Resource::Companies, Access::Bank));
        assert_eq!(ScopeSet::required(Resource::Payables, Access::Bank), "finance.payables.dispatch");
        assert_eq!(permission(&banks, Some(Role::Viewer), Resource::Payables, Access::Bank), Err(Refusal::Role));
        assert_eq!(permission(&banks, Some(Role::Finance), Resource::Payables, Access::Bank), Ok(()));
    }

    #[test]
    fn who_has_access_is_its_own_scope_seen_by_members_changed_by_owners_and_admins() {
        assert!(!ScopeSet::parse("finance.all").allows(Resource::Access, Access::Read));
        assert!(!all_scopes().iter().any(|s| s.starts_with("finance.access")), "no default scope names it");
        let access = ScopeSet::parse("finance.access finance.access.write");
        assert!(access.allows(Resource::Access, Access::Read) && access.allows(Resource::Access, Access::Write));
        assert_eq!(Resource::of_scope("finance.access.write"), Some((Resource::Access, Access::Write)));
        for role in [Role::Owner, Role::Admin] {
            assert_eq!(permission(&access, Some(role), Resource::Access, Access::Write), Ok(()));
        }
        for role in [Role::Finance, Role::Viewer] {
            assert_eq!(permission(&access, Some(role), Resource::Access, Access::Read), Ok(()));
            assert_eq!(permission(&access, Some(role), Resource::Access, Access::Write), Err(Refusal::Role));
            assert_eq!(permission(&access, Some(role), Resource::Access, Access::Delete), Err(Refusal::Role));
        }
    }

    #[test]
    fn write_scope_does_not_imply_read() {
        let s = ScopeSet::parse("finance.payables.write");
        assert!(s.allows(Resource::Payables, Access::Write));
        assert!(!s.allows(Resource::Payables, Access::Read));
    }

    #[test]
    fn finance_all_grants_reads_only() {
        let s = ScopeSet::parse("finance.all");
        for r in Resource::ALL {
            assert!(s.allows(r, Access::Read));
            assert!(!s.allows(r, Access::Write));
        }
    }

    #[test]
    fn unknown_scopes_grant_nothing() {
        let s = ScopeSet::parse("finance.payable finance.payables.writ openid");
        for r in Resource::ALL {
            assert!(!s.allows(r, Access::Read) && !s.allows(r, Access::Write));
        }
        assert_eq!(s.granted().len(), 3);
    }

    #[test]
    fn finance_role_cannot_delete_companies_or_accounts() {
        assert!(!Role::Finance.allows(Resource::Companies, Access::Delete));
        assert!(!Role::Finance.allows(Resource::Accounts, Access::Delete));
        assert!(Role::Finance.allows(Resource::Payables, Access::Delete));
        assert!(Role::Finance.allows(Resource::Accounts, Access::Write));
    }

    #[test]
    fn viewer_reads_only() {
        for r in Resource::ALL {
            assert!(Role::Viewer.allows(r, Access::Read));
            assert!(!Role::Viewer.allows(r, Access::Write));
            assert!(!Role::Viewer.allows(r, Access::Delete));
        }
    }

    #[test]
    fn twenty_nine_default_scopes() {
        assert_eq!(all_scopes().len(), 30);
        assert!(all_scopes().contains(&"finance.cash_flow".to_string()));
        assert!(all_scopes().contains(&"finance.reports".to_string()));
        assert!(!all_scopes().contains(&"finance.reports.write".to_string()), "a report is only read");
        assert!(!all_scopes().contains(&"finance.cash_flow.write".to_string()), "a report is only read");
        let granted = ScopeSet::parse("finance.cash_flow.write");
        assert!(
            !granted.allows(Resource::CashFlow, Access::Read) && !granted.allows(Resource::CashFlow, Access::Write)
        );
    }
}
