//! The application state shared by every request: configuration, database, keys, the
//! attachment blob store and the housekeeping clock. Built once per process (per Lambda
//! cold start); nothing else is shared.

use std::sync::Arc;

use crate::auth::keys::KeyStore;
use crate::config::Config;
use crate::storage::blob::BlobStore;
use crate::storage::credentials::DatabaseCredentials;
use crate::storage::housekeeping::{self, Housekeeping};
use crate::storage::Db;

pub struct App {
    pub config: Config,
    /// The AWS clients (Secrets Manager, S3) the stores below share: one configuration,
    /// loaded on the first call.
    pub aws: crate::aws::Aws,
    pub db: Db,
    pub keys: KeyStore,
    pub blobs: BlobStore,
    pub gateway: crate::gateway::Gateway,
    pub housekeeping: Housekeeping,
    pub token_rules: crate::auth::TokenRules,
    pub verified_tokens: crate::auth::VerifiedTokens,
    /// The company's OpenID provider people sign in with, when configured (nothing is
    /// fetched of it until the first sign-in).
    pub oidc: Option<crate::oauth::oidc::Provider>,
}

pub type AppState = Arc<App>;

impl App {
    /// What the operations use of the state.
    pub fn services(&self) -> crate::ops::Services<'_> {
        crate::ops::Services {
            config: &self.config,
            db: &self.db,
            keys: &self.keys,
            blobs: &self.blobs,
            gateway: &self.gateway,
        }
    }

    /// The upkeep every counted request gives its chance to run: the process's
    /// housekeeping (which prunes the rate-limit counters) when due, and the database
    /// secret's refresh when due. Both doors call it as they count a request, where every
    /// request meets the database; it returns at once.
    pub fn upkeep_if_due(self: &Arc<Self>) {
        self.housekeep_if_due();
        self.db.refresh_credentials_if_due();
    }

    /// What authentication needs of the state.
    pub fn verifier(&self) -> crate::auth::Verifier<'_> {
        crate::auth::Verifier {
            config: &self.config,
            rules: &self.token_rules,
            verified: &self.verified_tokens,
            keys: &self.keys,
            db: &self.db,
        }
    }

    /// Connects to the database and prepares the key and blob stores (nothing is
    /// fetched from AWS for the keys yet).
    pub async fn build(config: Config) -> Result<AppState, String> {
        App::open(config, false).await
    }

    /// As [`App::build`], for a Lambda cold start: the keys are fetched too, at the same
    /// time as the database secret (and the connection), not one after the other.
    pub async fn start(config: Config) -> Result<AppState, String> {
        App::open(config, true).await
    }

    async fn open(config: Config, warm_keys: bool) -> Result<AppState, String> {
        let aws = crate::aws::Aws::default();
        let blobs = BlobStore::from_url(config.blob_url.as_deref(), &aws)?;
        let database = async {
            match &config.database_secret {
                Some(secret) => {
                    let credentials = Arc::new(DatabaseCredentials::new(aws.clone(), secret.clone()));
                    Db::connect_with_secret(credentials, config.db_max_connections).await
                }
                None => Db::connect(&config.database_url, config.db_max_connections).await.map_err(|e| e.to_string()),
            }
            .map_err(|e| format!("cannot open the database: {e}"))
        };
        let keys = async {
            let keys = KeyStore::from_config(&config.keys, &aws).await?;
            if warm_keys {
                keys.warm().await;
            }
            Ok::<_, String>(keys)
        };
        let (db, keys) = tokio::try_join!(database, keys)?;
        let housekeeping = Housekeeping::new(config.rate_limits.window_seconds);
        let token_rules = crate::auth::TokenRules::new(&config);
        let gateway = crate::gateway::Gateway::new(&config.gateway, &aws);
        let oidc = config.oauth.oidc.clone().map(|oidc| crate::oauth::oidc::Provider::new(oidc, aws.clone()));
        Ok(Arc::new(App {
            config,
            aws,
            db,
            keys,
            blobs,
            gateway,
            housekeeping,
            token_rules,
            verified_tokens: Default::default(),
            oidc,
        }))
    }

    /// One housekeeping run now: rate-limit counters older than the previous window go,
    /// and pending removals of deleted attachments' objects are carried out.
    pub async fn housekeep(&self) -> housekeeping::Report {
        let horizon = crate::clock::now_unix() - 2 * self.config.rate_limits.window_seconds;
        housekeeping::run(&self.db, &self.blobs, horizon).await
    }

    /// Starts a housekeeping run on its own task when one is due (the first request of
    /// the process, then once per rate-limit window); returns at once either way.
    pub fn housekeep_if_due(self: &Arc<Self>) {
        if self.housekeeping.claim(crate::clock::now_unix()) {
            let app = Arc::clone(self);
            tokio::spawn(async move {
                app.housekeep().await;
            });
        }
    }

    /// Removes the objects of just-deleted attachments on a task of its own, so the
    /// delete's answer does not wait for the blob store; what fails is retried by the
    /// periodic housekeeping.
    pub fn remove_deleted_blobs_soon(self: &Arc<Self>) {
        let app = Arc::clone(self);
        tokio::spawn(async move {
            if let Err(e) = housekeeping::remove_deleted_blobs(&app.db, &app.blobs).await {
                tracing::warn!(error = %e, "could not read the pending object removals");
            }
        });
    }
}
