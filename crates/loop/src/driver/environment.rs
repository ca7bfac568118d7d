//! The environment step: build (or reuse) the environment, and report what could not be had.

use autocoder_sandbox::{EnvSpec, SandboxError, failed_package};

use super::Driver;
use crate::LoopError;
use crate::journal::Line;
use crate::options::CacheMode;
use crate::protocol::{Event, Usage};
use crate::retry::retrying;

impl Driver<'_> {
    /// The environment with `packages` and the Debian packages `system`; a Debian package that
    /// cannot be had is reported for the session to replace or drop.
    pub(super) async fn prepare(
        &mut self,
        packages: &[String],
        system: &[String],
    ) -> Result<Event, LoopError> {
        let err = match self.prepare_once(packages, system).await {
            Err(LoopError::Sandbox(err)) => err,
            other => return other,
        };
        let (unusable, why, message, replaceable) = match &err {
            SandboxError::BadSystemPackage { package } => (
                vec![package.clone()],
                "it is not a valid Debian package name".to_owned(),
                String::new(),
                true,
            ),
            SandboxError::SystemPackageNotFound { package, message } => (
                vec![package.clone()],
                "apt does not know it in the sandbox image".to_owned(),
                message.clone(),
                true,
            ),
            SandboxError::SystemPackagesUnavailable { packages, backend } => (
                packages.clone(),
                format!(
                    "this machine lacks it and the {backend} sandbox cannot install system packages (`--sandbox docker` can)"
                ),
                String::new(),
                false,
            ),
            _ => return Err(err.into()),
        };
        Ok(Event::SystemPackagesUnusable {
            packages: unusable,
            why,
            message,
            replaceable,
            error: err.to_string(),
        })
    }

    async fn prepare_once(
        &mut self,
        packages: &[String],
        system: &[String],
    ) -> Result<Event, LoopError> {
        let spec = EnvSpec::new(packages)?
            .with_system_packages(system)?
            .with_python(self.python_spec.clone());
        if self.options.sandbox.cache == CacheMode::Override {
            let id = spec.id(self.interpreter);
            let dir = self.cache.dir().join(&id.0);
            if dir.exists() {
                std::fs::remove_dir_all(&dir).map_err(|source| SandboxError::Io {
                    action: "removing the cached environment",
                    path: dir.clone(),
                    source,
                })?;
            }
        }
        match self.cache.ensure(&spec).await {
            Ok(env) => {
                // Docker: the image with the system packages; host backends: check them.
                let sandbox = self.sandbox;
                retrying(
                    self.options.sandbox.retries,
                    "environment",
                    &self.options.sandbox.secrets,
                    &mut self.sandbox_retries,
                    || sandbox.prepare(&env),
                )
                .await?;
                self.journal.record(&Line::Environment {
                    id: env.id.to_string(),
                    packages: packages.to_vec(),
                    system_packages: system.to_vec(),
                    resolved: env.resolved.clone(),
                })?;
                self.env = Some(env);
                Ok(Event::EnvironmentReady {
                    usage: Usage::default(),
                })
            }
            Err(SandboxError::PackageNotFound { package }) => Ok(Event::PackageMissing {
                error: format!("no distribution named `{package}` on the package index"),
                package,
            }),
            Err(err @ SandboxError::InstallFailed { .. }) => {
                let package = match &err {
                    SandboxError::InstallFailed { message, .. } => failed_package(message),
                    _ => None,
                };
                Ok(Event::InstallFailed {
                    package,
                    error: err.to_string(),
                })
            }
            Err(other) => Err(other.into()),
        }
    }
}
