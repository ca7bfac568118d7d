//! What the session does about packages: the environment's distributions, the ones the index
//! does not have, and the Debian packages the script asked for.

use super::Session;
use crate::protocol::Action;

/// Missing packages a run replaces at most; each replacement costs a model call and a rebuild.
const MAX_MISSING_PACKAGES: usize = 3;

/// Environments that fail to build a run tries again without the model's new packages, at most.
const MAX_INSTALL_FAILURES: usize = 2;

/// The distribution a requirement names (`pandas==1.3.5` -> `pandas`, `PyYAML[x]>=6` ->
/// `PyYAML`).
fn requirement_name(requirement: &str) -> &str {
    let requirement = requirement.trim();
    let end = requirement
        .find(['=', '<', '>', '!', '~', '[', ';', ' ', '@'])
        .unwrap_or(requirement.len());
    &requirement[..end]
}

/// A distribution name as the index compares them (PEP 503: case and `-_.` runs do not count).
fn normalized(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
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
                added
                    .iter()
                    .filter(|p| normalized(requirement_name(p)) == normalized(f))
                    .map(|p| (*p).clone())
                    .collect()
            })
            .unwrap_or_default();
        let suspects = if named.is_empty() {
            added
                .into_iter()
                .filter(|p| requirement_name(p) != p.trim())
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
            let name = requirement_name(&package);
            let pinned = name != package.trim();
            let named = self.packages.iter().any(|p| requirement_name(p) == name);
            if pinned && !name.is_empty() && !self.uninstallable.contains(name) {
                if !named {
                    self.packages.insert(name.to_owned());
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
