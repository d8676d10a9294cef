//! Where attachment bytes live: in the attachment's own database row (the default), or
//! as objects in S3 when `KFIN_BLOB_URL=s3://bucket[/prefix]`.
//!
//! An object's location is written into the row (`blob_key`, as `s3://bucket/key`), so a
//! download always reads from the store the row names, whatever the configuration says
//! today: rows written before S3 was configured keep their bytes in the database, and
//! objects written under another bucket or prefix stay readable.
//!
//! The S3 client is the process's ([`crate::aws::Aws`]), built on first use from the AWS
//! environment (region, credentials, `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`), so a
//! process that never touches an object never pays for it at cold start. A custom
//! endpoint (a local stand-in such as moto or MinIO) is addressed path-style
//! (`http://host/bucket/key`), since such endpoints do not resolve bucket subdomains.
//!
//! Every failure of the store is 503 `service_unavailable` with `Retry-After`; the cause
//! is logged for operators and never shown to the caller.

use bytes::Bytes;

use crate::aws::{Aws, AwsError};
use crate::error::ApiError;

/// Where new uploads go.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Database,
    S3 { bucket: String, prefix: String },
}

/// Where one upload's bytes were put.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// In the attachment's row (`content`).
    Row,
    /// An object, at this location (`s3://bucket/key`, the row's `blob_key`).
    Object(String),
}

/// The process's blob store. Cheap to share behind the application's `Arc`.
pub struct BlobStore {
    target: Target,
    aws: Aws,
}

impl std::fmt::Debug for BlobStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlobStore({})", self.describe())
    }
}

/// S3's bucket naming rules (3–63 characters of lower-case letters, digits, dots and
/// hyphens, starting and ending with a letter or digit).
fn valid_bucket(name: &str) -> bool {
    let bytes = name.as_bytes();
    (3..=63).contains(&bytes.len())
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'.' || *b == b'-')
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

/// Splits `s3://bucket[/key]` into the bucket and the rest (without slashes around it).
fn split_s3_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("s3://")?;
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    valid_bucket(bucket).then_some((bucket, key.trim_matches('/')))
}

fn store_unavailable(what: &'static str, error: &AwsError) -> ApiError {
    tracing::warn!(operation = what, error = %error, "blob store unavailable");
    ApiError::unavailable("attachment store")
}

impl BlobStore {
    /// Bytes in the database.
    pub fn database() -> BlobStore {
        BlobStore { target: Target::Database, aws: Aws::default() }
    }

    /// The store `KFIN_BLOB_URL` names: none (or empty) is the database; otherwise
    /// `s3://bucket` or `s3://bucket/prefix`. Objects (also those rows name when new
    /// bytes go to the database) are read and written through `aws`.
    pub fn from_url(url: Option<&str>, aws: &Aws) -> Result<BlobStore, String> {
        let url = url.map(str::trim).filter(|u| !u.is_empty());
        let Some(url) = url else {
            return Ok(BlobStore { target: Target::Database, aws: aws.clone() });
        };
        let (bucket, prefix) = split_s3_url(url)
            .ok_or_else(|| format!("KFIN_BLOB_URL must be s3://bucket or s3://bucket/prefix, got {url:?}"))?;
        if !prefix.is_empty()
            && prefix.split('/').any(|segment| segment.is_empty() || segment == "." || segment == "..")
        {
            return Err(format!("KFIN_BLOB_URL has an empty or relative path segment: {url:?}"));
        }
        Ok(BlobStore {
            target: Target::S3 { bucket: bucket.to_string(), prefix: prefix.to_string() },
            aws: aws.clone(),
        })
    }

    /// Where new uploads go, for the operator (`database` or `s3://bucket/prefix`).
    pub fn describe(&self) -> String {
        match &self.target {
            Target::Database => "database".to_string(),
            Target::S3 { bucket, prefix } if prefix.is_empty() => format!("s3://{bucket}"),
            Target::S3 { bucket, prefix } => format!("s3://{bucket}/{prefix}"),
        }
    }

    /// Puts the bytes of attachment `id` of `workspace_id` where new uploads go. With
    /// S3 the object is written now, before any row exists: the caller records the
    /// returned [`Placement`] in the row afterwards, so a failure in between leaves at
    /// worst an object that no row names, never a row without its bytes.
    pub async fn put(
        &self,
        workspace_id: &str,
        id: &str,
        content: &Bytes,
        content_type: &str,
    ) -> Result<Placement, ApiError> {
        let Target::S3 { bucket, prefix } = &self.target else {
            return Ok(Placement::Row);
        };
        let key =
            if prefix.is_empty() { format!("{workspace_id}/{id}") } else { format!("{prefix}/{workspace_id}/{id}") };
        self.aws
            .put_object(bucket, &key, content.clone(), content_type)
            .await
            .map_err(|e| store_unavailable("put", &e))?;
        Ok(Placement::Object(format!("s3://{bucket}/{key}")))
    }

    /// The bytes of the object at `location` (a row's `blob_key`). An object that is
    /// gone is `not_found` (a download racing the attachment's delete).
    pub async fn get(&self, location: &str) -> Result<Bytes, ApiError> {
        let (bucket, key) = parse_location(location)?;
        match self.aws.get_object(bucket, key).await {
            Ok(Some(data)) => Ok(data),
            Ok(None) => {
                tracing::warn!(location, "attachment object not found");
                Err(ApiError::not_found("Attachment"))
            }
            Err(e) => Err(store_unavailable("get", &e)),
        }
    }

    /// Removes the object at `location`; removing one that is already gone succeeds.
    pub async fn remove(&self, location: &str) -> Result<(), ApiError> {
        let (bucket, key) = parse_location(location)?;
        self.aws.delete_object(bucket, key).await.map_err(|e| store_unavailable("delete", &e))?;
        Ok(())
    }
}

/// `s3://bucket/key` → (bucket, key); anything else in a row is corrupt data.
fn parse_location(location: &str) -> Result<(&str, &str), ApiError> {
    match split_s3_url(location) {
        Some((bucket, key)) if !key.is_empty() => Ok((bucket, key)),
        _ => {
            tracing::error!(location, "attachment row names an unreadable blob location");
            Err(ApiError::internal())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(url: Option<&str>) -> Result<BlobStore, String> {
        BlobStore::from_url(url, &Aws::default())
    }

    #[test]
    fn blob_url_names_the_database_or_a_bucket_and_prefix() {
        assert_eq!(store(None).unwrap().describe(), "database");
        assert_eq!(store(Some("  ")).unwrap().describe(), "database");
        assert_eq!(store(Some("s3://kfin-files")).unwrap().describe(), "s3://kfin-files");
        assert_eq!(store(Some("s3://kfin-files/")).unwrap().describe(), "s3://kfin-files");
        assert_eq!(
            store(Some("s3://kfin.files/prod/attachments/")).unwrap().describe(),
            "s3://kfin.files/prod/attachments"
        );
        for bad in [
            "kfin-files",
            "s3://",
            "s3://Kfin",
            "s3://ab",
            "s3://-kfin",
            "https://kfin/x",
            "s3://kfin/a//b",
            "s3://kfin/../x",
        ] {
            assert!(store(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_row_location_must_name_a_bucket_and_a_key() {
        assert_eq!(parse_location("s3://kfin-files/p/ws/id").unwrap(), ("kfin-files", "p/ws/id"));
        assert!(parse_location("s3://kfin-files").is_err());
        assert!(parse_location("s3://kfin-files/").is_err());
        assert!(parse_location("/tmp/file").is_err());
    }

    #[tokio::test]
    async fn the_database_store_keeps_bytes_in_the_row() {
        let store = BlobStore::database();
        assert_eq!(
            store.put("ws", "id", &Bytes::from_static(b"%PDF-"), "application/pdf").await.unwrap(),
            Placement::Row
        );
    }
}
