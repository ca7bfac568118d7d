//! `autocoder export RUN_DIR --image TAG`: the script and its environment as a container image,
//! built by the local Docker engine from the layers the Docker sandbox builds (nothing pulled,
//! nothing pushed), labelled with the run's name.

use autocoder_loop::SandboxOptions;
use autocoder_sandbox::{Backend, DockerImage, Sandbox, SandboxError, ScriptImage};

use crate::error::ExportError;
use crate::run::Run;

/// Builds the image `tag` of `run`: its environment (found in or added to the environment cache
/// `options` names, on the interpreter the run used unless `options.python` says otherwise)
/// with the script as the entry point.
pub async fn to_image(
    run: &Run,
    tag: &str,
    options: &SandboxOptions,
) -> Result<DockerImage, ExportError> {
    let throwaway = tempfile::tempdir().map_err(|source| SandboxError::Io {
        action: "creating a temporary environment cache in",
        path: std::env::temp_dir(),
        source,
    })?;
    let env = autocoder_loop::run::result_env(&run.result, options, throwaway.path()).await?;
    let name = run.name();
    let image = ScriptImage {
        tag,
        script: &run.script(),
        env: &env,
        run_name: Some(&name),
    };
    Ok(Sandbox::new(Backend::Docker)
        .build_script_image(&image)
        .await?)
}
