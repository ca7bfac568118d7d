//! Which environment cache a generation uses: the configured one, or with `--cache disable` a
//! throwaway one in the run directory. The throwaway cache has a fixed place, so a run killed
//! halfway leaves it for `autocoder resume` to reuse instead of building the environment
//! again; it is removed when the run ends (drop), whether the tests passed or not.

use std::path::{Path, PathBuf};

use autocoder_sandbox::EnvCache;

use crate::options::{CacheMode, GenerateOptions};

/// The throwaway cache's directory inside the run directory.
pub const THROWAWAY_DIR: &str = ".env-cache";

/// The run's environment cache; a throwaway one is removed when this is dropped.
#[derive(Debug)]
pub struct RunCache {
    cache: EnvCache,
    throwaway: Option<PathBuf>,
}

impl RunCache {
    /// The cache `options` ask for.
    pub fn new(options: &GenerateOptions) -> Self {
        if options.sandbox.cache == CacheMode::Disable {
            // Absolute: the sandbox runs the environment's interpreter from another directory.
            let dir = options.out_dir.join(THROWAWAY_DIR);
            let dir = std::path::absolute(&dir).unwrap_or(dir);
            return Self {
                cache: EnvCache::new(&dir),
                throwaway: Some(dir),
            };
        }
        let dir = options
            .sandbox
            .cache_dir
            .clone()
            .unwrap_or_else(EnvCache::default_dir);
        Self {
            cache: EnvCache::new(dir),
            throwaway: None,
        }
    }

    /// The cache.
    pub fn cache(&self) -> &EnvCache {
        &self.cache
    }

    /// The throwaway directory, when there is one.
    pub fn throwaway(&self) -> Option<&Path> {
        self.throwaway.as_deref()
    }
}

impl Drop for RunCache {
    fn drop(&mut self) {
        if let Some(dir) = &self.throwaway
            && let Err(e) = std::fs::remove_dir_all(dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot remove the throwaway environment cache");
        }
    }
}
