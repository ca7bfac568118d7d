//! System (Debian) packages: installed into a Docker image layer, checked on the host by the
//! host backends. The Docker tests print a visible skip message where no engine answers.

use std::path::Path;

use autocoder_sandbox::{
    Backend, Env, EnvSpec, PythonSpec, RunSpec, Sandbox, SandboxError, docker_image_for,
};

use crate::{cache_in, shared_env, test_python};

/// The shared environment's package set with `system` packages, from the shared cache.
async fn env_with(system: &[&str]) -> Env {
    let spec = EnvSpec::new::<&str>(&[])
        .unwrap()
        .with_python(PythonSpec::Path(test_python()))
        .with_system_packages(system)
        .unwrap();
    cache_in(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("envs"))
        .ensure(&spec)
        .await
        .unwrap()
}

async fn run(
    sandbox: &Sandbox,
    env: Env,
    code: &str,
) -> Result<autocoder_sandbox::RunOutcome, SandboxError> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.py");
    std::fs::write(&script, code).unwrap();
    let spec = RunSpec::new(env, &script, &dir.path().join("run")).unwrap();
    sandbox.run(&spec).await
}

#[allow(
    clippy::print_stderr,
    reason = "the skip must be visible in the test output"
)]
async fn docker() -> Option<Sandbox> {
    let sandbox = Sandbox::new(Backend::Docker);
    match sandbox.check_ready().await {
        Ok(()) => Some(sandbox),
        Err(e) => {
            eprintln!("SKIPPED: Docker tests need a running engine: {e}");
            None
        }
    }
}

const JQ: &str = r#"
import socket, subprocess
print(subprocess.run(["jq", "--version"], capture_output=True, text=True, check=True).stdout.strip())
print("sum", subprocess.run(["jq", ".a + .b"], input='{"a": 40, "b": 2}', capture_output=True, text=True, check=True).stdout.strip())
try:
    socket.create_connection(("1.1.1.1", 80), timeout=3)
    print("CONNECTED")
except OSError:
    print("no network")
"#;

#[tokio::test]
async fn docker_installs_system_packages_into_a_layer_below_the_environment() {
    let Some(sandbox) = docker().await else {
        return;
    };
    let env = env_with(&["jq"]).await;
    let plain = shared_env().await;
    // One virtual environment serves both; only the image differs.
    assert_eq!(env.id, plain.id);
    assert_eq!(env.root, plain.root);
    assert_eq!(env.system_packages, ["jq"]);
    let tag = docker_image_for(&env);
    assert_ne!(tag, docker_image_for(&plain));

    let image = sandbox.prepare(&env).await.unwrap().unwrap();
    assert_eq!(image.tag, tag);
    let again = sandbox.prepare(&env).await.unwrap().unwrap();
    assert!(!again.built, "the second call rebuilt {tag}");
    assert_eq!(again.id, image.id);

    let out = run(&sandbox, env, JQ).await.unwrap();
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.starts_with("jq-"), "{}", out.stdout);
    assert!(out.stdout.contains("sum 42"), "{}", out.stdout);
    // Only the apt build had network: the run has none.
    assert!(out.stdout.contains("no network"), "{}", out.stdout);
    assert_eq!(out.docker_image.as_deref(), Some(tag.as_str()));

    // The layer is labelled with its packages.
    let client = bollard::Docker::connect_with_local_defaults().unwrap();
    let images = client
        .list_images(Some(bollard::query_parameters::ListImagesOptions {
            filters: Some(std::collections::HashMap::from([(
                "label".to_owned(),
                vec!["autocoder.system-packages=jq".to_owned()],
            )])),
            ..Default::default()
        }))
        .await
        .unwrap();
    assert!(
        images
            .iter()
            .flat_map(|i| &i.repo_tags)
            .any(|t| t.starts_with("autocoder/sys:")),
        "{images:?}"
    );
}

#[tokio::test]
async fn docker_reports_an_unknown_system_package() {
    let Some(sandbox) = docker().await else {
        return;
    };
    let env = env_with(&["no-such-package-xyz"]).await;
    let err = sandbox.prepare(&env).await.unwrap_err();
    assert!(
        matches!(&err, SandboxError::SystemPackageNotFound { package, .. } if package == "no-such-package-xyz"),
        "{err}"
    );
    // A run asks for the same image and fails the same way. A name apt would take as a pattern
    // (`x++` matches every package) is refused as unknown, not expanded.
    let err = run(&sandbox, env_with(&["x++"]).await, "pass")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, SandboxError::SystemPackageNotFound { package, .. } if package == "x++"),
        "{err}"
    );
    // A virtual package: apt's explanation (what provides it) is kept.
    let err = sandbox
        .prepare(&env_with(&["awk"]).await)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, SandboxError::SystemPackageNotFound { package, message } if package == "awk" && message.contains("mawk")),
        "{err}"
    );
}

#[tokio::test]
async fn host_backends_accept_installed_packages_and_name_missing_ones() {
    let installed = env_with(&["coreutils"]).await;
    for backend in [Backend::Bwrap, Backend::None] {
        let sandbox = Sandbox::new(backend);
        assert_eq!(sandbox.prepare(&installed).await.unwrap(), None);
        let out = run(
            &sandbox,
            installed.clone(),
            "import subprocess\nsubprocess.run(['true'], check=True)\nprint('ok')\n",
        )
        .await
        .unwrap();
        assert!(out.success() && out.stdout.contains("ok"), "{out:?}");
    }

    let missing = env_with(&["coreutils", "no-such-package-xyz"]).await;
    for backend in [Backend::Bwrap, Backend::None] {
        let sandbox = Sandbox::new(backend);
        let err = sandbox.prepare(&missing).await.unwrap_err();
        match &err {
            SandboxError::SystemPackagesUnavailable {
                packages,
                backend: b,
            } => {
                assert_eq!(packages, &["no-such-package-xyz"]);
                assert_eq!(*b, backend.name());
            }
            other => panic!("{other}"),
        }
        let text = err.to_string();
        assert!(
            text.contains("--sandbox docker")
                && text.contains("apt-get install no-such-package-xyz"),
            "{text}"
        );
        // A run checks too, before starting anything.
        let err = run(&sandbox, missing.clone(), "pass").await.unwrap_err();
        assert!(
            matches!(&err, SandboxError::SystemPackagesUnavailable { .. }),
            "{err}"
        );
    }
}
