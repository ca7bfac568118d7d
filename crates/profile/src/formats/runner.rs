//! Runs the units of a typed file (Parquet row groups, Arrow record batches, batches of JSON
//! or Excel rows) through worker threads and hands the results back in file order. At most
//! `2 × threads` units are read or worked on ahead of the one being merged, which bounds memory.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, mpsc};

use autocoder_schema::FileFormat;

use crate::ProfileError;

/// Calls `next` (on a reader thread) until it gives `None`, runs `work(index, unit)` on
/// `threads` workers, and calls `consume` with the results in the order `next` gave them. A
/// panic in `next` or `work` (a decoding crate tripping over a malformed `format` file: the
/// fuzz target found some in arrow-ipc and parquet) ends the run as a corrupt file, not a crash.
pub(crate) fn run_units<U, A, N, W, C>(
    source_name: &str,
    format: FileFormat,
    threads: usize,
    mut next: N,
    work: W,
    mut consume: C,
) -> Result<(), ProfileError>
where
    U: Send,
    A: Send,
    N: FnMut() -> Result<Option<U>, ProfileError> + Send,
    W: Fn(u64, U) -> Result<A, ProfileError> + Sync,
    C: FnMut(A) -> Result<(), ProfileError>,
{
    let threads = threads.max(1);
    let ahead = threads * 2;
    std::thread::scope(|scope| {
        let (unit_tx, unit_rx) = mpsc::sync_channel::<(u64, U)>(threads);
        let unit_rx = Arc::new(Mutex::new(unit_rx));
        let (done_tx, done_rx) = mpsc::channel::<(u64, Result<A, ProfileError>)>();
        let (token_tx, token_rx) = mpsc::sync_channel::<()>(ahead);
        for _ in 0..ahead {
            let _ = token_tx.send(());
        }
        let spawn_error = |error| ProfileError::Spawn {
            source_name: source_name.to_owned(),
            error,
        };
        let panicked = |payload: Box<dyn std::any::Any + Send>| {
            super::corrupt(
                source_name,
                format,
                format!("the decoder failed: {}", panic_message(payload.as_ref())),
            )
        };
        let work = &work;
        for i in 0..threads {
            let unit_rx = Arc::clone(&unit_rx);
            let done_tx = done_tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("profile-worker-{i}"))
                .spawn_scoped(scope, move || {
                    loop {
                        let next = match unit_rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok((index, unit)) = next else { return };
                        let result = catch_unwind(AssertUnwindSafe(|| work(index, unit)))
                            .unwrap_or_else(|payload| Err(panicked(payload)));
                        let failed = result.is_err();
                        if done_tx.send((index, result)).is_err() || failed {
                            return;
                        }
                    }
                });
            if let Err(error) = spawned {
                if i == 0 {
                    return Err(spawn_error(error));
                }
                tracing::debug!(workers = i, %error, "fewer worker threads than asked for");
                break;
            }
        }
        drop(unit_rx);
        let reader_done = done_tx.clone();
        let reader = std::thread::Builder::new()
            .name("profile-reader".to_owned())
            .spawn_scoped(scope, move || {
                let mut index = 0u64;
                loop {
                    if token_rx.recv().is_err() {
                        return;
                    }
                    match catch_unwind(AssertUnwindSafe(&mut next))
                        .unwrap_or_else(|payload| Err(panicked(payload)))
                    {
                        Ok(Some(unit)) => {
                            if unit_tx.send((index, unit)).is_err() {
                                return;
                            }
                            index += 1;
                        }
                        Ok(None) => return,
                        Err(e) => {
                            let _ = reader_done.send((index, Err(e)));
                            return;
                        }
                    }
                }
            });
        if let Err(error) = reader {
            return Err(spawn_error(error));
        }
        drop(done_tx);
        let mut pending: BTreeMap<u64, A> = BTreeMap::new();
        let mut expected = 0u64;
        for (index, result) in done_rx {
            pending.insert(index, result?);
            while let Some(value) = pending.remove(&expected) {
                expected += 1;
                consume(value)?;
                let _ = token_tx.send(());
            }
        }
        if pending.is_empty() {
            Ok(())
        } else {
            Err(ProfileError::Worker {
                source_name: source_name.to_owned(),
            })
        }
    })
}

/// The text of a panic's payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_and_errors_stop_the_run() {
        let mut n = 0u64;
        let mut seen = Vec::new();
        run_units(
            "t",
            FileFormat::Parquet,
            3,
            || {
                n += 1;
                Ok((n <= 50).then_some(n))
            },
            |_, u| Ok(u * 2),
            |v| {
                seen.push(v);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, (1..=50).map(|u| u * 2).collect::<Vec<_>>());

        let err = run_units(
            "t.bin",
            FileFormat::Parquet,
            2,
            {
                let mut n = 0u64;
                move || {
                    n += 1;
                    Ok(Some(n))
                }
            },
            |_, u| {
                if u == 7 {
                    Err(ProfileError::Worker {
                        source_name: "t.bin".into(),
                    })
                } else {
                    Ok(u)
                }
            },
            |_| Ok(()),
        )
        .unwrap_err();
        assert!(err.to_string().contains("t.bin"), "{err}");
    }

    #[test]
    fn a_panic_in_the_reader_or_a_worker_is_a_corrupt_file() {
        let quiet = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let worker = run_units(
            "w.parquet",
            FileFormat::Parquet,
            2,
            {
                let mut n = 0u64;
                move || {
                    n += 1;
                    Ok((n <= 20).then_some(n))
                }
            },
            |_, u| {
                assert!(u != 7, "offset + len out of bounds");
                Ok(u)
            },
            |_| Ok(()),
        )
        .unwrap_err();
        let reader = run_units(
            "r.arrow",
            FileFormat::Arrow,
            2,
            || -> Result<Option<u64>, ProfileError> { panic!("slice offset past the end") },
            |_, u| Ok(u),
            |_| Ok(()),
        )
        .unwrap_err();
        std::panic::set_hook(quiet);
        let worker = worker.to_string();
        assert!(
            worker.contains("w.parquet is not a readable parquet file"),
            "{worker}"
        );
        assert!(
            worker.contains("the decoder failed: offset + len out of bounds"),
            "{worker}"
        );
        let reader = reader.to_string();
        assert!(
            reader.contains("the decoder failed: slice offset past the end"),
            "{reader}"
        );
    }
}
