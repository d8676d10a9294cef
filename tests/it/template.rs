//! `template.yaml` read as an AWS engineer signing it off would read it:
//!
//! * no parameter and no environment variable carries a password (no `NoEcho`
//!   parameter, no database URL, no dynamic reference to a secret's value);
//! * the function runs in the database's VPC (`VpcConfig` from the `SubnetIds` and
//!   `SecurityGroupIds` parameters), with its concurrency bounded by a parameter;
//! * its Secrets Manager permissions name exactly its secrets (keys, database
//!   credentials, the sign-in client's), read-only;
//! * people sign in at a Cognito user pool nobody signs up to (or the company's own
//!   provider), whose client secret is kept in Secrets Manager;
//! * the database certificate is verified (`verify-full`) against a bundle the
//!   deployment ships;
//! * a custom resource invokes the function's migrate path on every deploy.
//!
//! (`sam validate --lint`, in `make test`, checks the template against CloudFormation's
//! own schemas.)

use serde_yaml::Value;

fn template() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/template.yaml")).expect("template.yaml");
    serde_yaml::from_str(&text).expect("template.yaml is YAML")
}

/// `!Tag value` → ("!Tag", value).
fn tagged(v: &Value) -> Option<(String, &Value)> {
    match v {
        Value::Tagged(t) => Some((t.tag.to_string(), &t.value)),
        _ => None,
    }
}

fn is_ref(v: &Value, name: &str) -> bool {
    tagged(v).is_some_and(|(tag, inner)| tag == "!Ref" && inner.as_str() == Some(name))
}

/// Every string inside `v` (tag values included).
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Sequence(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Mapping(map) => map.iter().for_each(|(k, v)| {
            strings(k, out);
            strings(v, out);
        }),
        Value::Tagged(t) => strings(&t.value, out),
        _ => {}
    }
}

fn function(t: &Value) -> &Value {
    let f = &t["Resources"]["KobanaFinanceFunction"];
    assert_eq!(f["Type"].as_str(), Some("AWS::Serverless::Function"));
    &f["Properties"]
}

#[test]
fn no_parameter_or_environment_variable_carries_a_password() {
    let t = template();
    let parameters = t["Parameters"].as_mapping().expect("parameters");
    for (name, p) in parameters {
        let name = name.as_str().unwrap();
        let lower = name.to_ascii_lowercase();
        assert!(
            !lower.contains("password") && !lower.contains("databaseurl") && !lower.contains("connectionstring"),
            "parameter {name}"
        );
        assert!(p.get("NoEcho").is_none(), "parameter {name} is NoEcho: a secret passed as a parameter");
    }
    let env = function(&t)["Environment"]["Variables"].as_mapping().expect("environment");
    for (name, value) in env {
        let name = name.as_str().unwrap();
        assert!(
            !name.contains("PASSWORD")
                && name != "KFIN_DATABASE_URL"
                && name != "KFIN_JWT_SECRET"
                && name != "KFIN_STATE_KEY",
            "environment variable {name}"
        );
        let mut texts = Vec::new();
        strings(value, &mut texts);
        for text in texts {
            assert!(!text.contains("{{resolve:"), "{name} resolves a secret's value into the environment: {text}");
            assert!(
                !text.contains("postgres://") && !text.contains("postgresql://"),
                "{name} is a database URL: {text}"
            );
        }
    }
    assert!(
        is_ref(&env[&Value::from("KFIN_DATABASE_SECRET_ID")], "DatabaseSecretArn"),
        "credentials come from the database secret"
    );
}

#[test]
fn the_function_runs_in_the_databases_vpc_with_bounded_concurrency() {
    let t = template();
    let f = function(&t);
    let vpc = &f["VpcConfig"];
    assert!(is_ref(&vpc["SubnetIds"], "SubnetIds"), "{vpc:?}");
    assert!(is_ref(&vpc["SecurityGroupIds"], "SecurityGroupIds"), "{vpc:?}");
    assert_eq!(t["Parameters"]["SubnetIds"]["Type"].as_str(), Some("List<AWS::EC2::Subnet::Id>"));
    assert_eq!(t["Parameters"]["SecurityGroupIds"]["Type"].as_str(), Some("List<AWS::EC2::SecurityGroup::Id>"));
    assert!(is_ref(&f["ReservedConcurrentExecutions"], "ReservedConcurrency"));
    assert!(is_ref(&f["Environment"]["Variables"]["KFIN_DB_MAX_CONNECTIONS"], "DbPoolSize"));
}

#[test]
fn the_secret_policies_name_only_its_secrets() {
    let t = template();
    let mut statements = Vec::new();
    for policy in function(&t)["Policies"].as_sequence().expect("policies") {
        for candidate in branches_of(policy) {
            if let Some(list) = candidate["Statement"].as_sequence() {
                statements.extend(list.iter());
            }
        }
    }
    let secrets: Vec<&&Value> = statements
        .iter()
        .filter(|s| {
            let mut actions = Vec::new();
            strings(&s["Action"], &mut actions);
            actions.iter().any(|a| a.to_ascii_lowercase().starts_with("secretsmanager:") || a == "*")
        })
        .collect();
    assert_eq!(secrets.len(), 4, "one statement per secret: {secrets:?}");
    for statement in &secrets {
        assert_eq!(statement["Effect"].as_str(), Some("Allow"));
        assert_eq!(statement["Action"].as_str(), Some("secretsmanager:GetSecretValue"), "read only: {statement:?}");
        let mut resources = Vec::new();
        strings(&statement["Resource"], &mut resources);
        assert!(!resources.iter().any(|r| r.contains('*')), "no wildcard: {statement:?}");
    }
    let keys =
        &secrets.iter().find(|s| s["Sid"].as_str() == Some("ReadSigningKeys")).expect("keys statement")["Resource"];
    let Some((tag, Value::Sequence(branches))) = tagged(keys) else { panic!("{keys:?}") };
    assert_eq!(tag, "!If");
    assert!(
        branches[0].as_str() == Some("CreateSecret")
            && is_ref(&branches[1], "KeysSecret")
            && is_ref(&branches[2], "SecretArn"),
        "{keys:?}"
    );
    let database =
        &secrets.iter().find(|s| s["Sid"].as_str() == Some("ReadDatabaseCredentials")).expect("database statement")
            ["Resource"];
    assert!(is_ref(database, "DatabaseSecretArn"), "{database:?}");
    // The sign-in client's secret: the stack's own, or the one the deployer names.
    let sign_in: Vec<&Value> = secrets
        .iter()
        .filter(|s| s["Sid"].as_str() == Some("ReadSignInClientSecret"))
        .map(|s| &s["Resource"])
        .collect();
    assert_eq!(sign_in.len(), 2, "{sign_in:?}");
    assert!(is_ref(sign_in[0], "SignInClientSecret"), "{sign_in:?}");
    assert!(is_ref(sign_in[1], "OidcSecretArn"), "{sign_in:?}");
}

/// The policies a `Policies` entry may grant: itself, or every branch of an
/// `!If [cond, policy, other]` (nested `!If`s included; `!Ref AWS::NoValue` grants none).
fn branches_of(policy: &Value) -> Vec<&Value> {
    match tagged(policy) {
        Some((tag, Value::Sequence(branches))) if tag == "!If" => {
            branches.iter().skip(1).flat_map(branches_of).collect()
        }
        _ => vec![policy],
    }
}

#[test]
fn people_sign_in_at_a_user_pool_nobody_signs_up_to_and_its_secret_stays_in_secrets_manager() {
    let t = template();
    let resources = &t["Resources"];
    let pool = &resources["SignInUserPool"];
    assert_eq!(pool["Type"].as_str(), Some("AWS::Cognito::UserPool"));
    assert_eq!(pool["Condition"].as_str(), Some("CreateUserPool"));
    assert_eq!(pool["DeletionPolicy"].as_str(), Some("Retain"), "people keep their accounts");
    assert_eq!(
        pool["Properties"]["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"].as_bool(),
        Some(true),
        "nobody signs up: an administrator creates each person"
    );
    assert!(pool["Properties"]["AutoVerifiedAttributes"].as_sequence().unwrap().contains(&Value::from("email")));

    let client = &resources["SignInClient"]["Properties"];
    assert_eq!(client["GenerateSecret"].as_bool(), Some(true));
    assert_eq!(client["AllowedOAuthFlows"].as_sequence().unwrap(), &vec![Value::from("code")], "code flow only");
    let scopes = client["AllowedOAuthScopes"].as_sequence().unwrap();
    assert!(scopes.contains(&Value::from("openid")) && scopes.contains(&Value::from("email")), "{scopes:?}");
    let callbacks = client["CallbackURLs"].as_sequence().expect("callback URLs");
    assert_eq!(callbacks.len(), 1);
    let (tag, callback) = tagged(&callbacks[0]).expect("!Sub");
    assert_eq!((tag.as_str(), callback.as_str()), ("!Sub", Some("${PublicUrl}/oauth/callback")));

    // The client secret goes from the app client into a secret, never into the environment.
    let secret = &resources["SignInClientSecret"];
    assert_eq!(secret["Type"].as_str(), Some("AWS::SecretsManager::Secret"));
    let (tag, body) = tagged(&secret["Properties"]["SecretString"]).expect("!Sub");
    assert_eq!(tag, "!Sub");
    assert_eq!(body.as_str(), Some(r#"{"client_secret":"${SignInClient.ClientSecret}"}"#));

    let env = &function(&t)["Environment"]["Variables"];
    let mut texts = Vec::new();
    strings(env, &mut texts);
    assert!(!texts.iter().any(|t| t.contains(".ClientSecret")), "no client secret in the environment: {texts:?}");
    let issuer = branches_of(&env["KFIN_OIDC_ISSUER"]);
    let (tag, own) = tagged(issuer[0]).expect("!Sub");
    assert_eq!((tag.as_str(), own.as_str()), ("!Sub", Some("https://${SignInUserPool.ProviderURL}")));
    assert!(is_ref(issuer[1], "OidcIssuer"), "{issuer:?}");
    let secret_id = branches_of(&env["KFIN_OIDC_SECRET_ID"]);
    assert!(is_ref(secret_id[0], "SignInClientSecret") && is_ref(secret_id[1], "OidcSecretArn"), "{secret_id:?}");
    let client_id = branches_of(&env["KFIN_OIDC_CLIENT_ID"]);
    assert!(is_ref(client_id[0], "SignInClient") && is_ref(client_id[1], "OidcClientId"), "{client_id:?}");

    // Another authorization server (AuthServerUrl) means no sign-in here at all.
    let conditions = &t["Conditions"];
    let mut create = Vec::new();
    strings(&conditions["CreateUserPool"], &mut create);
    assert!(create.contains(&"HasAuthServer".to_string()), "{create:?}");
    let mut bring = Vec::new();
    strings(&conditions["HasOidcIssuer"], &mut bring);
    assert!(bring.contains(&"HasAuthServer".to_string()), "{bring:?}");
    assert!(t["Outputs"]["McpUrl"].get("Value").is_some(), "the URL to paste into a client");
}

#[test]
fn the_database_certificate_is_verified_against_a_shipped_bundle() {
    let t = template();
    let f = function(&t);
    let env = &f["Environment"]["Variables"];
    assert_eq!(env["KFIN_DATABASE_SSL_MODE"].as_str(), Some("verify-full"));
    let path = env["KFIN_DATABASE_SSL_ROOT_CERT"].as_str().expect("a CA bundle path");
    let layers = f["Layers"].as_sequence().expect("layers");
    assert!(layers.iter().any(|l| is_ref(l, "DatabaseCaLayer")));
    let layer = &t["Resources"]["DatabaseCaLayer"];
    let dir = layer["Properties"]["ContentUri"].as_str().expect("layer content").trim_end_matches('/');
    // A layer is unpacked under /opt: the bundle is certs/<name> in the repository.
    let name = path.strip_prefix("/opt/").expect("a path inside the layer");
    assert!(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"))).join(dir).join("README.md").exists(),
        "certs/ documents where {name} comes from"
    );
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fetch-db-ca.sh"))
        .expect("the fetch script");
    assert!(script.contains(&format!("{dir}/{name}")), "scripts/fetch-db-ca.sh writes {dir}/{name}");
}

#[test]
fn a_custom_resource_runs_the_migrations_on_every_deploy() {
    let t = template();
    let resources = t["Resources"].as_mapping().unwrap();
    let custom: Vec<&Value> = resources
        .values()
        .filter(|r| {
            r["Type"]
                .as_str()
                .is_some_and(|ty| ty.starts_with("Custom::") || ty == "AWS::CloudFormation::CustomResource")
        })
        .collect();
    assert_eq!(custom.len(), 1, "one custom resource");
    let p = &custom[0]["Properties"];
    let (tag, target) = tagged(&p["ServiceToken"]).expect("ServiceToken");
    assert_eq!(
        (tag.as_str(), target.as_str()),
        ("!GetAtt", Some("KobanaFinanceFunction.Arn")),
        "it invokes the function itself"
    );
    assert_eq!(p["Command"].as_str(), Some("migrate"), "the migrate path");
    assert!(is_ref(&p["DeployId"], "DeployId"), "a property that changes on every deploy");
    assert!(t["Parameters"]["DeployId"].get("Default").is_none(), "DeployId must be given on each deploy");
}
