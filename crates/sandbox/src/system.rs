//! System (Debian) packages a script needs beyond Python ([`crate::EnvSpec::system_packages`]).
//! The Docker backend installs them into `autocoder/sys:<hash>`, the base image plus
//! `apt-get install`, built once in a container that alone has network (runs never do) and
//! reused; the environment's interpreter and virtual environment layers go on top of it. The host
//! backends (bubblewrap, none) run on the host's read-only system, so they can only check that
//! the host has the packages (`dpkg-query`).

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;
use std::time::Duration;

use bollard::Docker;
use bollard::models::{ContainerConfig, ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    InspectContainerOptions, KillContainerOptions, StartContainerOptions, WaitContainerOptions,
};
use futures_util::StreamExt;
use regex::Regex;

use crate::docker::{self, DockerConfig};
use crate::docker_image::{self, DockerImage, FROM_LABEL};
use crate::env::fnv1a64;
use crate::error::SandboxError;
use crate::exec;

/// The repository of system package layers.
pub const SYS_IMAGE_REPO: &str = "autocoder/sys";
/// The label listing a layer's packages (space separated, sorted).
const PACKAGES_LABEL: &str = "autocoder.system-packages";
/// How long `apt-get update && apt-get install` may take.
const BUILD_TIMEOUT: Duration = Duration::from_secs(1800);
/// Printed by the build script when `apt-get update` fetched no package list, so that an
/// unreachable mirror is not mistaken for unknown packages.
const NO_LISTS_MARKER: &str = "autocoder: apt-get update fetched no package lists";

/// The tag of the layer holding `packages` (sorted, deduplicated) on `cfg`'s base image, or
/// `None` when there are none.
pub(crate) fn sys_image_for(cfg: &DockerConfig, packages: &[String]) -> Option<String> {
    if packages.is_empty() {
        return None;
    }
    let mut text = format!("autocoder-sys-v1\nbase={}\n", cfg.base_image);
    for p in packages {
        text.push_str(p);
        text.push('\n');
    }
    Some(format!(
        "{SYS_IMAGE_REPO}:{:016x}",
        fnv1a64(text.as_bytes())
    ))
}

/// The shell script the build container runs. The names were checked by
/// [`crate::env::check_system_package`], so they need no quoting. Each must be a name apt knows
/// exactly (virtual packages included, so apt can say what provides them): `apt-get install`
/// takes an unknown name with `.` or `+` as a pattern (`x++` would match every package).
fn install_script(packages: &[String]) -> String {
    let names = packages.join(" ");
    format!(
        "set -e
export DEBIAN_FRONTEND=noninteractive
apt-get update
if ! ls /var/lib/apt/lists | grep -q '_Packages'; then echo '{NO_LISTS_MARKER} (no network, or the mirror in /etc/apt/sources.list is unreachable)' >&2; exit 100; fi
apt-cache pkgnames --all-names > /tmp/autocoder-names
for p in {names}; do grep -qxF -- \"$p\" /tmp/autocoder-names || {{ echo \"E: Unable to locate package $p\" >&2; exit 100; }}; done
rm -f /tmp/autocoder-names
apt-get install -y --no-install-recommends -- {names}
apt-get clean
rm -rf /var/lib/apt/lists/*
"
    )
}

/// What apt said about a missing package: the lines after it last read its lists
/// (`Package python is not available ... However the following packages replace it: ...`), not
/// the download log of `apt-get update`.
fn apt_explanation(output: &str) -> String {
    let lines: Vec<&str> = output.trim_end().lines().collect();
    let start = lines
        .iter()
        .rposition(|l| {
            [
                "Reading package lists",
                "Building dependency tree",
                "Reading state information",
            ]
            .iter()
            .any(|m| l.starts_with(m))
        })
        .map_or(0, |i| i + 1);
    let kept = &lines[start..];
    kept[kept.len().saturating_sub(15)..]
        .iter()
        .map(|l| l.trim_end())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The package apt's output says it does not know: "Unable to locate package X", "Package 'X'
/// has no installation candidate" (virtual or removed packages), or "Couldn't find any package
/// by glob/regex 'X'" (names with `.` or `+`, which apt also tries as patterns).
pub(crate) fn missing_package(apt_output: &str) -> Option<String> {
    static PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        [
            r"Unable to locate package (\S+)",
            r"Package '([^']+)' has no installation candidate",
            r"Couldn't find any package by (?:glob|regex) '([^']+)'",
        ]
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .collect()
    });
    if apt_output.contains(NO_LISTS_MARKER) {
        return None;
    }
    PATTERNS
        .iter()
        .find_map(|re| re.captures(apt_output))
        .and_then(|c| c.get(1))
        .map(|m| m.as_str().to_owned())
}

/// Makes sure the layer with `packages` exists on the base image and returns it (`None` when
/// there are no packages). Concurrent builders of the same layer wait on a file lock.
pub(crate) async fn ensure_sys_image(
    docker: &Docker,
    cfg: &DockerConfig,
    packages: &[String],
) -> Result<Option<DockerImage>, SandboxError> {
    let Some(tag) = sys_image_for(cfg, packages) else {
        return Ok(None);
    };
    let from_id = docker_image::image_id(docker, &cfg.base_image)
        .await
        .ok_or_else(|| docker::unavailable(format!("the image {} disappeared", cfg.base_image)))?;
    let want = HashMap::from([
        (FROM_LABEL.to_owned(), from_id),
        (PACKAGES_LABEL.to_owned(), packages.join(" ")),
    ]);
    if let Some(image) = docker_image::reusable(docker, &tag, &want).await {
        return Ok(Some(image));
    }
    let (slug, _lock) = docker_image::lock_tag(cfg, &tag).await?;
    if let Some(image) = docker_image::reusable(docker, &tag, &want).await {
        return Ok(Some(image));
    }
    let stale = docker_image::image_id(docker, &tag).await;
    tracing::info!(image = %tag, packages = %packages.join(" "), network = %cfg.build_network, "installing system packages into a Docker image");
    let name = format!("autocoder-build-{slug}");
    docker::remove(docker, &name).await;
    let body = ContainerCreateBody {
        image: Some(cfg.base_image.clone()),
        cmd: Some(vec![
            "/bin/sh".into(),
            "-c".into(),
            install_script(packages),
        ]),
        user: Some("0:0".into()),
        labels: Some(docker::reaped_labels()),
        // The only container autocoder gives network: apt must reach the mirror.
        host_config: Some(HostConfig {
            network_mode: Some(cfg.build_network.clone()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut guard = docker::create_removable(docker, &name, body, "apt").await?;
    let installed = run_install(docker, &name, packages).await;
    let result = match installed {
        Ok(()) => {
            let config = ContainerConfig {
                labels: Some(want),
                ..Default::default()
            };
            docker_image::commit(docker, &name, &tag, config).await
        }
        Err(e) => Err(e),
    };
    docker::remove(docker, &name).await;
    guard.disarm();
    let id = result?;
    tracing::info!(image = %tag, %id, "system packages installed");
    if let Some(old) = stale.filter(|old| *old != id) {
        docker_image::remove_stale(docker, &old).await;
    }
    Ok(Some(DockerImage {
        tag,
        id,
        built: true,
    }))
}

/// Starts the apt container `name` and waits for it; apt's failure becomes a typed error.
async fn run_install(docker: &Docker, name: &str, packages: &[String]) -> Result<(), SandboxError> {
    docker
        .start_container(name, None::<StartContainerOptions>)
        .await
        .map_err(|e| docker::unavailable(format!("starting the apt container failed: {e}")))?;
    let mut wait = docker.wait_container(name, None::<WaitContainerOptions>);
    let timed_out = tokio::time::timeout(BUILD_TIMEOUT, async {
        while wait.next().await.is_some() {}
    })
    .await
    .is_err();
    if timed_out {
        let _ = docker
            .kill_container(name, None::<KillContainerOptions>)
            .await;
    }
    let code = docker
        .inspect_container(name, None::<InspectContainerOptions>)
        .await
        .ok()
        .and_then(|c| c.state)
        .and_then(|s| s.exit_code);
    if code == Some(0) && !timed_out {
        return Ok(());
    }
    let (stdout, stderr) = docker::logs(docker, name, 1 << 20).await;
    let output = format!("{stdout}\n{stderr}");
    if let Some(package) = missing_package(&output) {
        return Err(SandboxError::SystemPackageNotFound {
            package,
            message: apt_explanation(&output),
        });
    }
    let mut message = tail_lines(&output, 30);
    if timed_out {
        message = format!(
            "apt did not finish within {} s\n{message}",
            BUILD_TIMEOUT.as_secs()
        );
    }
    Err(SandboxError::SystemInstallFailed {
        packages: packages.join(" "),
        message,
    })
}

fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Checks that the host has `packages` installed (one `dpkg-query`); the missing ones are a
/// [`SandboxError::SystemPackagesUnavailable`] for `backend`. A host without dpkg has none.
pub(crate) async fn check_host(
    packages: &[String],
    backend: &'static str,
) -> Result<(), SandboxError> {
    if packages.is_empty() {
        return Ok(());
    }
    let mut cmd = exec::command("dpkg-query");
    cmd.arg("-W")
        .arg("-f=${Package}\\t${Status}\\n")
        .arg("--")
        .args(packages);
    let installed: BTreeSet<String> = match exec::run(
        cmd,
        1 << 20,
        Some(Duration::from_secs(60)),
        false,
    )
    .await
    {
        // Exit code 1 only says that some name matched nothing.
        Ok(done) => installed_packages(&done.stdout),
        Err(e) => {
            tracing::warn!(error = %e, "dpkg-query could not run: no system package counts as installed");
            BTreeSet::new()
        }
    };
    let missing: Vec<String> = packages
        .iter()
        .filter(|p| !installed.contains(*p))
        .cloned()
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(SandboxError::SystemPackagesUnavailable {
            packages: missing,
            backend,
        })
    }
}

/// The names `dpkg-query -f '${Package}\t${Status}\n'` lists as installed (status
/// `install ok installed`, not `deinstall ok config-files`, `not-installed`, `half-installed`).
fn installed_packages(listing: &str) -> BTreeSet<String> {
    listing
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(_, status)| status.split_whitespace().last() == Some("installed"))
        .map(|(name, _)| name.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apt_messages_name_the_missing_package() {
        // apt-get 2.6's own words.
        let cases = [
            (
                "Reading package lists...\nBuilding dependency tree...\nE: Unable to locate package no-such-package-xyz\n",
                Some("no-such-package-xyz"),
            ),
            (
                "Package python is not available, but is referred to by another package.\nE: Package 'python' has no installation candidate\n",
                Some("python"),
            ),
            (
                "E: Unable to locate package libc6.1-dev\nE: Couldn't find any package by glob 'libc6.1-dev'\nE: Couldn't find any package by regex 'libc6.1-dev'\n",
                Some("libc6.1-dev"),
            ),
            ("E: Couldn't find any package by regex 'x++'\n", Some("x++")),
            (
                "E: Failed to fetch http://deb.debian.org/debian/pool/main/j/jq/jq_1.6.deb  Temporary failure resolving 'deb.debian.org'\n",
                None,
            ),
            (
                "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease\nautocoder: apt-get update fetched no package lists (no network)\n",
                None,
            ),
        ];
        for (output, want) in cases {
            assert_eq!(missing_package(output).as_deref(), want, "{output}");
        }
    }

    #[test]
    fn dpkg_listing_keeps_installed_packages_only() {
        let listing = "coreutils\tinstall ok installed\nold\tdeinstall ok config-files\nawk\tunknown ok not-installed\nbroken\tinstall reinstreq half-installed\nlibc6\tinstall ok installed\n";
        let got: Vec<String> = installed_packages(listing).into_iter().collect();
        assert_eq!(got, ["coreutils", "libc6"]);
    }

    #[test]
    fn layer_tags_depend_on_packages_and_base() {
        let cfg = DockerConfig::default();
        assert_eq!(sys_image_for(&cfg, &[]), None);
        let jq = sys_image_for(&cfg, &["jq".into()]).unwrap();
        assert!(jq.starts_with("autocoder/sys:"), "{jq}");
        assert_eq!(jq.len(), "autocoder/sys:".len() + 16);
        assert_ne!(
            Some(jq.clone()),
            sys_image_for(&cfg, &["jq".into(), "ffmpeg".into()])
        );
        let other = DockerConfig {
            base_image: "autocoder/base:trixie".into(),
            ..DockerConfig::default()
        };
        assert_ne!(Some(jq), sys_image_for(&other, &["jq".into()]));
        let script = install_script(&["ffmpeg".into(), "jq".into()]);
        assert!(
            script.contains("apt-get install -y --no-install-recommends -- ffmpeg jq\n"),
            "{script}"
        );
        assert!(script.contains("for p in ffmpeg jq; do"), "{script}");
    }

    #[test]
    fn apt_explanation_keeps_what_apt_said_about_the_package() {
        let output = "Hit:1 http://deb.debian.org/debian bookworm InRelease\nReading package lists...\nReading package lists...\nBuilding dependency tree...\nReading state information...\nPackage python is not available, but is referred to by another package.\nHowever the following packages replace it:\n  python-is-python3 2to3\n\nE: Package 'python' has no installation candidate\n";
        let own_check = "Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]\nFetched 6258 kB in 3s (2299 kB/s)\nReading package lists...\nE: Unable to locate package no-such-package-xyz\n";
        assert_eq!(
            apt_explanation(own_check),
            "E: Unable to locate package no-such-package-xyz"
        );
        assert_eq!(
            apt_explanation(output),
            "Package python is not available, but is referred to by another package.\nHowever the following packages replace it:\n  python-is-python3 2to3\nE: Package 'python' has no installation candidate"
        );
    }
}
