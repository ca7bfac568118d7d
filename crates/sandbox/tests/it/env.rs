//! Building, caching and resolving environments.

use autocoder_sandbox::{EnvSpec, PythonSpec, SandboxError, imports_to_packages};

use crate::{cache_in, test_python};

fn spec(packages: &[&str]) -> EnvSpec {
    EnvSpec::new(packages)
        .unwrap()
        .with_python(PythonSpec::Path(test_python()))
}

#[tokio::test]
async fn second_build_is_a_cache_hit_with_recorded_versions() {
    let dir = tempfile::tempdir().unwrap();
    let cache = cache_in(dir.path());
    let first = cache.ensure(&spec(&["iniconfig"])).await.unwrap();
    assert!(first.freshly_built);
    assert!(
        first.resolved.iter().any(|(n, _)| n == "pytest"),
        "{:?}",
        first.resolved
    );
    assert!(first.resolved.iter().any(|(n, _)| n == "iniconfig"));
    let lock = std::fs::read_to_string(first.root.join("requirements.lock")).unwrap();
    assert!(lock.contains("pytest=="), "{lock}");
    assert!(first.python.is_file() || first.python.is_symlink());

    let second = cache.ensure(&spec(&["iniconfig", "pytest"])).await.unwrap();
    assert!(
        !second.freshly_built,
        "the same package set was built twice"
    );
    assert_eq!(second.id, first.id);
    assert_eq!(second.resolved, first.resolved);
    // Only the environment and its lock file are left in the cache: no staging debris.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            std::path::Path::new(n)
                .extension()
                .is_none_or(|e| e != "lock")
        })
        .collect();
    assert_eq!(names, vec![first.id.0.clone()]);
}

#[tokio::test]
async fn concurrent_builders_of_one_environment_build_once() {
    let dir = tempfile::tempdir().unwrap();
    let cache = cache_in(dir.path());
    let s = spec(&[]);
    let (a, b, c) = tokio::join!(cache.ensure(&s), cache.ensure(&s), cache.ensure(&s));
    let built = [a.unwrap(), b.unwrap(), c.unwrap()];
    assert_eq!(
        built.iter().filter(|e| e.freshly_built).count(),
        1,
        "{built:?}"
    );
    assert!(built.iter().all(|e| e.id == built[0].id));
}

#[tokio::test]
async fn unknown_package_is_a_typed_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let err = cache_in(dir.path())
        .ensure(&spec(&["autocoder-no-such-package-zq7"]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, SandboxError::PackageNotFound { package } if package == "autocoder-no-such-package-zq7"),
        "{err}"
    );
}

#[tokio::test]
async fn imports_map_to_distributions_with_the_interpreters_stdlib() {
    let code = "import os, sys\nimport numpy as np\nfrom sklearn.linear_model import X\nimport PIL.Image\nfrom . import sibling\nimport solution\nimport yaml, tomllib\nfrom dateutil import parser\n";
    let a = imports_to_packages(&test_python(), code, &["solution"])
        .await
        .unwrap();
    let dists: Vec<&str> = a.distributions.iter().map(String::as_str).collect();
    assert_eq!(
        dists,
        [
            "numpy",
            "pillow",
            "python-dateutil",
            "pyyaml",
            "scikit-learn"
        ]
    );
    let std: Vec<&str> = a.stdlib.iter().map(String::as_str).collect();
    assert_eq!(std, ["os", "sys", "tomllib"]);
    assert!(a.syntax_error.is_none());

    let bad = imports_to_packages(&test_python(), "def f(:\n", &[])
        .await
        .unwrap();
    assert!(bad.syntax_error.unwrap().starts_with("line 1"));
}

#[tokio::test]
async fn doctor_finds_bubblewrap_working_here() {
    let findings = autocoder_sandbox::doctor().await;
    let bwrap = findings.iter().find(|f| f.name == "bwrap").unwrap();
    assert!(bwrap.ok, "{bwrap:?}");
    let none = findings.iter().find(|f| f.name == "none").unwrap();
    assert!(none.ok && none.detail.contains("NO isolation"), "{none:?}");
    assert!(findings.iter().any(|f| f.name == "docker"));
}

#[tokio::test]
async fn venv_and_pip_fallback_builds_and_reports_missing_packages() {
    let dir = tempfile::tempdir().unwrap();
    let cache = cache_in(dir.path()).with_pip_only();
    let env = cache.ensure(&spec(&["iniconfig"])).await.unwrap();
    assert!(env.freshly_built);
    assert!(
        env.resolved.iter().any(|(n, _)| n == "iniconfig"),
        "{:?}",
        env.resolved
    );
    let err = cache
        .ensure(&spec(&["autocoder-no-such-package-zq7"]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, SandboxError::PackageNotFound { package } if package == "autocoder-no-such-package-zq7"),
        "{err}"
    );
}
