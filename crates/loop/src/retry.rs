//! Sandbox steps tried again after a failure of the machinery (`--sandbox-retries`): the backend
//! could not start, the engine went away. A script or test that fails is an outcome, never such
//! an error, so it is never retried.

use std::future::Future;
use std::time::Duration;

use autocoder_sandbox::{SandboxError, Secret, mask};

use crate::rundir::SandboxRetry;

/// Runs `attempt`, and again up to `retries` times while it fails for an infrastructure reason
/// ([`SandboxError::is_infrastructure`]), waiting a little longer each time (1 s, 2 s, ... at
/// most 5 s). Each retry is logged and appended to `record`, its error with `secrets` masked.
pub(crate) async fn retrying<T, F, Fut>(
    retries: u32,
    step: &str,
    secrets: &[Secret],
    record: &mut Vec<SandboxRetry>,
    mut attempt: F,
) -> Result<T, SandboxError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SandboxError>>,
{
    let mut failures: u32 = 0;
    loop {
        match attempt().await {
            Err(err) if err.is_infrastructure() && failures < retries => {
                failures += 1;
                let error = mask(&err.to_string(), secrets);
                tracing::warn!(step, retry = failures, of = retries, %error, "the sandbox failed; trying again");
                record.push(SandboxRetry {
                    step: step.to_owned(),
                    retry: failures,
                    error,
                });
                tokio::time::sleep(Duration::from_secs(u64::from(failures.min(5)))).await;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_infrastructure_failures_are_retried_and_each_is_recorded() {
        let mut record = Vec::new();
        let mut calls = 0;
        let result = retrying(2, "run tests", &[], &mut record, || {
            calls += 1;
            let failed = calls < 2;
            async move {
                if failed {
                    Err(SandboxError::BackendFailed {
                        backend: "bwrap",
                        message: "bwrap: no namespace".into(),
                    })
                } else {
                    Ok(7)
                }
            }
        })
        .await;
        assert_eq!(result.unwrap(), 7);
        assert_eq!(record.len(), 1);
        assert_eq!((record[0].step.as_str(), record[0].retry), ("run tests", 1));
        assert!(record[0].error.contains("no namespace"), "{:?}", record[0]);

        // A request error is not retried, and retries run out.
        let mut record = Vec::new();
        let mut calls = 0;
        let result: Result<(), _> = retrying(3, "run", &[], &mut record, || {
            calls += 1;
            async { Err(SandboxError::BadName { name: "x y".into() }) }
        })
        .await;
        assert!(result.is_err());
        assert_eq!((calls, record.len()), (1, 0));
        let mut calls = 0;
        let result: Result<(), _> = retrying(0, "run", &[], &mut record, || {
            calls += 1;
            async { Err(SandboxError::Task("gone".into())) }
        })
        .await;
        assert!(result.is_err());
        assert_eq!((calls, record.len()), (1, 0));
    }
}
