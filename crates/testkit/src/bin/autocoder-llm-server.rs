//! `autocoder-llm-server --script FILE [--addr 127.0.0.1:PORT]`: runs the scripted LLM server
//! for demos until Ctrl-C, printing its API base URL on stdout.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use autocoder_testkit::{Script, ScriptedServer};

const USAGE: &str = "usage: autocoder-llm-server --script FILE [--addr 127.0.0.1:PORT]";

fn main() -> ExitCode {
    let mut script = None;
    let mut addr = "127.0.0.1:0".to_owned();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--script", Some(path)) => script = Some(PathBuf::from(path)),
            ("--addr", Some(value)) => addr = value,
            _ => return fail(USAGE),
        }
    }
    let Some(script) = script else {
        return fail(USAGE);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(&format!("cannot start the async runtime: {error}")),
    };
    runtime.block_on(async {
        let script = match Script::from_path(&script) {
            Ok(script) => script,
            Err(error) => return fail(&error.to_string()),
        };
        let server = match ScriptedServer::start_on(&addr, script).await {
            Ok(server) => server,
            Err(error) => return fail(&error.to_string()),
        };
        // stdout is data: the base URL, so scripts can capture it.
        let _ = writeln!(std::io::stdout(), "{}", server.base_url());
        let _ = tokio::signal::ctrl_c().await;
        ExitCode::SUCCESS
    })
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "autocoder-llm-server: {message}");
    ExitCode::FAILURE
}
