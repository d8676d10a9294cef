//! The application state shared by every request: configuration, database, keys.
//! Built once per process (per Lambda cold start); nothing else is shared.

use std::sync::Arc;

use crate::auth::keys::KeyStore;
use crate::config::Config;
use crate::storage::Db;

pub struct App {
    pub config: Config,
    pub db: Db,
    pub keys: KeyStore,
}

pub type AppState = Arc<App>;

impl App {
    /// Connects to the database and prepares the key store (nothing is fetched yet).
    pub async fn build(config: Config) -> Result<AppState, String> {
        let db = Db::connect(&config.database_url, config.db_max_connections)
            .await
            .map_err(|e| format!("cannot open the database: {e}"))?;
        let keys = KeyStore::from_config(&config.keys).await?;
        Ok(Arc::new(App { config, db, keys }))
    }
}
