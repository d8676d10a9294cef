//! The command line (SPEC §12). One binary: a Lambda handler when
//! `AWS_LAMBDA_RUNTIME_API` is set, otherwise these commands.

use std::path::PathBuf;
use std::process::ExitCode;

mod people;

use clap::{Parser, Subcommand, ValueEnum};

use crate::app::{App, AppState};
use crate::auth::jwt::{self, Audience, Claims};
use crate::config::{Config, Mode};
use crate::storage::{migrate, seed};

#[derive(Parser, Debug)]
#[command(name = "kobana-finance-mcp", version, about = "Kobana Finance MCP server and REST API")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the HTTP server; an empty database is migrated and seeded with demo data.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: String,
        /// Database URL (sqlite:PATH or postgres://…); overrides KFIN_DATABASE_URL.
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Apply pending database migrations.
    Migrate {
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Write the demo data (two workspaces, users in every role).
    Seed {
        #[arg(long)]
        database_url: Option<String>,
        /// Print the ids created as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Sign a token with the same secret `serve` uses; prints only the JWT.
    Token {
        /// The user id (the token's `sub`).
        #[arg(long)]
        user: String,
        /// Space-separated scopes (default: the 30 read, write and bank scopes).
        #[arg(long)]
        scope: Option<String>,
        /// Which surface the token is for.
        #[arg(long, value_enum, default_value_t = TokenAudience::Mcp)]
        audience: TokenAudience,
        /// Lifetime in seconds.
        #[arg(long, default_value_t = 86_400)]
        ttl: u64,
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Add a token id (`jti`) to the deny list, or revoke an OAuth grant (`--grant`: a
    /// person's consent to a client; its refresh tokens end at once, its access tokens at
    /// their next request).
    Revoke {
        #[arg(long, required_unless_present = "grant", conflicts_with = "grant")]
        jti: Option<String>,
        #[arg(long)]
        grant: Option<String>,
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Approve (or reject) a payable waiting at the approval gate: the person's decision
    /// the dashboard records. No route and no tool does this.
    Approve {
        /// The payable's id.
        payable: String,
        /// Reject it for good instead, for this reason.
        #[arg(long)]
        reject: Option<String>,
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Turn a workspace's approval gate on or off (on by default): with it on, payables
    /// created through the API or a tool wait for a person's approval.
    ApprovalGate {
        #[arg(long)]
        workspace: String,
        #[arg(value_parser = ["on", "off"])]
        state: String,
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Workspaces: create one with its first owner.
    Workspace {
        #[command(subcommand)]
        command: people::WorkspaceCommand,
    },
    /// A workspace's members and invitations.
    Members {
        #[command(subcommand)]
        command: people::MembersCommand,
    },
    /// The apps signed in as people (OAuth grants).
    Apps {
        #[command(subcommand)]
        command: people::AppsCommand,
    },
    /// The bank list (`GET /v1/banks`).
    Banks {
        #[command(subcommand)]
        command: BanksCommand,
    },
    /// Run an API Gateway / Function URL / ALB event through the Lambda handler and
    /// print the Lambda response.
    Replay {
        event: PathBuf,
        #[arg(long)]
        database_url: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum BanksCommand {
    /// Refresh the list from the Central Bank's ParticipantesSTR.csv (as published: UTF-8
    /// or Windows-1252), upserting by ISPB; a participant that left stays for the accounts
    /// that name it. Prints what was added, renamed and dropped, as JSON. A bad file is
    /// refused with its line, and changes nothing.
    Import {
        file: PathBuf,
        #[arg(long)]
        database_url: Option<String>,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum TokenAudience {
    Mcp,
    Api,
}

type CliResult = Result<(), String>;

fn init_logging(mode: Mode, default_level: tracing::Level) {
    let level = match std::env::var("KFIN_LOG").ok().as_deref().map(str::trim) {
        Some("off") => return,
        Some("error") => tracing::Level::ERROR,
        Some("warn") => tracing::Level::WARN,
        Some("info") => tracing::Level::INFO,
        Some("debug") => tracing::Level::DEBUG,
        _ => default_level,
    };
    let builder = tracing_subscriber::fmt().with_max_level(level);
    let _ = match mode {
        Mode::Lambda => builder.json().with_current_span(false).without_time().try_init(),
        // Colour only for a person at a terminal: a log written to a file or a pipe is plain.
        Mode::Local => builder
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_target(false)
            .compact()
            .try_init(),
    };
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
        return lambda_main();
    }
    let cli = Cli::parse();
    if matches!(cli.command, Command::Replay { .. })
        && std::env::var_os("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH").is_none()
    {
        // As in the deployed function (template.yaml): routes do not carry the stage.
        // Set before any thread starts; the event conversion reads it.
        std::env::set_var("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH", "true");
    }
    let serving = matches!(cli.command, Command::Serve { .. });
    init_logging(Mode::Local, if serving { tracing::Level::INFO } else { tracing::Level::WARN });
    let runtime = if serving {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    };
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli.command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn lambda_main() -> ExitCode {
    init_logging(Mode::Lambda, tracing::Level::INFO);
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome: CliResult = runtime.block_on(async {
        let config = Config::from_env(None).map_err(|e| e.to_string())?;
        let state = App::start(config).await?;
        crate::transport::lambda::run(state).await.map_err(|e| e.to_string())
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!(error = %message, "lambda runtime stopped");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> CliResult {
    match command {
        Command::Serve { addr, database_url } => serve(addr, database_url).await,
        Command::Migrate { database_url } => {
            let state = open(database_url).await?;
            let applied = migrate::run(&state.db).await.map_err(|e| format!("migration failed: {e}"))?;
            println!("{applied} migration(s) applied");
            Ok(())
        }
        Command::Seed { database_url, json } => {
            let state = open(database_url).await?;
            migrate::run(&state.db).await.map_err(|e| format!("migration failed: {e}"))?;
            let wrote = seed::run(&state.db).await.map_err(|e| format!("seeding failed: {e}"))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&seed::report()).map_err(|e| e.to_string())?);
            } else if wrote {
                println!("demo data written");
            } else {
                println!("demo data already present");
            }
            Ok(())
        }
        Command::Token { user, scope, audience, ttl, database_url } => {
            let config = Config::from_env(database_url).map_err(|e| e.to_string())?;
            let keys = crate::auth::keys::KeyStore::from_config(&config.keys, &crate::aws::Aws::default()).await?;
            let keys = keys.current().await.map_err(|e| e.message)?;
            println!("{}", mint(&config, &keys, &user, scope, audience, ttl)?);
            Ok(())
        }
        Command::Revoke { jti, grant, database_url } => {
            let state = open(database_url).await?;
            migrate::run(&state.db).await.map_err(|e| format!("migration failed: {e}"))?;
            let fresh = match (jti, grant) {
                (Some(jti), _) => crate::storage::identity::revoke(&state.db, &jti)
                    .await
                    .map_err(|e| format!("cannot revoke: {e}"))?,
                (None, Some(grant)) => {
                    let oauth = crate::oauth::Oauth {
                        config: &state.config,
                        db: &state.db,
                        keys: &state.keys,
                        provider: state.oidc.as_ref(),
                    };
                    crate::oauth::tokens::revoke_grant(oauth, &grant)
                        .await
                        .map_err(|e| format!("cannot revoke: {}", e.description))?
                }
                (None, None) => return Err("revoke needs --jti or --grant".into()),
            };
            println!("{}", if fresh { "revoked" } else { "already revoked" });
            Ok(())
        }
        Command::Approve { payable, reject, database_url } => {
            use crate::ops::bills::approval::{decide, Decision};
            let state = open(database_url).await?;
            migrate::run(&state.db).await.map_err(|e| format!("migration failed: {e}"))?;
            let decision = match reject {
                Some(reason) => Decision::Reject { reason },
                None => Decision::Approve,
            };
            println!("{}", decide(&state.db, &payable, &decision).await?);
            Ok(())
        }
        Command::ApprovalGate { workspace, state: on, database_url } => {
            let state = open(database_url).await?;
            migrate::run(&state.db).await.map_err(|e| format!("migration failed: {e}"))?;
            crate::ops::bills::approval::set_gate(&state.db, &workspace, on == "on").await?;
            println!("approval gate {on}");
            Ok(())
        }
        Command::Banks { command: BanksCommand::Import { file, database_url } } => {
            let bytes = std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let state = open(database_url).await?;
            let answer = crate::transport::deploy::banks_import(&state.db, &bytes).await?;
            println!("{}", serde_json::to_string_pretty(&answer).map_err(|e| e.to_string())?);
            Ok(())
        }
        Command::Workspace { command } => people::workspace(command).await,
        Command::Members { command } => people::members(command).await,
        Command::Apps { command } => people::apps(command).await,
        Command::Replay { event, database_url } => replay(event, database_url).await,
    }
}

async fn open(database_url: Option<String>) -> Result<AppState, String> {
    let config = Config::from_env(database_url).map_err(|e| e.to_string())?;
    App::build(config).await
}

/// Migrates, and seeds an empty database (local use only).
async fn bootstrap(state: &AppState) -> CliResult {
    migrate::run(&state.db).await.map_err(|e| format!("migration failed: {e}"))?;
    if seed::is_empty(&state.db).await.map_err(|e| e.to_string())? {
        seed::run(&state.db).await.map_err(|e| format!("seeding failed: {e}"))?;
        tracing::info!("empty database: demo data written");
    }
    // The first housekeeping run happens now rather than on the first request.
    if state.housekeeping.claim(crate::clock::now_unix()) {
        state.housekeep().await;
    }
    Ok(())
}

pub fn mint(
    config: &Config,
    keys: &crate::auth::keys::Keys,
    user: &str,
    scope: Option<String>,
    audience: TokenAudience,
    ttl: u64,
) -> Result<String, String> {
    let now = crate::clock::now_unix().max(0) as u64;
    let claims = Claims {
        iss: config.auth_server.clone(),
        aud: Audience::One(match audience {
            TokenAudience::Mcp => config.public_url.clone(),
            TokenAudience::Api => config.api_audience(),
        }),
        sub: user.to_string(),
        scope: scope.unwrap_or_else(|| crate::domain::roles::all_scopes().join(" ")),
        exp: now + ttl,
        iat: Some(now),
        nbf: None,
        jti: Some(uuid::Uuid::new_v4().to_string()),
        client_id: None,
        gid: None,
    };
    jwt::mint(&claims, keys)
}

async fn serve(addr: String, database_url: Option<String>) -> CliResult {
    // Locally the public URL is where we listen, unless KFIN_PUBLIC_URL says otherwise.
    let listening = format!("http://{}", addr.replace("0.0.0.0", "127.0.0.1"));
    let mut config = Config::from_env_with(database_url, Some(listening)).map_err(|e| e.to_string())?;
    let _standin = embedded_gateway(&mut config).await?;
    let state = App::build(config).await?;
    bootstrap(&state).await?;
    let listener = tokio::net::TcpListener::bind(&addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let keys = state.keys.current().await.map_err(|e| e.message)?;
    let mcp_token = mint(&state.config, &keys, seed::DEMO_OWNER, None, TokenAudience::Mcp, 86_400)?;
    let api_token = mint(&state.config, &keys, seed::DEMO_OWNER, None, TokenAudience::Api, 86_400)?;
    let mut setup = vec![
        format!("Database: {}", redact(&state.config.database_url)),
        format!("Attachment bytes: {}", state.blobs.describe()),
    ];
    setup.push(match (&_standin, &state.config.gateway.url) {
        (Some(standin), _) => format!(
            "Banking gateway: the embedded stand-in at {} (payments move every {} s)",
            standin.url,
            standin_step().as_secs()
        ),
        (None, Some(url)) => format!("Banking gateway: {url}"),
        (None, None) => "Banking gateway: not connected".to_string(),
    });
    if state.config.development_login() {
        setup.push(format!(
            "Sign-in: OAuth clients (Claude Code, Cursor, the Inspector) add {}/mcp and sign in through the \
             development login",
            state.config.public_url
        ));
    } else if let Some(oidc) = state.config.oauth.oidc.as_ref().filter(|_| state.config.serves_authorization()) {
        setup.push(format!(
            "Sign-in: OAuth clients add {}/mcp and sign in through the company's OpenID Connect provider {} (a \
             person invited by e-mail)",
            state.config.public_url, oidc.issuer
        ));
    } else if state.config.serves_authorization() {
        setup.push(
            "Sign-in: no identity source here (the development login needs the development secret and a loopback URL)"
                .to_string(),
        );
    }
    // Written once and never again: a reader that went away (`make run | head`) loses
    // the rest of the lines, not the server.
    let mut printed = banner(&state.config, &mcp_token, &api_token);
    for line in setup {
        printed.push_str(&line);
        printed.push('\n');
    }
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(printed.as_bytes()).and_then(|()| stdout.flush());
    drop(stdout);
    crate::transport::local::serve(listener, crate::transport::router(state))
        .await
        .map_err(|e| format!("server error: {e}"))
}

/// What `serve` prints first (the README's `make run` block shows it): where to point a
/// client, the demo owner's two tokens, each labelled with the door it opens, and how to
/// start the demo afresh.
pub fn banner(config: &Config, mcp_token: &str, api_token: &str) -> String {
    let (public, api) = (&config.public_url, &config.api_base_url);
    format!(
        "Kobana Finance MCP server listening on {public}/\n\
         MCP server URL, to paste into a client: {public}/mcp (find mode, five tools: {public}/mcp/find)\n\
         REST API: {api}/v1 (OpenAPI: {api}/v1/openapi.json); health: {public}/health\n\
         MCP token for the demo owner (ana.souza@demo.kobana.com.br, 24 h), for {public}/mcp as \
         Authorization: Bearer <token>:\n\
         {mcp_token}\n\
         API token for the same person (24 h), for {api}/v1:\n\
         {api_token}\n\
         Start the demo afresh: stop the server (Ctrl-C), then make demo-reset and make run\n"
    )
}

/// The time between two steps of a payment at the embedded stand-in:
/// `KFIN_STANDIN_STEP_SECONDS`, 5 by default.
fn standin_step() -> std::time::Duration {
    let seconds = std::env::var("KFIN_STANDIN_STEP_SECONDS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(5u64);
    std::time::Duration::from_secs(seconds.max(1))
}

/// Locally, without a gateway configured, the stand-in of Kobana's banking API is
/// started in this process (127.0.0.1, a port of its own) with fresh credentials, and
/// the server is pointed at it: the demo's checking account is connected there, and
/// each payment moves on its own and is reported to this server's webhook.
/// `KFIN_STANDIN_FAILURE_RATE` (0 to 1) makes that share of its calls fail.
async fn embedded_gateway(config: &mut Config) -> Result<Option<crate::gateway::standin::StandIn>, String> {
    use crate::gateway::standin::{Auto, Options, StandIn};
    if !config.gateway.embedded {
        return Ok(None);
    }
    // From the operating system's generator (uuid's): the crypto library's own is seeded
    // on its first use, about 35 ms of a cold start, which `serve` leaves to later.
    let random = || format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    let credentials = crate::gateway::Credentials { api_token: random(), webhook_secret: random() };
    let failure_rate =
        std::env::var("KFIN_STANDIN_FAILURE_RATE").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0.0);
    let standin = StandIn::start(Options {
        api_token: credentials.api_token.clone(),
        webhook_secret: credentials.webhook_secret.clone(),
        accounts: vec![seed::ACME_CHECKING_KOBANA_UID.to_string()],
        billet_accounts: vec![seed::ACME_CHECKING_BILLET_ACCOUNT.parse().unwrap_or_default()],
        auto: Some(Auto {
            webhook_url: format!("{}/v1/webhooks/kobana", config.public_url),
            step: standin_step(),
            delay: std::time::Duration::from_millis(500),
        }),
        failure_rate,
        lost_answer_rate: 0.0,
    })
    .await?;
    config.gateway.url = Some(standin.url.clone());
    config.gateway.credentials = crate::config::GatewayCredentials::Static(credentials);
    Ok(Some(standin))
}

/// A database URL without its password.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

async fn replay(event: PathBuf, database_url: Option<String>) -> CliResult {
    let bytes = std::fs::read(&event).map_err(|e| format!("cannot read {}: {e}", event.display()))?;
    let payload = crate::transport::lambda::parse_event(&bytes)?;
    let state = open(database_url).await?;
    bootstrap(&state).await?;
    let app = crate::transport::router(state);
    let context = lambda_http::Context::default();
    let Ok(response) = crate::transport::lambda::handle_event(app, lambda_http::LambdaEvent { payload, context }).await;
    println!("{}", serde_json::to_string_pretty(&response).map_err(|e| e.to_string())?);
    Ok(())
}
