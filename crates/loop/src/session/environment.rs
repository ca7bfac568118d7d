//! What the session does about packages: the environment's distributions, the ones the index
//! does not have, and the Debian packages the script asked for.

use autocoder_sandbox::Requirement;

use super::Session;
use crate::protocol::Action;

/// Missing packages a run replaces at most; each replacement costs a model call and a rebuild.
const MAX_MISSING_PACKAGES: usize = 3;

/// Environments that fail to build a run tries again without the model's new packages, at most.
const MAX_INSTALL_FAILURES: usize = 2;

/// A requirement's distribution name as the index compares names (`PyYAML>=6` -> `pyyaml`)
/// and whether it carries a version spec; text that is no requirement is its own name.
fn name_and_pin(requirement: &str) -> (String, bool) {
    match Requirement::parse(requirement) {
        Ok(r) => (r.name, !r.spec.is_empty()),
        Err(_) => (requirement.trim().to_owned(), false),
    }
}

impl Session {
    /// A package the index does not have is replaced by the model; one found missing before
    /// (the model named it again) or one too many ends the run instead of looping on model calls.
    pub(super) fn on_package_missing(&mut self, package: String, error: String) {
        if self.missing.contains(&package) || self.missing.len() >= MAX_MISSING_PACKAGES {
            let tried = self.missing.join(", ");
            self.abort(format!(
                "the package `{package}` could not be installed, after replacing missing packages ({tried}): {error}"
            ));
            return;
        }
        self.missing.push(package.clone());
        self.queue
            .push_back(Action::ReplacePackage { package, error });
    }

    /// The model's replacement is installed instead; without one (or with one found missing
    /// before) the script is written again without the package.
    pub(super) fn on_package_replaced(&mut self, package: &str, replacement: Option<String>) {
        self.packages.remove(package);
        self.env_ready = false;
        match replacement {
            Some(other) if other != package && !self.missing.contains(&other) => {
                self.note(format!("replaced missing package {package} with {other}"));
                self.packages.insert(other);
            }
            _ => {
                self.code = None;
                self.code_notes.push(format!(
                    "the package `{package}` does not exist and has no replacement: write the script without it"
                ));
            }
        }
    }

    pub(super) fn add_packages(&mut self, packages: Vec<String>) {
        for package in packages {
            if self.uninstallable.contains(package.trim()) {
                continue;
            }
            if self.packages.insert(package) {
                self.env_ready = false;
            }
        }
    }

    /// The environment could not be built. The suspects are the packages the model added since
    /// the last environment that was built (never the user's base packages): the one the
    /// installer names when it names one, else every pinned one. A pinned suspect goes back to
    /// its bare name (the 1.5B model pins versions with no wheel for this Python), another is
    /// dropped (the tests show whether the script needed it), and the environment is built
    /// again. With no suspect, or after [`MAX_INSTALL_FAILURES`], the run ends.
    pub(super) fn on_install_failed(&mut self, failed: Option<&str>, error: &str) {
        let added: Vec<&String> = self
            .packages
            .iter()
            .filter(|p| !self.installed.contains(*p) && !self.base_packages.contains(*p))
            .collect();
        let named: Vec<String> = failed
            .map(|f| {
                let failed = name_and_pin(f).0;
                added
                    .iter()
                    .filter(|p| name_and_pin(p).0 == failed)
                    .map(|p| (*p).clone())
                    .collect()
            })
            .unwrap_or_default();
        let suspects: Vec<String> = if named.is_empty() {
            added
                .into_iter()
                .filter(|p| name_and_pin(p).1)
                .cloned()
                .collect()
        } else {
            named
        };
        if suspects.is_empty() || self.install_failures >= MAX_INSTALL_FAILURES {
            self.abort(format!("the environment could not be built: {error}"));
            return;
        }
        self.install_failures += 1;
        self.env_ready = false;
        for package in suspects {
            self.packages.remove(&package);
            self.uninstallable.insert(package.trim().to_owned());
            let (name, pinned) = name_and_pin(&package);
            if pinned && !self.uninstallable.contains(&name) {
                if !self.packages.iter().any(|p| name_and_pin(p).0 == name) {
                    self.packages.insert(name.clone());
                }
                self.notes.push(format!(
                    "installed {name} instead of {package}, which could not be installed"
                ));
            } else {
                self.notes.push(format!(
                    "dropped the package {package}: it could not be installed"
                ));
            }
        }
    }

    /// The Debian packages a new script asked for join the environment's (built with them the
    /// next time it is built) and count as tried.
    pub(super) fn add_system_packages(&mut self, packages: &[String]) {
        self.system_packages.extend(packages.iter().cloned());
        self.system_tried
            .extend(packages.iter().map(|p| p.trim().to_owned()));
    }

    /// Debian packages the environment cannot get (a malformed name, one apt does not know, or
    /// one a host backend's system lacks) are dropped, and the environment is prepared without
    /// them: the tests show whether the script needs them. A single one apt could install in
    /// another spelling is first replaced by the model's answer, once; a replacement that cannot
    /// be had either is dropped. When none of them is the script's (the user's), the run ends.
    pub(super) fn on_system_packages_unusable(
        &mut self,
        packages: &[String],
        why: String,
        message: String,
        replaceable: bool,
        error: &str,
    ) {
        let dropped: Vec<String> = packages
            .iter()
            .map(|p| p.trim().to_owned())
            .filter(|p| self.system_packages.remove(p))
            .collect();
        if dropped.is_empty() {
            self.abort(format!("the environment could not be prepared: {error}"));
            return;
        }
        self.env_ready = false;
        if let [package] = dropped.as_slice()
            && replaceable
            && !self.system_replacements.contains(package)
        {
            self.queue.push_back(Action::ReplaceSystemPackage {
                package: package.clone(),
                why,
                message,
            });
            return;
        }
        self.drop_system_packages(&dropped, &why);
    }

    /// The model's replacement, unless it was asked for before; without one, the package is
    /// dropped.
    pub(super) fn on_system_package_replaced(
        &mut self,
        package: String,
        replacement: Option<String>,
        why: &str,
    ) {
        self.env_ready = false;
        match replacement.filter(|r| self.system_tried.insert(r.clone())) {
            Some(replacement) => {
                self.notes.push(format!(
                    "replaced the system package {package} with {replacement}: {why}"
                ));
                self.system_replacements.insert(replacement.clone());
                self.system_packages.insert(replacement);
            }
            None => self.drop_system_packages(&[package], why),
        }
    }

    fn drop_system_packages(&mut self, dropped: &[String], why: &str) {
        self.notes.push(format!(
            "dropped the system package(s) {} the model asked for: {why}",
            dropped.join(", ")
        ));
    }
}
