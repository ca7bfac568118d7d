//! What an environment is: a package set plus an interpreter, hashed to a stable id.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::SandboxError;
use crate::python::{Interpreter, PythonSpec};

/// One package requirement: a distribution name (normalised as PEP 503 says) and an optional
/// version spec, e.g. `pandas>=2.2`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Requirement {
    /// Lower-case name, runs of `-`, `_`, `.` folded to one `-`, extras kept (`pkg[extra]`).
    pub name: String,
    /// The version spec without spaces (`>=2.2,<3`), or empty.
    pub spec: String,
}

impl Requirement {
    /// Parses `name`, `name[extra]` or `name<spec>`.
    pub fn parse(text: &str) -> Result<Self, SandboxError> {
        let bad = || SandboxError::BadRequirement {
            requirement: text.to_owned(),
        };
        let trimmed = text.trim();
        let split = trimmed
            .find(['<', '>', '=', '!', '~'])
            .unwrap_or(trimmed.len());
        let (raw_name, raw_spec) = trimmed.split_at(split);
        let raw_name = raw_name.trim_end();
        let spec: String = raw_spec.chars().filter(|c| !c.is_whitespace()).collect();
        let (base, extras) = match raw_name.find('[') {
            Some(i) if raw_name.ends_with(']') => (&raw_name[..i], &raw_name[i..]),
            Some(_) => return Err(bad()),
            None => (raw_name, ""),
        };
        let name_ok = base
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
            && base
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        let spec_ok = spec.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '<' | '>' | '=' | '!' | '~' | ',' | '.' | '*' | '+')
        });
        let extras_ok = extras
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '[' | ']' | ',' | '-' | '_' | '.'));
        if !name_ok || !spec_ok || !extras_ok {
            return Err(bad());
        }
        let mut name = String::with_capacity(base.len() + extras.len());
        for c in base.chars() {
            if matches!(c, '-' | '_' | '.') {
                if !name.ends_with('-') {
                    name.push('-');
                }
            } else {
                name.push(c.to_ascii_lowercase());
            }
        }
        name.push_str(&extras.to_ascii_lowercase());
        Ok(Self { name, spec })
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.name, self.spec)
    }
}

/// The packages every environment gets, so tests can run in it.
pub const BASE_PACKAGES: &[&str] = &["pytest"];

/// Checks that `name` is a Debian package name (`[a-z0-9][a-z0-9+.-]+`, no version, no
/// architecture); surrounding spaces are trimmed.
pub fn check_system_package(name: &str) -> Result<String, SandboxError> {
    let name = name.trim();
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.len() >= 2
        && chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '.' | '-'));
    if ok {
        Ok(name.to_owned())
    } else {
        Err(SandboxError::BadSystemPackage {
            package: name.to_owned(),
        })
    }
}

/// What to build: an interpreter plus a package set (the base packages are added by
/// [`EnvSpec::new`]), and the Debian packages the code needs beyond Python.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvSpec {
    /// The interpreter the environment is built on.
    pub python: PythonSpec,
    /// The packages, sorted and without duplicates.
    pub packages: Vec<Requirement>,
    /// Debian packages (`ffmpeg`, `libgomp1` ...), sorted and without duplicates. They are not
    /// part of the virtual environment (nor of its [`EnvId`]): the Docker backend installs them
    /// into an image layer below it, the host backends check that the host has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system_packages: Vec<String>,
}

impl EnvSpec {
    /// An environment on the default interpreter with `packages` plus [`BASE_PACKAGES`].
    pub fn new<S: AsRef<str>>(packages: &[S]) -> Result<Self, SandboxError> {
        let mut spec = Self::bare(packages)?;
        for base in BASE_PACKAGES {
            spec.add(Requirement::parse(base)?);
        }
        Ok(spec)
    }

    /// An environment with exactly `packages` (no base packages).
    pub fn bare<S: AsRef<str>>(packages: &[S]) -> Result<Self, SandboxError> {
        let mut spec = Self {
            python: PythonSpec::Default,
            packages: Vec::new(),
            system_packages: Vec::new(),
        };
        for p in packages {
            spec.add(Requirement::parse(p.as_ref())?);
        }
        Ok(spec)
    }

    /// Uses `python` instead of the default interpreter.
    #[must_use]
    pub fn with_python(mut self, python: PythonSpec) -> Self {
        self.python = python;
        self
    }

    /// Adds Debian packages (each checked by [`check_system_package`]), keeping the list sorted
    /// and without duplicates.
    pub fn with_system_packages<S: AsRef<str>>(
        mut self,
        packages: &[S],
    ) -> Result<Self, SandboxError> {
        for p in packages {
            self.system_packages.push(check_system_package(p.as_ref())?);
        }
        self.system_packages.sort();
        self.system_packages.dedup();
        Ok(self)
    }

    /// Adds a requirement, keeping the list sorted; a bare name never overrides a pinned one.
    pub fn add(&mut self, req: Requirement) {
        if let Some(existing) = self.packages.iter_mut().find(|r| r.name == req.name) {
            if existing.spec.is_empty() {
                *existing = req;
            }
        } else {
            self.packages.push(req);
            self.packages.sort();
        }
    }

    /// The stable id of this package set on `interpreter` (system packages are not part of it:
    /// environments that differ only in them share one virtual environment).
    pub fn id(&self, interpreter: &Interpreter) -> EnvId {
        let mut text = format!(
            "autocoder-env-v1\npython={}\nexecutable={}\n",
            interpreter.version,
            interpreter.executable.display()
        );
        for r in &self.packages {
            text.push_str(&r.to_string());
            text.push('\n');
        }
        EnvId(format!(
            "py{}-{:016x}",
            interpreter.minor_version(),
            fnv1a64(text.as_bytes())
        ))
    }
}

/// A stable id of an environment: `py<major.minor>-<hash>`. Also its directory name in the cache.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EnvId(pub String);

impl fmt::Display for EnvId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A built, ready environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Env {
    /// Its id.
    pub id: EnvId,
    /// Its directory (a virtual environment), read-only inside sandboxes.
    pub root: PathBuf,
    /// Its interpreter, `root/bin/python`.
    pub python: PathBuf,
    /// The base interpreter's installation, which must be visible inside sandboxes too.
    pub base_prefix: PathBuf,
    /// The interpreter's version.
    pub python_version: String,
    /// The Debian packages asked for ([`EnvSpec::system_packages`]): installed into the Docker
    /// image below the environment, checked on the host by the other backends. Not stored in the
    /// cache (one virtual environment serves every set of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system_packages: Vec<String>,
    /// Every installed distribution and its version, as in `root/requirements.lock`.
    pub resolved: Vec<(String, String)>,
    /// Whether this call built it (false: it came from the cache).
    #[serde(skip)]
    pub freshly_built: bool,
}

/// FNV-1a, 64 bits: stable across Rust versions and machines, unlike `DefaultHasher`.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interp() -> Interpreter {
        Interpreter {
            executable: PathBuf::from("/usr/bin/python3.11"),
            version: "3.11.7".into(),
            prefix: PathBuf::from("/usr"),
            base_prefix: PathBuf::from("/usr"),
        }
    }

    #[test]
    fn requirements_normalise() {
        let r = Requirement::parse(" Scikit_Learn >= 1.4 ").unwrap();
        assert_eq!(r.to_string(), "scikit-learn>=1.4");
        assert_eq!(Requirement::parse("a.b__c").unwrap().name, "a-b-c");
        assert_eq!(
            Requirement::parse("pkg[Extra]==1").unwrap().to_string(),
            "pkg[extra]==1"
        );
        for bad in ["", "-x", "x; rm -rf /", "x y", "pkg[x"] {
            assert!(
                Requirement::parse(bad).is_err(),
                "{bad:?} should be refused"
            );
        }
    }

    #[test]
    fn id_is_stable_and_order_free() {
        let a = EnvSpec::new(&["pandas", "numpy"]).unwrap();
        let b = EnvSpec::new(&["NumPy", "pandas", "pytest"]).unwrap();
        assert_eq!(a.id(&interp()), b.id(&interp()));
        assert!(a.id(&interp()).0.starts_with("py3.11-"));
        let c = EnvSpec::new(&["pandas==2.2.3", "numpy"]).unwrap();
        assert_ne!(a.id(&interp()), c.id(&interp()));
        // Pinned stays pinned when the bare name is added again.
        let mut d = c.clone();
        d.add(Requirement::parse("pandas").unwrap());
        assert_eq!(d, c);
    }

    #[test]
    fn system_packages_are_checked_sorted_and_outside_the_id() {
        let plain = EnvSpec::new(&["pandas"]).unwrap();
        let spec = plain
            .clone()
            .with_system_packages(&[
                "tesseract-ocr",
                " ffmpeg ",
                "libgomp1",
                "ffmpeg",
                "g++",
                "libc6.1-dev",
            ])
            .unwrap();
        assert_eq!(
            spec.system_packages,
            ["ffmpeg", "g++", "libc6.1-dev", "libgomp1", "tesseract-ocr"]
        );
        // Existing caches keep their ids: the venv does not depend on system packages.
        assert_eq!(spec.id(&interp()), plain.id(&interp()));
        assert_eq!(
            plain.id(&interp()),
            EnvSpec::new(&["pandas"])
                .unwrap()
                .with_system_packages::<&str>(&[])
                .unwrap()
                .id(&interp())
        );
        for bad in [
            "",
            "x",
            "FFmpeg",
            "-x",
            "+x",
            "jq=1.6",
            "jq:amd64",
            "jq tesseract",
            "jq;rm",
            "libé",
        ] {
            let err = EnvSpec::new::<&str>(&[])
                .unwrap()
                .with_system_packages(&[bad])
                .unwrap_err();
            assert!(
                matches!(&err, SandboxError::BadSystemPackage { package } if package == bad.trim()),
                "{bad:?}: {err}"
            );
        }
        // Old specs and environments (without the field) still read.
        let old: EnvSpec = serde_json::from_str(r#"{"python":"Default","packages":[]}"#).unwrap();
        assert!(old.system_packages.is_empty());
        assert!(
            !serde_json::to_string(&plain)
                .unwrap()
                .contains("system_packages")
        );
    }

    #[test]
    fn fnv_matches_the_reference_vector() {
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
