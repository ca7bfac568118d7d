//! Environments that cannot be built: the model's pins go back to bare names, a package the
//! installer names is dropped, and the run ends only when nothing the model added is to blame.

use super::*;

fn prepare(packages: &[&str]) -> Action {
    Action::PrepareEnvironment {
        packages: packages.iter().map(|p| (*p).to_owned()).collect(),
        system_packages: Vec::new(),
    }
}

fn install_failed(package: Option<&str>) -> Event {
    Event::InstallFailed {
        package: package.map(str::to_owned),
        error: "installing pandas==1.3.5 pytest into a new environment failed".into(),
    }
}

fn ended(s: &mut Session) -> Option<String> {
    match s.next_action() {
        Action::Finish(finish) => Some(finish.reason),
        _ => None,
    }
}

#[test]
fn a_pin_the_environment_cannot_build_goes_back_to_its_bare_name() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(failing_import());
    assert!(matches!(s.next_action(), Action::Diagnose { .. }));
    s.apply(diagnosed(FailureKind::Environment, &["pandas==1.3.5"]));
    assert_eq!(
        s.next_action(),
        prepare(&["pandas", "pandas==1.3.5", "pytest"])
    );
    s.apply(install_failed(Some("pandas")));
    assert_eq!(s.next_action(), prepare(&["pandas", "pytest"]));
    assert!(
        s.notes()
            .iter()
            .any(|n| n.contains("installed pandas instead of pandas==1.3.5")),
        "{:?}",
        s.notes()
    );
    s.apply(Event::EnvironmentReady {
        usage: Usage::default(),
    });
    // Asked for again, the pin is not tried again.
    s.add_packages(vec!["pandas==1.3.5".into()]);
    assert!(
        s.env_ready,
        "the environment is not rebuilt for a known failure"
    );
    assert_eq!(s.packages(), ["pandas", "pytest"]);
}

#[test]
fn without_a_name_from_the_installer_every_new_pin_is_suspect() {
    let mut s = session(Limits::default());
    write_code(&mut s, &["numpy==1.21.0"], &[]);
    s.add_packages(vec!["requests".into()]);
    assert_eq!(
        s.next_action(),
        prepare(&["numpy==1.21.0", "pytest", "requests"])
    );
    s.apply(install_failed(None));
    assert_eq!(s.next_action(), prepare(&["numpy", "pytest", "requests"]));
}

#[test]
fn a_named_package_is_dropped_a_named_pin_unpinned_and_a_third_failure_ends_the_run() {
    let mut s = session(Limits::default());
    write_code(&mut s, &["pyodbc"], &[]);
    s.add_packages(vec!["pandas".into(), "lxml==4.0".into()]);
    s.next_action();
    s.apply(install_failed(Some("PyODBC")));
    assert_eq!(s.next_action(), prepare(&["lxml==4.0", "pandas", "pytest"]));
    assert!(
        s.notes()
            .iter()
            .any(|n| n.contains("dropped the package pyodbc")),
        "{:?}",
        s.notes()
    );
    s.apply(install_failed(Some("lxml")));
    assert_eq!(s.next_action(), prepare(&["lxml", "pandas", "pytest"]));
    s.apply(install_failed(Some("lxml")));
    let reason = ended(&mut s).expect("the run ends after two rebuilds");
    assert!(reason.contains("could not be built"), "{reason}");
}

#[test]
fn a_failure_nothing_the_model_added_explains_ends_the_run() {
    // The script's own unpinned import and the user's base packages: dropping them would only
    // hide the failure (no network, a broken index), so the run ends with the installer's words.
    let mut s = session(Limits::default());
    write_code(&mut s, &["pandas"], &[]);
    s.next_action();
    s.apply(install_failed(None));
    let reason = ended(&mut s).expect("nothing to drop");
    assert!(reason.contains("pandas==1.3.5 pytest"), "{reason}");
}

#[test]
fn an_environment_verdict_on_a_wrong_value_goes_to_the_code_fixer_not_the_installer() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    // `assert 7 == 6`: nothing is missing, so the pin the diagnosis asks for cannot help.
    s.apply(failing_total());
    assert!(matches!(s.next_action(), Action::Diagnose { .. }));
    s.apply(diagnosed(FailureKind::Environment, &["pandas==1.4.3"]));
    let Action::FixCode { failures, .. } = s.next_action() else {
        panic!("expected a code fix")
    };
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].kind, FailureKind::Logic);
    assert_eq!(
        failures[0].reclassified_from,
        Some(FailureKind::Environment)
    );
    assert_eq!(s.packages(), ["pandas", "pytest"], "nothing was installed");
}
