//! A run's journal on its model client: new or resumed, it is asked before any other store (a
//! journaled answer stands for the call the run made) and told every answer; the guard takes it
//! off the client again when the run ends.

use std::path::Path;
use std::sync::Arc;

use autocoder_llm::{CallStore, LlmClient};

use super::{Journal, JournalError, JournalFile, RequestRecord};

/// Keeps the journal on the client while it lives.
pub struct StoreGuard<'a> {
    client: &'a LlmClient,
    store: Arc<dyn CallStore>,
}

impl std::fmt::Debug for StoreGuard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreGuard").finish_non_exhaustive()
    }
}

impl Drop for StoreGuard<'_> {
    fn drop(&mut self) {
        self.client.remove_store(&self.store);
    }
}

/// Starts `run_dir`'s journal with `request` (or continues `resumed`) and puts it on `client`.
pub fn open<'a>(
    run_dir: &Path,
    request: &RequestRecord,
    client: &'a LlmClient,
    resumed: Option<&JournalFile>,
) -> Result<(Arc<Journal>, StoreGuard<'a>), JournalError> {
    let journal = Arc::new(match resumed {
        None => Journal::create(run_dir, request)?,
        Some(file) => Journal::resume(file)?,
    });
    let store: Arc<dyn CallStore> = journal.clone();
    client.add_store_first(store.clone());
    Ok((journal, StoreGuard { client, store }))
}
