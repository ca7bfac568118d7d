//! The Debian packages a script asks for: replaced once by the model, dropped otherwise, and the
//! run ended when none of them is the model's to drop.

use super::*;

fn prepare(system: &[&str]) -> Action {
    Action::PrepareEnvironment {
        packages: vec!["pytest".into()],
        system_packages: system.iter().map(|p| (*p).to_owned()).collect(),
    }
}

fn unusable(packages: &[&str], replaceable: bool) -> Event {
    Event::SystemPackagesUnusable {
        packages: packages.iter().map(|p| (*p).to_owned()).collect(),
        why: "apt does not know it".into(),
        message: "E: Unable to locate package".into(),
        replaceable,
        error: "apt failed".into(),
    }
}

fn replaced(package: &str, by: Option<&str>) -> Event {
    Event::SystemPackageReplaced {
        package: package.into(),
        replacement: by.map(str::to_owned),
        why: "apt does not know it".into(),
        usage: USAGE,
    }
}

#[test]
fn an_unknown_system_package_is_replaced_by_the_model_once() {
    let mut s = session(Limits::default());
    write_code(&mut s, &[], &["libgdal", "curl"]);
    assert_eq!(s.next_action(), prepare(&["curl", "libgdal"]));
    s.apply(unusable(&["libgdal"], true));
    assert_eq!(
        s.next_action(),
        Action::ReplaceSystemPackage {
            package: "libgdal".into(),
            why: "apt does not know it".into(),
            message: "E: Unable to locate package".into(),
        }
    );
    s.apply(replaced("libgdal", Some("libgdal-dev")));
    assert_eq!(s.next_action(), prepare(&["curl", "libgdal-dev"]));
    assert_eq!(
        s.notes(),
        ["replaced the system package libgdal with libgdal-dev: apt does not know it"]
    );
    // The replacement cannot be had either: it is dropped, not replaced again.
    s.apply(unusable(&["libgdal-dev"], true));
    assert_eq!(s.next_action(), prepare(&["curl"]));
    assert_eq!(
        s.notes()[1],
        "dropped the system package(s) libgdal-dev the model asked for: apt does not know it"
    );
    s.apply(Event::EnvironmentReady {
        usage: Usage::default(),
    });
    assert!(matches!(s.next_action(), Action::WriteTests { .. }));
    assert_eq!(s.system_packages(), ["curl"]);
    assert_eq!(s.tokens(), 3 * USAGE.total(), "plan, code, replacement");
}

#[test]
fn a_replacement_asked_for_before_is_not_taken() {
    let mut s = session(Limits::default());
    write_code(&mut s, &[], &["a", "b"]);
    s.next_action();
    s.apply(unusable(&["a"], true));
    assert!(matches!(
        s.next_action(),
        Action::ReplaceSystemPackage { .. }
    ));
    // `b` was asked for by the script already: it is no replacement for `a`.
    s.apply(replaced("a", Some("b")));
    assert_eq!(s.next_action(), prepare(&["b"]));
    assert_eq!(
        s.notes(),
        ["dropped the system package(s) a the model asked for: apt does not know it"]
    );
}

#[test]
fn packages_a_host_backend_cannot_install_are_dropped_without_asking() {
    let mut s = session(Limits::default());
    write_code(&mut s, &[], &["x", "y", "z"]);
    s.next_action();
    s.apply(unusable(&["x", "y"], false));
    assert_eq!(s.next_action(), prepare(&["z"]));
    // One left, but the backend installs none: dropped too, no model call.
    s.apply(unusable(&["z"], false));
    assert_eq!(s.next_action(), prepare(&[]));
    assert_eq!(s.notes().len(), 2);
}

#[test]
fn a_system_package_that_is_not_the_models_ends_the_run() {
    let mut s = session(Limits::default());
    write_code(&mut s, &[], &[]);
    s.next_action();
    s.apply(unusable(&["user-asked"], true));
    let finish = expect_finish(&mut s);
    assert!(!finish.success);
    assert_eq!(
        finish.reason,
        "the environment could not be prepared: apt failed"
    );
}
