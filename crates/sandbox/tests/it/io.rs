//! Typed inputs in, typed outputs out.

use autocoder_sandbox::{Backend, IoType, RunSpec, Sandbox, SandboxError, Value};

use crate::shared_env;

const ECHO: &str = r#"
import argparse, os, shutil
p = argparse.ArgumentParser()
for name in ["s", "i", "f", "b", "dt", "td", "data", "folder"]:
    p.add_argument("--" + name, required=True)
a = p.parse_args()
out = os.environ["AUTOCODER_OUTPUTS_DIR"]
def put(name, text):
    with open(os.path.join(out, name), "w") as f:
        f.write(text)
put("s", a.s)
put("i", str(int(a.i) + 1))
put("f", str(float(a.f) * 2))
put("b", "Yes" if a.b == "true" else "no")
put("dt", a.dt)
put("td", "0:01:%02d.500000" % int(float(a.td)))
shutil.copy(a.data, os.path.join(out, "data.csv"))
shutil.copytree(a.folder, os.path.join(out, "folder"))
print("data at", a.data)
"#;

async fn echo(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("echo.py");
    std::fs::write(&script, ECHO).unwrap();
    let data = dir.path().join("sales.csv");
    std::fs::write(&data, "a,b\n1,2\n").unwrap();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("inner.txt"), "inside").unwrap();
    let spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run"))
        .unwrap()
        .input("s", Value::Str("hello world; rm -rf / $(x)".into()))
        .input("i", Value::Int(41))
        .input("f", Value::Float(1.25))
        .input("b", Value::Bool(true))
        .input("dt", Value::Datetime("2024-05-01T13:45:00".into()))
        .input("td", Value::Timedelta(30_000_000))
        .input("data", Value::File(data))
        .input("folder", Value::Dir(folder))
        .output("s", IoType::Str)
        .output("i", IoType::Int)
        .output("f", IoType::Float)
        .output("b", IoType::Bool)
        .output("dt", IoType::Datetime)
        .output("td", IoType::Timedelta)
        .output("data.csv", IoType::File)
        .output("folder", IoType::Dir);
    let out = Sandbox::new(backend).run(&spec).await.unwrap();
    assert!(out.success(), "{out:?}");
    if backend == Backend::Bwrap {
        assert!(
            out.stdout.contains("data at /var/inputs/data.csv"),
            "{}",
            out.stdout
        );
    }
    let o = out.outputs.unwrap();
    assert_eq!(o["s"], Value::Str("hello world; rm -rf / $(x)".into()));
    assert_eq!(o["i"], Value::Int(42));
    assert_eq!(o["f"], Value::Float(2.5));
    assert_eq!(o["b"], Value::Bool(true));
    assert_eq!(o["dt"], Value::Datetime("2024-05-01T13:45:00".into()));
    assert_eq!(o["td"], Value::Timedelta(90_500_000));
    let Value::File(f) = &o["data.csv"] else {
        panic!("{:?}", o["data.csv"])
    };
    assert_eq!(std::fs::read_to_string(f).unwrap(), "a,b\n1,2\n");
    let Value::Dir(d) = &o["folder"] else {
        panic!("{:?}", o["folder"])
    };
    assert_eq!(
        std::fs::read_to_string(d.join("inner.txt")).unwrap(),
        "inside"
    );
}

#[tokio::test]
async fn every_type_round_trips_in_bubblewrap() {
    echo(Backend::Bwrap).await;
}

#[tokio::test]
async fn every_type_round_trips_without_sandbox() {
    echo(Backend::None).await;
}

/// A script that must be told where its outputs go (`--outputs-dir`, required here so a run
/// that does not pass it fails) and writes its input there.
const TOLD_WHERE: &str = r#"
import argparse, os
p = argparse.ArgumentParser()
p.add_argument("--n", required=True)
p.add_argument("--outputs-dir", required=True)
a = p.parse_args()
with open(os.path.join(a.outputs_dir, "n"), "w") as f:
    f.write(a.n)
print("outputs in", a.outputs_dir)
"#;

async fn told_where(backend: Backend, outputs_arg: Option<&str>) -> autocoder_sandbox::RunOutcome {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("told.py");
    std::fs::write(&script, TOLD_WHERE).unwrap();
    let mut spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run"))
        .unwrap()
        .input("n", Value::Int(7))
        .output("n", IoType::Int);
    spec.outputs_arg = outputs_arg.map(str::to_owned);
    Sandbox::new(backend).run(&spec).await.unwrap()
}

#[tokio::test]
async fn the_outputs_directory_is_passed_as_the_script_asks() {
    for (backend, seen) in [
        (Backend::Bwrap, "outputs in /var/outputs\n"),
        // The host's own directory, with no sandbox.
        (Backend::None, "/run/outputs\n"),
    ] {
        let out = told_where(backend, Some("--outputs-dir")).await;
        assert!(out.success(), "{backend:?}: {out:?}");
        assert!(out.stdout.ends_with(seen), "{backend:?}: {}", out.stdout);
        assert_eq!(out.outputs.unwrap()["n"], Value::Int(7), "{backend:?}");
        // Without it the script is not told, as a script from before `--outputs-dir` expects.
        let out = told_where(backend, None).await;
        assert!(!out.success(), "{backend:?}: {out:?}");
        assert!(out.stderr.contains("--outputs-dir"), "{}", out.stderr);
    }
}

async fn outputs_of(code: &str, outputs: &[(&str, IoType)]) -> Result<(), SandboxError> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.py");
    std::fs::write(&script, code).unwrap();
    let mut spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run")).unwrap();
    for (n, t) in outputs {
        spec = spec.output(n, *t);
    }
    let out = Sandbox::default().run(&spec).await.unwrap();
    assert!(out.success(), "{out:?}");
    out.outputs.map(|_| ())
}

#[tokio::test]
async fn missing_invalid_and_escaping_outputs_are_errors() {
    let err = outputs_of("pass", &[("total", IoType::Float)])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, SandboxError::OutputMissing { name } if name == "total"),
        "{err}"
    );
    assert!(err.to_string().contains("/var/outputs/total"));

    let err = outputs_of(
        "open('/var/outputs/ok', 'w').write('maybe')",
        &[("ok", IoType::Bool)],
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, SandboxError::BadOutput { name, .. } if name == "ok"),
        "{err}"
    );

    let err = outputs_of(
        "import os; os.symlink('/etc/passwd', '/var/outputs/f')",
        &[("f", IoType::File)],
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, SandboxError::OutputEscapes { name, .. } if name == "f"),
        "{err}"
    );

    let err = outputs_of(
        "import os; os.mkdir('/var/outputs/d'); os.symlink('/root', '/var/outputs/d/home')",
        &[("d", IoType::Dir)],
    )
    .await
    .unwrap_err();
    assert!(matches!(&err, SandboxError::OutputEscapes { .. }), "{err}");
}

#[tokio::test]
async fn bad_input_names_are_refused_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.py");
    std::fs::write(&script, "pass").unwrap();
    let spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run"))
        .unwrap()
        .input("x; rm", Value::Int(1));
    let err = Sandbox::default().run(&spec).await.unwrap_err();
    assert!(matches!(err, SandboxError::BadName { .. }), "{err}");
}

#[tokio::test]
async fn private_input_files_are_readable_inside() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.py");
    std::fs::write(&script, "import sys\nprint(open(sys.argv[2]).read())\n").unwrap();
    let data = dir.path().join("private.csv");
    std::fs::write(&data, "secret,ok\n").unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o600)).unwrap();
    let spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run"))
        .unwrap()
        .input("data", Value::File(data));
    let out = Sandbox::default().run(&spec).await.unwrap();
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout, "secret,ok\n\n");
}

#[tokio::test]
async fn support_files_are_importable_but_their_directory_is_not_shared() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("main.py");
    std::fs::write(
        &script,
        "import os, helper\nprint(helper.VALUE, sorted(os.listdir('/var/task')))\n",
    )
    .unwrap();
    let helper = dir.path().join("helper.py");
    std::fs::write(&helper, "VALUE = 7\n").unwrap();
    std::fs::write(dir.path().join("private.txt"), "not shared").unwrap();
    let mut spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run")).unwrap();
    spec.support_files.push(helper);
    let out = Sandbox::default().run(&spec).await.unwrap();
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout, "7 ['helper.py', 'main.py']\n");
}
