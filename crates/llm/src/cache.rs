//! The model-call cache: answers kept on disk by request, so an identical request (same model,
//! endpoint, messages, schema, sampling parameters, and the same candidate index when one
//! prompt is asked several times) costs no call and no token. A [`CallStore`]; add it to a
//! client with [`crate::LlmClient::add_store`].
//!
//! One file per answer under `DIR/<2 hex>/<64 hex>.json`, written atomically; eviction by age
//! and total size, oldest first.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::store::{Answered, CallKey, CallStore, StoredAnswer};
use crate::{LlmError, Usage};

/// Overrides the cache directory.
pub const MODEL_CACHE_DIR_ENV_VAR: &str = "AUTOCODER_MODEL_CACHE_DIR";

/// How the cache is used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ModelCacheMode {
    /// Answer from the cache when it has the request; keep new answers.
    #[default]
    Auto,
    /// Ask the model again and keep the new answers.
    Refresh,
    /// Neither read nor write.
    Off,
}

impl ModelCacheMode {
    /// `auto`, `refresh` or `off`: the name [`ModelCacheMode::from_name`] parses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Refresh => "refresh",
            Self::Off => "off",
        }
    }

    /// Parses `auto`, `refresh` or `off`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(Self::Auto),
            "refresh" => Some(Self::Refresh),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

/// Bounds of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eviction {
    /// Answers older than this are removed.
    pub max_age: Duration,
    /// All answers together take at most this many bytes (oldest removed first).
    pub max_bytes: u64,
}

impl Default for Eviction {
    fn default() -> Self {
        Self {
            max_age: Duration::from_secs(30 * 24 * 3600),
            max_bytes: 1 << 30,
        }
    }
}

/// What eviction removed and kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Answers kept.
    pub entries: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Answers removed.
    pub removed: u64,
}

/// One kept answer.
#[derive(Debug, Serialize, Deserialize)]
struct CachedAnswer {
    step: String,
    fingerprint: String,
    occurrence: u32,
    endpoint: String,
    usage: Usage,
    latency_ms: u64,
    response: Value,
}

/// The cache of one client.
#[derive(Debug, Clone)]
pub struct ModelCache {
    dir: PathBuf,
    mode: ModelCacheMode,
    endpoint: String,
    max_age: Duration,
}

impl ModelCache {
    /// `$AUTOCODER_MODEL_CACHE_DIR`, else `$XDG_CACHE_HOME/autocoder/models`, else
    /// `~/.cache/autocoder/models`.
    pub fn default_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os(MODEL_CACHE_DIR_ENV_VAR) {
            return PathBuf::from(dir);
        }
        std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir)
            .join("autocoder")
            .join("models")
    }

    /// A cache in `dir` for requests sent to `endpoint` (answers of one server are never
    /// served for another's).
    pub fn new(dir: impl Into<PathBuf>, mode: ModelCacheMode, endpoint: &str) -> Self {
        Self {
            dir: dir.into(),
            mode,
            endpoint: endpoint.to_owned(),
            max_age: Eviction::default().max_age,
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &CallKey<'_>) -> PathBuf {
        let mut hasher = Sha256::new();
        for part in [self.endpoint.as_str(), key.fingerprint] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.update(key.occurrence.to_le_bytes());
        let mut hex = String::with_capacity(64);
        for byte in hasher.finalize() {
            let _ = write!(hex, "{byte:02x}");
        }
        self.dir.join(&hex[..2]).join(format!("{hex}.json"))
    }
}

impl CallStore for ModelCache {
    fn lookup(&self, key: &CallKey<'_>) -> Option<StoredAnswer> {
        if self.mode != ModelCacheMode::Auto {
            return None;
        }
        let path = self.path(key);
        let fresh = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age <= self.max_age);
        if !fresh {
            return None;
        }
        let bytes = std::fs::read(&path).ok()?;
        let cached: CachedAnswer = serde_json::from_slice(&bytes).ok()?;
        if cached.fingerprint != key.fingerprint || cached.occurrence != key.occurrence {
            return None;
        }
        tracing::info!(step = key.step, "answered from the model cache");
        Some(StoredAnswer {
            response: cached.response,
            latency: Duration::from_millis(cached.latency_ms),
            counts: false,
        })
    }

    fn store(&self, key: &CallKey<'_>, answer: &Answered<'_>) -> Result<(), LlmError> {
        if self.mode == ModelCacheMode::Off {
            return Ok(());
        }
        let path = self.path(key);
        let cached = CachedAnswer {
            step: key.step.to_owned(),
            fingerprint: key.fingerprint.to_owned(),
            occurrence: key.occurrence,
            endpoint: self.endpoint.clone(),
            usage: answer.usage,
            latency_ms: u64::try_from(answer.latency.as_millis()).unwrap_or(u64::MAX),
            response: answer.response.clone(),
        };
        // A cache that cannot be written costs a call next time, nothing more.
        let written = (|| -> std::io::Result<()> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let bytes = serde_json::to_vec(&cached).map_err(std::io::Error::other)?;
            let partial = path.with_extension(format!("partial{}", std::process::id()));
            std::fs::write(&partial, bytes)?;
            std::fs::rename(&partial, &path)
        })();
        if let Err(error) = written {
            tracing::warn!(path = %path.display(), %error, "cannot write to the model cache");
        }
        Ok(())
    }
}

/// Every answer file under `dir` with its size and age.
fn entries(dir: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    let mut found = Vec::new();
    let Ok(shards) = std::fs::read_dir(dir) else {
        return found;
    };
    for shard in shards.flatten() {
        let Ok(files) = std::fs::read_dir(shard.path()) else {
            continue;
        };
        for file in files.flatten() {
            let Ok(meta) = file.metadata() else { continue };
            if meta.is_file() {
                let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                found.push((file.path(), meta.len(), modified));
            }
        }
    }
    found
}

/// Puts the model-call cache in [`ModelCache::default_dir`] on `client` in `mode` (never over
/// a replay, which answers every call already; nothing for [`ModelCacheMode::Off`]), trimming
/// the cache to the default [`Eviction`] bounds once a day.
pub fn install_model_cache(client: &crate::LlmClient, mode: ModelCacheMode) {
    if mode == ModelCacheMode::Off || client.config().replay.is_some() {
        return;
    }
    let dir = ModelCache::default_dir();
    trim_daily(&dir);
    client.add_store(std::sync::Arc::new(ModelCache::new(
        dir,
        mode,
        client.endpoint(),
    )));
}

/// Evicts by the default bounds when the last trim (the `.trimmed` marker) is a day old.
fn trim_daily(dir: &Path) {
    let marker = dir.join(".trimmed");
    let due = std::fs::metadata(&marker)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_none_or(|age| age > Duration::from_secs(24 * 3600));
    if !due || !dir.is_dir() {
        return;
    }
    if let Err(error) = evict(dir, Eviction::default()) {
        tracing::warn!(%error, "cannot trim the model cache");
    }
    let _ = std::fs::write(&marker, b"");
}

/// Size of the cache in `dir`.
pub fn cache_size(dir: &Path) -> CacheStats {
    let all = entries(dir);
    CacheStats {
        entries: all.len() as u64,
        bytes: all.iter().map(|(_, size, _)| size).sum(),
        removed: 0,
    }
}

/// Removes answers older than the bound, then the oldest until the rest fit the size bound.
pub fn evict(dir: &Path, bounds: Eviction) -> Result<CacheStats, LlmError> {
    let now = SystemTime::now();
    let mut all = entries(dir);
    all.sort_by_key(|(_, _, modified)| std::cmp::Reverse(*modified));
    let mut stats = CacheStats::default();
    for (path, size, modified) in all {
        let too_old = now
            .duration_since(modified)
            .is_ok_and(|age| age > bounds.max_age);
        if too_old || stats.bytes + size > bounds.max_bytes {
            std::fs::remove_file(&path).map_err(|source| LlmError::Io {
                action: "cannot remove from the model cache",
                path: path.clone(),
                source,
            })?;
            stats.removed += 1;
        } else {
            stats.entries += 1;
            stats.bytes += size;
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn key<'a>(fingerprint: &'a str, request: &'a Value, occurrence: u32) -> CallKey<'a> {
        CallKey {
            index: 0,
            step: "plan",
            fingerprint,
            occurrence,
            request,
        }
    }

    fn answer(response: &Value) -> Answered<'_> {
        Answered {
            response,
            text: "t",
            usage: Usage::default(),
            latency: Duration::from_millis(3),
            counts: true,
        }
    }

    #[test]
    fn answers_are_kept_by_request_candidate_and_endpoint() {
        let dir = tempfile::tempdir().unwrap();
        let request = json!({});
        let response = json!({"choices": []});
        let cache = ModelCache::new(dir.path(), ModelCacheMode::Auto, "http://a/v1");
        assert_eq!(cache.lookup(&key("f", &request, 0)), None);
        cache
            .store(&key("f", &request, 0), &answer(&response))
            .unwrap();
        let hit = cache.lookup(&key("f", &request, 0)).unwrap();
        assert_eq!(hit.response, response);
        assert!(!hit.counts, "a cached answer is free");
        assert_eq!(
            cache.lookup(&key("f", &request, 1)),
            None,
            "another candidate"
        );
        assert_eq!(
            cache.lookup(&key("g", &request, 0)),
            None,
            "another request"
        );
        let other = ModelCache::new(dir.path(), ModelCacheMode::Auto, "http://b/v1");
        assert_eq!(other.lookup(&key("f", &request, 0)), None, "another server");
        let refresh = ModelCache::new(dir.path(), ModelCacheMode::Refresh, "http://a/v1");
        assert_eq!(
            refresh.lookup(&key("f", &request, 0)),
            None,
            "refresh asks again"
        );
        assert_eq!(cache_size(dir.path()).entries, 1);
    }

    #[test]
    fn eviction_keeps_the_newest_within_the_size_bound() {
        let dir = tempfile::tempdir().unwrap();
        let request = json!({});
        let cache = ModelCache::new(dir.path(), ModelCacheMode::Auto, "e");
        for (i, fingerprint) in ["a", "b", "c"].iter().enumerate() {
            let response = json!({"n": i, "pad": "x".repeat(100)});
            cache
                .store(&key(fingerprint, &request, 0), &answer(&response))
                .unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        let one = cache_size(dir.path()).bytes / 3;
        let stats = evict(
            dir.path(),
            Eviction {
                max_age: Duration::from_secs(3600),
                max_bytes: one * 2 + 1,
            },
        )
        .unwrap();
        assert_eq!((stats.entries, stats.removed), (2, 1));
        assert!(
            cache.lookup(&key("a", &request, 0)).is_none(),
            "the oldest went"
        );
        assert!(cache.lookup(&key("c", &request, 0)).is_some());
        let stats = evict(
            dir.path(),
            Eviction {
                max_age: Duration::ZERO,
                max_bytes: u64::MAX,
            },
        )
        .unwrap();
        assert_eq!((stats.entries, stats.removed), (0, 2), "all too old");
    }
}
