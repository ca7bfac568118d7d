//! A runnable image of a script (`autocoder export --image TAG`): the environment's image
//! ([`crate::docker_image_for`], built as Docker runs build it) plus the script at
//! [`SCRIPT_IN_IMAGE`], which is the entry point, with `/var/outputs` a volume. So
//! `docker run -v "$PWD/out:/var/outputs" TAG --sales /data/x.csv` writes the outputs to `out`,
//! whether the script takes `--outputs-dir` (defaulting to `/var/outputs` where it exists) or
//! writes there hard-wired.

use std::collections::HashMap;
use std::path::Path;

use bollard::models::ContainerConfig;

use crate::docker::{self, RUN_NAME_LABEL};
use crate::docker_image::{self, Copy, DockerImage, FROM_LABEL};
use crate::env::Env;
use crate::error::SandboxError;
use crate::io::OUTPUTS_DIR;
use crate::sandbox::Sandbox;

/// Where the image holds the script.
pub const SCRIPT_IN_IMAGE: &str = "/opt/autocoder/app/solution.py";

/// What to build.
#[derive(Debug, Clone)]
pub struct ScriptImage<'a> {
    /// The image's tag (`sales:1`, `registry.example.com/team/sales:latest`).
    pub tag: &'a str,
    /// The script, copied in as [`SCRIPT_IN_IMAGE`].
    pub script: &'a Path,
    /// The environment it runs in.
    pub env: &'a Env,
    /// The run's name, put on the image as [`RUN_NAME_LABEL`].
    pub run_name: Option<&'a str>,
}

impl Sandbox {
    /// Builds `image` with the local Docker engine from the environment's image (built first
    /// when missing; nothing is pulled); replaces an image of the same tag. Returns the new one.
    pub async fn build_script_image(
        &self,
        image: &ScriptImage<'_>,
    ) -> Result<DockerImage, SandboxError> {
        let client = docker::connect().await?;
        let env_image = docker_image::ensure_env_image(&client, &self.docker, image.env).await?;
        let (slug, _lock) = docker_image::lock_tag(&self.docker, image.tag).await?;
        // The script alone, in a directory of its own, becomes the directory of SCRIPT_IN_IMAGE.
        let staged = tempfile::tempdir_in(&self.docker.rootfs_cache).map_err(SandboxError::io(
            "creating a directory in",
            &self.docker.rootfs_cache,
        ))?;
        let app = Path::new(SCRIPT_IN_IMAGE);
        let (Some(app_dir), Some(file)) = (app.parent(), app.file_name()) else {
            return Err(SandboxError::Task(format!(
                "{SCRIPT_IN_IMAGE} has no directory"
            )));
        };
        let copied = staged.path().join(file);
        std::fs::copy(image.script, &copied).map_err(SandboxError::io("copying", image.script))?;
        let copy = Copy {
            from: staged.path(),
            to: app_dir,
            links: Vec::new(),
            excludes: Vec::new(),
            config: None,
        };
        let tar = docker_image::pack(&self.docker, &slug, &copy).await?;
        let mut labels = HashMap::from([(FROM_LABEL.to_owned(), env_image.id.clone())]);
        if let Some(name) = image.run_name {
            labels.insert(RUN_NAME_LABEL.to_owned(), name.to_owned());
        }
        let python = docker_image::in_image_python().display().to_string();
        let config = ContainerConfig {
            entrypoint: Some(vec![python, SCRIPT_IN_IMAGE.to_owned()]),
            env: Some(
                [
                    (
                        "PATH".to_owned(),
                        format!(
                            "{}:/usr/local/bin:/usr/bin:/bin",
                            docker_image::in_image_bin().display()
                        ),
                    ),
                    docker_image::library_path_var(),
                    ("LANG".to_owned(), "C.UTF-8".to_owned()),
                    ("PYTHONUNBUFFERED".to_owned(), "1".to_owned()),
                ]
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
            ),
            // bollard's type for Docker's `{"path": {}}`.
            #[allow(clippy::zero_sized_map_values)]
            volumes: Some(HashMap::from([(OUTPUTS_DIR.to_owned(), HashMap::new())])),
            labels: Some(labels),
            ..Default::default()
        };
        let stale = docker_image::image_id(&client, image.tag).await;
        let id = docker_image::commit_copy(
            &client,
            &env_image.tag,
            image.tag,
            &slug,
            tar.path(),
            config,
        )
        .await?;
        if let Some(old) = stale.filter(|old| *old != id) {
            docker_image::remove_stale(&client, &old).await;
        }
        tracing::info!(image = image.tag, %id, "script image built");
        Ok(DockerImage {
            tag: image.tag.to_owned(),
            id,
            built: true,
        })
    }
}
