//! The command-line contract of the script to generate: declared inputs and outputs with their
//! types, and sample files that become file inputs with their data as defaults. Everything here
//! is checked before any model is called, so a typo costs nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use autocoder_schema::FileFormat;
use serde::{Deserialize, Serialize};

use crate::LoopError;

/// Where the sandbox mounts input files and where the script writes its outputs.
pub const INPUTS_DIR: &str = "/var/inputs";
/// Where the script writes each declared output, one file (or directory) per name.
pub const OUTPUTS_DIR: &str = "/var/outputs";

/// Input names the harness or argparse uses itself (`--help`, and `args.outputs_dir` of
/// `--outputs-dir`).
const RESERVED_INPUTS: &[&str] = &["help", "outputs_dir"];
/// Output names the run report uses for its own fields.
const RESERVED_OUTPUTS: &[&str] = &["exit_code", "stdout", "stderr"];

/// Python keywords: `--class` would parse, but `args.class` is a syntax error.
const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// The type of a declared input or output: the sandbox's, so what the contract declares is what
/// the sandbox passes and parses.
pub use autocoder_sandbox::IoType;

/// Every type, in the order the help text lists them.
const ALL_TYPES: [IoType; 8] = [
    IoType::Str,
    IoType::Int,
    IoType::Float,
    IoType::Bool,
    IoType::Datetime,
    IoType::Timedelta,
    IoType::File,
    IoType::Dir,
];

/// Parses a type name as users write it (`float`, `bool`, `file`; also `string`, `integer`,
/// `boolean`, `duration`, `directory`).
pub fn parse_type(text: &str) -> Result<IoType, LoopError> {
    let ty = match text.trim().to_ascii_lowercase().as_str() {
        "str" | "string" | "text" => IoType::Str,
        "int" | "integer" => IoType::Int,
        "float" | "number" => IoType::Float,
        "bool" | "boolean" => IoType::Bool,
        "datetime" => IoType::Datetime,
        "timedelta" | "duration" => IoType::Timedelta,
        "file" => IoType::File,
        "dir" | "directory" => IoType::Dir,
        _ => {
            let known: Vec<&str> = ALL_TYPES.iter().map(|t| t.name()).collect();
            return Err(LoopError::InvalidRequest(format!(
                "unknown type `{text}`; use one of {}",
                known.join(", ")
            )));
        }
    };
    Ok(ty)
}

fn is_path(ty: IoType) -> bool {
    matches!(ty, IoType::File | IoType::Dir)
}

/// One `NAME:TYPE` declaration as the user wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declaration {
    /// The argument or output name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub ty: IoType,
}

impl FromStr for Declaration {
    type Err = LoopError;

    /// Parses `NAME:TYPE`, e.g. `threshold:float` or `summary.csv:file`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let Some((name, ty)) = text.rsplit_once(':') else {
            return Err(LoopError::InvalidRequest(format!(
                "`{text}` is not NAME:TYPE (for example `threshold:float`)"
            )));
        };
        Ok(Declaration {
            name: name.trim().to_owned(),
            ty: parse_type(ty).map_err(|err| {
                LoopError::InvalidRequest(format!("in `{text}`: {}", strip_prefix(&err)))
            })?,
        })
    }
}

/// A sample file given as `NAME=PATH`: it becomes a file input whose default is this file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// The input name.
    pub name: String,
    /// The file on the host.
    pub path: PathBuf,
}

impl FromStr for Sample {
    type Err = LoopError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let Some((name, path)) = text.split_once('=') else {
            return Err(LoopError::InvalidRequest(format!(
                "`{text}` is not NAME=PATH (for example `sales=data/sales.csv`)"
            )));
        };
        Ok(Sample {
            name: name.trim().to_owned(),
            path: PathBuf::from(path.trim()),
        })
    }
}

/// A validated input of the script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    /// The name; the script takes it as `--name`.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub ty: IoType,
    /// The sample file used when no value is given (file inputs made from samples).
    pub sample: Option<PathBuf>,
    /// Where the file is mounted in the sandbox (`/var/inputs/<name>.<ext>`), for file inputs.
    pub mount: Option<String>,
    /// The value a non-file input takes on the samples (`--sample-arg NAME=VALUE`), as the
    /// user wrote it: what the script runs with on the samples, and the tests' default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_value: Option<String>,
}

impl Input {
    /// What the input takes on the samples: its sample file, or the value `--sample-arg` gave
    /// it; `None` when it has neither (a script needing it cannot run on the samples alone).
    pub fn on_samples(&self) -> Option<autocoder_sandbox::Value> {
        match (self.ty, &self.sample, &self.sample_value) {
            (IoType::File, Some(path), _) => Some(autocoder_sandbox::Value::File(path.clone())),
            (IoType::File | IoType::Dir, _, _) | (_, _, None) => None,
            (ty, _, Some(text)) => autocoder_sandbox::parse_output(&self.name, ty, text).ok(),
        }
    }
}

/// A validated output of the script, written to `/var/outputs/<name>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Output {
    /// The name; for files it may carry an extension (`summary.csv`).
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub ty: IoType,
    /// `/var/outputs/<name>`.
    pub path: String,
}

/// The validated command-line contract: what the script takes and what it writes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contract {
    /// Inputs, declared ones first, then samples not declared.
    pub inputs: Vec<Input>,
    /// Outputs, in declaration order.
    pub outputs: Vec<Output>,
}

impl Contract {
    /// Validates declarations and samples into a contract. Sample files must exist and be
    /// readable files; a sample whose name is declared must be declared as `file`.
    pub fn new(
        inputs: &[Declaration],
        outputs: &[Declaration],
        samples: &[Sample],
    ) -> Result<Self, LoopError> {
        let mut contract = Contract::default();
        let mut seen = BTreeSet::new();
        for declaration in inputs {
            check_input_name(&declaration.name)?;
            if !seen.insert(declaration.name.clone()) {
                return Err(invalid(format!(
                    "input `{}` is declared twice",
                    declaration.name
                )));
            }
            contract.inputs.push(Input {
                name: declaration.name.clone(),
                ty: declaration.ty,
                sample: None,
                mount: None,
                sample_value: None,
            });
        }
        let mut sample_names = BTreeSet::new();
        for sample in samples {
            check_input_name(&sample.name)?;
            if !sample_names.insert(sample.name.clone()) {
                return Err(invalid(format!("sample `{}` is given twice", sample.name)));
            }
            check_sample_file(sample)?;
            let mount = format!("{INPUTS_DIR}/{}{}", sample.name, extension_of(&sample.path));
            match contract.inputs.iter_mut().find(|i| i.name == sample.name) {
                Some(input) if input.ty != IoType::File => {
                    return Err(invalid(format!(
                        "sample `{}` is a file, but input `{}` is declared as {}",
                        sample.name,
                        sample.name,
                        input.ty.name()
                    )));
                }
                Some(input) => {
                    input.sample = Some(sample.path.clone());
                    input.mount = Some(mount);
                }
                None => contract.inputs.push(Input {
                    name: sample.name.clone(),
                    ty: IoType::File,
                    sample: Some(sample.path.clone()),
                    mount: Some(mount),
                    sample_value: None,
                }),
            }
        }
        let mut seen = BTreeSet::new();
        for declaration in outputs {
            check_output_name(&declaration.name, declaration.ty)?;
            if !seen.insert(declaration.name.clone()) {
                return Err(invalid(format!(
                    "output `{}` is declared twice",
                    declaration.name
                )));
            }
            contract.outputs.push(Output {
                name: declaration.name.clone(),
                ty: declaration.ty,
                path: format!("{OUTPUTS_DIR}/{}", declaration.name),
            });
        }
        Ok(contract)
    }

    /// Gives declared non-file inputs the values they take on the samples (`name -> value`),
    /// each checked against its input's type.
    pub fn with_sample_args(mut self, args: &BTreeMap<String, String>) -> Result<Self, LoopError> {
        let known: Vec<String> = self.inputs.iter().map(|i| i.name.clone()).collect();
        for (name, value) in args {
            let Some(input) = self.inputs.iter_mut().find(|i| &i.name == name) else {
                let known = if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                };
                return Err(invalid(format!(
                    "sample argument `{name}`: the script has no input `{name}` (its inputs: {known}); declare it with --input {name}:TYPE"
                )));
            };
            if is_path(input.ty) {
                return Err(invalid(format!(
                    "sample argument `{name}`: input `{name}` is a {}; give its sample as --sample {name}=PATH",
                    input.ty.name()
                )));
            }
            let parsed = autocoder_sandbox::parse_output(name, input.ty, value).map_err(|err| {
                invalid(format!(
                    "sample argument `{name}`: {value:?} is not a valid {} ({err})",
                    input.ty.name()
                ))
            })?;
            // As the sandbox passes it (`True` becomes `true`), so the tests' runs pass the same.
            input.sample_value = Some(parsed.argv_text().unwrap_or_else(|| value.clone()));
        }
        Ok(self)
    }
}

fn invalid(message: String) -> LoopError {
    LoopError::InvalidRequest(message)
}

#[allow(
    clippy::match_wildcard_for_single_variants,
    reason = "only the request variant has a prefix to strip"
)]
fn strip_prefix(err: &LoopError) -> String {
    match err {
        LoopError::InvalidRequest(message) => message.clone(),
        other => other.to_string(),
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_input_name(name: &str) -> Result<(), LoopError> {
    if !is_identifier(name) {
        return Err(invalid(format!(
            "input name `{name}` must be a Python identifier (letters, digits, `_`; not starting with a digit)"
        )));
    }
    if PYTHON_KEYWORDS.contains(&name) {
        return Err(invalid(format!(
            "input name `{name}` is a Python keyword; `args.{name}` would not parse"
        )));
    }
    if RESERVED_INPUTS.contains(&name) || name.starts_with("__") {
        return Err(invalid(format!("input name `{name}` is reserved")));
    }
    Ok(())
}

fn check_output_name(name: &str, ty: IoType) -> Result<(), LoopError> {
    if is_path(ty) {
        let valid = !name.is_empty()
            && !name.starts_with('.')
            && !name.contains("..")
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !valid {
            return Err(invalid(format!(
                "output name `{name}` must be a plain file name (letters, digits, `_`, `-`, `.`; an extension like `summary.csv` is fine)"
            )));
        }
    } else if !is_identifier(name) {
        return Err(invalid(format!(
            "output name `{name}` must be an identifier (letters, digits, `_`): only file and dir outputs may carry an extension"
        )));
    }
    if RESERVED_OUTPUTS.contains(&name) {
        return Err(invalid(format!(
            "output name `{name}` is reserved for the run report; choose another"
        )));
    }
    Ok(())
}

/// The sample must be a regular file this process can read, and hold text or be a binary table
/// the profiler reads (Parquet, Arrow, Excel, by their first bytes): a NUL byte (outside a UTF-16
/// or UTF-32 file, which starts with its byte-order mark) means a binary file that no prompt can
/// show. Gzip-compressed samples are checked as they decompress.
fn check_sample_file(sample: &Sample) -> Result<(), LoopError> {
    let path = &sample.path;
    let fail = |what: String| {
        invalid(format!(
            "sample `{}`: {} {what}",
            sample.name,
            path.display()
        ))
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(fail("is not a file".to_owned())),
        Err(err) => return Err(fail(format!("cannot be read: {err}"))),
    }
    let file = std::fs::File::open(path).map_err(|err| fail(format!("cannot be read: {err}")))?;
    let mut file = std::io::BufReader::new(file);
    let head = std::io::BufRead::fill_buf(&mut file)
        .map_err(|err| fail(format!("cannot be read: {err}")))?;
    // Parquet, Arrow and Excel files are binary by design, and the profiler reads them.
    if matches!(
        autocoder_profile::format_from_content(head),
        Some(FileFormat::Parquet | FileFormat::Arrow | FileFormat::Xlsx)
    ) {
        return Ok(());
    }
    let gzip = head.starts_with(&[0x1F, 0x8B]);
    let reader: Box<dyn std::io::Read> = if gzip {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    match first_nul(reader) {
        Ok(None) => Ok(()),
        Ok(Some(offset)) => Err(fail(format!(
            "contains a NUL byte (at byte {offset}{}): it is not a text file; give the data as CSV, JSON or other text",
            if gzip { " after decompressing" } else { "" }
        ))),
        Err(err) => Err(fail(format!("cannot be read: {err}"))),
    }
}

/// The offset of the first NUL byte, if any, skipping files that start with a UTF-16 or UTF-32
/// byte-order mark (their text is full of NUL bytes).
fn first_nul(mut reader: impl std::io::Read) -> std::io::Result<Option<u64>> {
    let mut buffer = vec![0_u8; 1 << 16];
    let mut offset: u64 = 0;
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let chunk = &buffer[..n];
        if offset == 0 && (chunk.starts_with(&[0xFF, 0xFE]) || chunk.starts_with(&[0xFE, 0xFF])) {
            return Ok(None);
        }
        if offset == 0 && chunk.starts_with(&[0x00, 0x00, 0xFE, 0xFF]) {
            return Ok(None);
        }
        if let Some(at) = memchr::memchr(0, chunk) {
            return Ok(Some(offset + at as u64));
        }
        offset += n as u64;
    }
}

/// The file's last extension with its dot (`.csv`; `.gz` for `x.csv.gz`), empty if none: the
/// sandbox mounts a file input at `/var/inputs/<name><extension>`.
fn extension_of(path: &Path) -> String {
    match path.extension().and_then(|e| e.to_str()) {
        Some(ext) if !ext.is_empty() => format!(".{ext}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(text: &str) -> Declaration {
        text.parse().unwrap()
    }

    fn error_of(result: Result<Contract, LoopError>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn declarations_parse_names_and_types() {
        assert_eq!(decl("threshold:float").ty, IoType::Float);
        assert_eq!(decl("summary.csv:file").name, "summary.csv");
        assert_eq!(decl("when:DateTime").ty, IoType::Datetime);
        let err = "threshold".parse::<Declaration>().unwrap_err().to_string();
        assert!(err.contains("NAME:TYPE"), "{err}");
        let err = "x:decimal".parse::<Declaration>().unwrap_err().to_string();
        assert!(
            err.contains("unknown type `decimal`") && err.contains("timedelta"),
            "{err}"
        );
    }

    #[test]
    fn samples_become_file_inputs_mounted_with_their_extension() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sales.csv.gz");
        std::fs::write(&path, b"x").unwrap();
        let samples = vec![Sample {
            name: "sales".into(),
            path: path.clone(),
        }];
        let contract =
            Contract::new(&[decl("threshold:float")], &[decl("total:float")], &samples).unwrap();
        assert_eq!(contract.inputs.len(), 2);
        let sales = &contract.inputs[1];
        assert_eq!(sales.ty, IoType::File);
        assert_eq!(sales.mount.as_deref(), Some("/var/inputs/sales.gz"));
        assert_eq!(sales.sample.as_deref(), Some(path.as_path()));
        assert_eq!(contract.outputs[0].path, "/var/outputs/total");
    }

    #[test]
    fn sample_args_give_scalar_inputs_their_value_on_the_samples() {
        let args = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let contract = || {
            Contract::new(
                &[decl("gap:int"), decl("day:datetime"), decl("strict:bool")],
                &[],
                &[],
            )
            .unwrap()
        };
        let given = contract()
            .with_sample_args(&args(&[("gap", "30")]))
            .unwrap();
        assert_eq!(given.inputs[0].sample_value.as_deref(), Some("30"));
        assert_eq!(given.inputs[1].sample_value, None);
        // Written as the sandbox passes it to the script.
        let strict = contract()
            .with_sample_args(&args(&[("strict", "True")]))
            .unwrap();
        assert_eq!(strict.inputs[2].sample_value.as_deref(), Some("true"));
        let err = error_of(contract().with_sample_args(&args(&[("gap", "thirty")])));
        assert!(
            err.contains("`gap`") && err.contains("\"thirty\" is not a valid int"),
            "{err}"
        );
        let err = error_of(contract().with_sample_args(&args(&[("when", "2024-01-01")])));
        assert!(
            err.contains("no input `when`") && err.contains("gap, day, strict"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.csv");
        std::fs::write(&path, b"x\n1\n").unwrap();
        let samples = vec![Sample {
            name: "data".into(),
            path,
        }];
        let with_file = Contract::new(&[], &[], &samples).unwrap();
        let err = error_of(with_file.with_sample_args(&args(&[("data", "x.csv")])));
        assert!(err.contains("--sample data=PATH"), "{err}");
    }

    #[test]
    fn a_sample_declared_with_another_type_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.csv");
        std::fs::write(&path, b"x").unwrap();
        let samples = vec![Sample {
            name: "data".into(),
            path,
        }];
        let err = error_of(Contract::new(&[decl("data:int")], &[], &samples));
        assert!(err.contains("declared as int"), "{err}");
    }

    #[test]
    fn missing_sample_files_fail_before_any_model_call() {
        let samples = vec![Sample {
            name: "data".into(),
            path: "/nonexistent/data.csv".into(),
        }];
        let err = error_of(Contract::new(&[], &[], &samples));
        assert!(err.contains("/nonexistent/data.csv"), "{err}");
    }

    #[test]
    fn binary_and_unreadable_samples_fail_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("data.csv");
        std::fs::write(&binary, b"a,b\n1,\x002\n").unwrap();
        let sample = |path: &Path| {
            vec![Sample {
                name: "data".into(),
                path: path.to_owned(),
            }]
        };
        let err = error_of(Contract::new(&[], &[], &sample(&binary)));
        assert!(
            err.contains("data.csv") && err.contains("NUL byte (at byte 6)"),
            "{err}"
        );
        let err = error_of(Contract::new(&[], &[], &sample(dir.path())));
        assert!(err.contains("is not a file"), "{err}");
        // UTF-16 text is full of NUL bytes and is still text.
        let utf16 = dir.path().join("wide.csv");
        std::fs::write(&utf16, b"\xFF\xFEa\x00,\x00b\x00").unwrap();
        assert!(Contract::new(&[], &[], &sample(&utf16)).is_ok());
        // A compressed sample is checked as it decompresses.
        let gz = dir.path().join("data.csv.gz");
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut encoder, b"a\n\x00\n").unwrap();
        std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
        let err = error_of(Contract::new(&[], &[], &sample(&gz)));
        assert!(err.contains("after decompressing"), "{err}");
    }

    #[test]
    fn names_are_validated() {
        for (inputs, outputs, expect) in [
            (vec!["2fast:int"], vec![], "Python identifier"),
            (vec!["class:str"], vec![], "keyword"),
            (vec!["help:bool"], vec![], "reserved"),
            (vec!["outputs_dir:str"], vec![], "reserved"),
            (vec!["a:int", "a:str"], vec![], "twice"),
            (
                vec![],
                vec!["summary.csv:float"],
                "only file and dir outputs",
            ),
            (vec![], vec!["../escape.csv:file"], "plain file name"),
            (vec![], vec!["exit_code:int"], "reserved"),
        ] {
            let inputs: Vec<Declaration> = inputs.iter().map(|t| decl(t)).collect();
            let outputs: Vec<Declaration> = outputs.iter().map(|t| decl(t)).collect();
            let err = error_of(Contract::new(&inputs, &outputs, &[]));
            assert!(err.contains(expect), "{inputs:?} {outputs:?}: {err}");
        }
        let ok = Contract::new(
            &[decl("max_rows:int")],
            &[decl("report-2024.csv:file")],
            &[],
        );
        assert!(ok.is_ok());
    }
}
