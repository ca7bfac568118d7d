//! Runs chunks through worker threads and hands the results back in file order, with bounded
//! memory: at most a few chunks are read ahead of the slowest one.

use std::collections::BTreeMap;
use std::sync::{Mutex, mpsc};

use crate::ProfileError;
use crate::chunks::{Chunk, Chunker};

/// Why a worker gave up on a chunk.
#[derive(Debug)]
pub(crate) enum ChunkFailure {
    /// A real error in the data.
    Error(ProfileError),
    /// The chunk did not end on a record boundary (a stray quote misled the quote counting):
    /// the caller must start over with boundaries found by parsing.
    Boundary,
}

impl From<ProfileError> for ChunkFailure {
    fn from(e: ProfileError) -> Self {
        ChunkFailure::Error(e)
    }
}

/// What a worker made of one chunk, with the chunk's place in the file.
pub(crate) struct Done<A> {
    pub(crate) index: u64,
    pub(crate) bytes: u64,
    pub(crate) first_line: u64,
    pub(crate) value: A,
}

/// Runs `work` on every chunk of `chunker` with `threads` workers and calls `consume` with the
/// results in file order.
#[allow(clippy::too_many_lines)] // the threads' bodies and their wiring read best together
pub(crate) fn run<A, W, C>(
    mut chunker: Chunker<'_>,
    threads: usize,
    work: W,
    mut consume: C,
) -> Result<(), ChunkFailure>
where
    A: Send,
    W: Fn(&Chunk) -> Result<A, ChunkFailure> + Sync,
    C: FnMut(Done<A>) -> Result<(), ProfileError>,
{
    let threads = threads.max(1);
    let ahead = threads * 2;
    let source_name = chunker.source_name.clone();
    let (chunk_tx, chunk_rx) = mpsc::sync_channel::<Chunk>(threads);
    let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<u8>>();
    chunker.recycled = Some(recycle_rx);
    let chunk_rx = Mutex::new(chunk_rx);
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<Result<Done<A>, ChunkFailure>>();
        // Tokens bound the chunks in flight (read but not yet consumed).
        let (token_tx, token_rx) = mpsc::sync_channel::<()>(ahead);
        for _ in 0..ahead {
            let _ = token_tx.send(());
        }

        // Workers first: when the process may not start them all, fewer do the same work.
        let work = &work;
        let chunk_rx = &chunk_rx;
        let mut workers = 0;
        let mut refused = None;
        for i in 0..threads {
            let done_tx = done_tx.clone();
            let recycle_tx = recycle_tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("profile-worker-{i}"))
                .spawn_scoped(scope, move || {
                    loop {
                        let next = match chunk_rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok(chunk) = next else { return };
                        let result = work(&chunk).map(|value| Done {
                            index: chunk.index,
                            bytes: chunk.bytes.len() as u64,
                            first_line: chunk.first_line,
                            value,
                        });
                        let _ = recycle_tx.send(chunk.bytes);
                        let failed = result.is_err();
                        if done_tx.send(result).is_err() || failed {
                            return;
                        }
                    }
                });
            match spawned {
                Ok(_) => workers += 1,
                Err(error) => {
                    refused = Some(error);
                    break;
                }
            }
        }
        let spawn_error = |error| {
            ChunkFailure::Error(ProfileError::Spawn {
                source_name: source_name.clone(),
                error,
            })
        };
        if workers == 0 {
            drop(chunk_tx);
            return Err(spawn_error(refused.unwrap_or_else(|| {
                std::io::Error::other("no worker thread was started")
            })));
        }
        if let Some(error) = refused {
            tracing::debug!(workers, %error, "fewer worker threads than asked for");
        }

        let reader_done = done_tx.clone();
        let reader = std::thread::Builder::new()
            .name("profile-reader".to_owned())
            .spawn_scoped(scope, move || {
                loop {
                    if token_rx.recv().is_err() {
                        return;
                    }
                    match chunker.next_chunk() {
                        Ok(Some(chunk)) => {
                            if chunk_tx.send(chunk).is_err() {
                                return;
                            }
                        }
                        Ok(None) => return,
                        Err(e) => {
                            let _ = reader_done.send(Err(ChunkFailure::Error(e)));
                            return;
                        }
                    }
                }
            });
        // A reader that could not start dropped the chunk sender: the workers stop.
        if let Err(error) = reader {
            return Err(spawn_error(error));
        }
        drop(done_tx);

        let mut pending: BTreeMap<u64, Done<A>> = BTreeMap::new();
        let mut next = 0u64;
        for result in done_rx {
            let done = result?;
            pending.insert(done.index, done);
            while let Some(done) = pending.remove(&next) {
                next += 1;
                consume(done)?;
                let _ = token_tx.send(());
            }
        }
        if pending.is_empty() {
            Ok(())
        } else {
            // A worker died without reporting: only a panic does that.
            Err(ChunkFailure::Error(ProfileError::Worker { source_name }))
        }
    })
}
