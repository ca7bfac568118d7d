//! Typed inputs (rendered as `--name value` argv entries) and outputs (parsed strictly from
//! `/var/outputs/<name>`).

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::error::SandboxError;

/// Where inputs appear inside the sandbox.
pub const INPUTS_DIR: &str = "/var/inputs";
/// Where the script writes its outputs inside the sandbox.
pub const OUTPUTS_DIR: &str = "/var/outputs";

/// The type of an input or output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoType {
    /// Text.
    Str,
    /// A whole number.
    Int,
    /// A floating-point number.
    Float,
    /// `true` / `false`.
    Bool,
    /// An ISO 8601 date-time.
    Datetime,
    /// A duration.
    Timedelta,
    /// A file.
    File,
    /// A directory.
    Dir,
}

impl IoType {
    /// The type's name, as the issue and Python spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Str => "str",
            Self::Int => "int",
            Self::Float => "float",
            Self::Bool => "bool",
            Self::Datetime => "datetime",
            Self::Timedelta => "timedelta",
            Self::File => "file",
            Self::Dir => "dir",
        }
    }
}

/// A typed value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "lowercase")]
pub enum Value {
    /// Text.
    Str(String),
    /// A whole number.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// An ISO 8601 date-time, as written (validated).
    Datetime(String),
    /// A duration in microseconds (Python's `timedelta` resolution; may be negative).
    Timedelta(i64),
    /// A file on the host.
    File(PathBuf),
    /// A directory on the host.
    Dir(PathBuf),
}

impl Value {
    /// This value's type.
    pub fn io_type(&self) -> IoType {
        match self {
            Self::Str(_) => IoType::Str,
            Self::Int(_) => IoType::Int,
            Self::Float(_) => IoType::Float,
            Self::Bool(_) => IoType::Bool,
            Self::Datetime(_) => IoType::Datetime,
            Self::Timedelta(_) => IoType::Timedelta,
            Self::File(_) => IoType::File,
            Self::Dir(_) => IoType::Dir,
        }
    }

    /// The argv text for a non-path value (`None` for files and directories, which are mounted).
    pub fn argv_text(&self) -> Option<String> {
        Some(match self {
            Self::Str(s) | Self::Datetime(s) => s.clone(),
            Self::Int(i) => i.to_string(),
            Self::Float(f) => f.to_string(),
            Self::Bool(b) => b.to_string(),
            Self::Timedelta(us) => format_seconds(*us),
            Self::File(_) | Self::Dir(_) => return None,
        })
    }
}

/// A named input of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// The name: argv flag `--name`, and the mount name under `/var/inputs`.
    pub name: String,
    /// The value.
    pub value: Value,
}

/// Where an input file or directory is mounted: `/var/inputs/<name>` plus the file's extension.
pub(crate) fn mount_point(name: &str, host: &Path, is_file: bool) -> String {
    match host.extension().and_then(|e| e.to_str()) {
        Some(ext) if is_file && !ext.is_empty() => format!("{INPUTS_DIR}/{name}.{ext}"),
        _ => format!("{INPUTS_DIR}/{name}"),
    }
}

/// Refuses output names that are not safe as a file name in the outputs directory: scalar
/// outputs are identifiers ([`check_name`]); file and directory outputs may also carry `-` and
/// an extension (`report.csv`), but never a path (`/`, a leading `.`, `..`).
pub(crate) fn check_output_name(name: &str, kind: IoType) -> Result<(), SandboxError> {
    if !matches!(kind, IoType::File | IoType::Dir) {
        return check_name(name);
    }
    let ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && name.len() <= 128;
    allowed(ok, name)
}

/// Refuses names that are not safe as a flag and a file name.
pub(crate) fn check_name(name: &str) -> Result<(), SandboxError> {
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64;
    allowed(ok, name)
}

fn allowed(ok: bool, name: &str) -> Result<(), SandboxError> {
    if ok {
        Ok(())
    } else {
        Err(SandboxError::BadName {
            name: name.to_owned(),
        })
    }
}

/// An integer written as such, or as a float with nothing but zeros after the point (`241.0`,
/// what pandas and numpy print for a whole-number sum); `241.5` and `2.41e2` are not integers.
fn whole_number(t: &str) -> Option<i64> {
    if let Ok(n) = t.parse() {
        return Some(n);
    }
    let (whole, fraction) = t.split_once('.')?;
    let digits = whole.strip_prefix('-').unwrap_or(whole);
    let is_whole = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !fraction.is_empty()
        && fraction.bytes().all(|b| b == b'0');
    if is_whole { whole.parse().ok() } else { None }
}

/// Parses the text of an output of a non-path type. Whitespace around the value is ignored.
pub fn parse_output(name: &str, kind: IoType, text: &str) -> Result<Value, SandboxError> {
    let bad = |reason: String| SandboxError::BadOutput {
        name: name.to_owned(),
        kind: kind.name(),
        reason,
    };
    let t = text.trim();
    match kind {
        IoType::Str => Ok(Value::Str(text.strip_suffix('\n').unwrap_or(text).to_owned())),
        IoType::Int => whole_number(t)
            .map(Value::Int)
            .ok_or_else(|| bad(format!("{t:?} is not an integer"))),
        IoType::Float => match t.parse::<f64>() {
            Ok(f) if t.chars().any(|c| c.is_ascii_digit()) || f.is_nan() || f.is_infinite() => {
                Ok(Value::Float(f))
            }
            _ => Err(bad(format!("{t:?} is not a number"))),
        },
        IoType::Bool => match t.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Ok(Value::Bool(true)),
            "false" | "0" | "no" => Ok(Value::Bool(false)),
            _ => Err(bad(format!("{t:?} is not one of true/false/1/0/yes/no"))),
        },
        IoType::Datetime => {
            if is_iso_datetime(t) {
                Ok(Value::Datetime(t.to_owned()))
            } else {
                Err(bad(format!("{t:?} is not an ISO 8601 date-time such as 2024-05-01T13:45:00")))
            }
        }
        IoType::Timedelta => parse_timedelta(t).map(Value::Timedelta).ok_or_else(|| {
            bad(format!(
                "{t:?} is not a duration: write seconds (90.5), ISO 8601 (PT1M30.5S) or Python's str(timedelta) (0:01:30.500000)"
            ))
        }),
        IoType::File | IoType::Dir => Err(bad("files and directories are read from disk".into())),
    }
}

fn is_iso_datetime(t: &str) -> bool {
    static RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(
            r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$",
        )
        .ok()
    });
    let Some(caps) = RE.as_ref().and_then(|re| re.captures(t)) else {
        return false;
    };
    let num = |i: usize, default: u32| {
        caps.get(i)
            .map_or(Some(default), |m| m.as_str().parse::<u32>().ok())
    };
    match (num(2, 1), num(3, 1), num(4, 0), num(5, 0), num(6, 0)) {
        (Some(mo), Some(d), Some(h), Some(mi), Some(s)) => {
            (1..=12).contains(&mo) && (1..=31).contains(&d) && h < 24 && mi < 60 && s < 60
        }
        _ => false,
    }
}

/// Parses seconds, an ISO 8601 duration (`P1DT2H3M4.5S`) or `str(timedelta)` (`-1 day, 2:03:04.5`)
/// into microseconds.
fn parse_timedelta(t: &str) -> Option<i64> {
    static PY: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r"^(?:(-?\d+) days?, )?(\d{1,2}):(\d{2}):(\d{2}(?:\.\d{1,6})?)$").ok()
    });
    static ISO: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r"^(-)?P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$").ok()
    });
    let micros = |secs: f64| -> Option<i64> {
        let us = (secs * 1e6).round();
        // i64 microseconds cover about 292 000 years; refuse anything beyond.
        #[allow(
            clippy::cast_possible_truncation,
            reason = "range checked on the line before"
        )]
        (us.is_finite() && us.abs() < 9.0e18).then_some(us as i64)
    };
    if let Ok(secs) = t.parse::<f64>()
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
    {
        return micros(secs);
    }
    if let Some(c) = PY.as_ref().and_then(|re| re.captures(t)) {
        let days: f64 = c.get(1).map_or(Some(0.0), |m| m.as_str().parse().ok())?;
        let h: f64 = c[2].parse().ok()?;
        let m: f64 = c[3].parse().ok()?;
        let s: f64 = c[4].parse().ok()?;
        if m >= 60.0 || s >= 60.0 || h >= 24.0 {
            return None;
        }
        return micros(days * 86_400.0 + h * 3600.0 + m * 60.0 + s);
    }
    let c = ISO.as_ref().and_then(|re| re.captures(t))?;
    if t.ends_with('T') || t.ends_with('P') {
        return None;
    }
    let part = |i: usize| {
        c.get(i)
            .map_or(Some(0.0), |m| m.as_str().parse::<f64>().ok())
    };
    let secs =
        part(2)? * 604_800.0 + part(3)? * 86_400.0 + part(4)? * 3600.0 + part(5)? * 60.0 + part(6)?;
    micros(if c.get(1).is_some() { -secs } else { secs })
}

fn format_seconds(us: i64) -> String {
    let sign = if us < 0 { "-" } else { "" };
    let abs = us.unsigned_abs();
    let (s, frac) = (abs / 1_000_000, abs % 1_000_000);
    if frac == 0 {
        format!("{sign}{s}")
    } else {
        format!("{sign}{s}.{frac:06}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(kind: IoType, t: &str) -> Value {
        parse_output("x", kind, t).unwrap()
    }
    fn err(kind: IoType, t: &str) {
        assert!(
            parse_output("x", kind, t).is_err(),
            "{t:?} should not parse as {kind:?}"
        );
    }

    #[test]
    fn ints_take_whole_floats_only() {
        for (t, n) in [("241", 241), ("241.0\n", 241), ("-3.00", -3), (" 7 ", 7)] {
            assert_eq!(ok(IoType::Int, t), Value::Int(n));
        }
        for t in [
            "241.5", "2.41e2", "1.", ".0", "-.0", "nan", "", "12abc", "1.0.0",
        ] {
            err(IoType::Int, t);
        }
    }

    #[test]
    fn bools_are_strict() {
        for (t, b) in [
            ("TRUE", true),
            ("yes\n", true),
            ("1", true),
            ("No", false),
            ("0", false),
            ("false", false),
        ] {
            assert_eq!(ok(IoType::Bool, t), Value::Bool(b));
        }
        for t in ["y", "on", "2", "", "truee"] {
            err(IoType::Bool, t);
        }
    }

    #[test]
    fn numbers_and_datetimes() {
        assert_eq!(ok(IoType::Int, " 42\n"), Value::Int(42));
        err(IoType::Int, "4.2");
        assert_eq!(ok(IoType::Float, "2.5e3"), Value::Float(2500.0));
        err(IoType::Float, "abc");
        for t in [
            "2024-05-01",
            "2024-05-01T13:45:00",
            "2024-05-01 13:45:00.123456+02:00",
            "2024-05-01T13:45Z",
        ] {
            assert_eq!(ok(IoType::Datetime, t), Value::Datetime(t.into()));
        }
        for t in ["2024-13-01", "01/05/2024", "2024-05-01T25:00", "yesterday"] {
            err(IoType::Datetime, t);
        }
    }

    #[test]
    fn timedeltas_in_three_spellings() {
        assert_eq!(ok(IoType::Timedelta, "90.5"), Value::Timedelta(90_500_000));
        assert_eq!(
            ok(IoType::Timedelta, "PT1M30.5S"),
            Value::Timedelta(90_500_000)
        );
        assert_eq!(
            ok(IoType::Timedelta, "P1DT1H"),
            Value::Timedelta(90_000_000_000)
        );
        assert_eq!(
            ok(IoType::Timedelta, "0:01:30.500000"),
            Value::Timedelta(90_500_000)
        );
        assert_eq!(
            ok(IoType::Timedelta, "2 days, 0:00:01"),
            Value::Timedelta(172_801_000_000)
        );
        assert_eq!(
            ok(IoType::Timedelta, "-1 day, 23:59:59"),
            Value::Timedelta(-1_000_000)
        );
        for t in ["P", "PT", "1:2", "ten seconds", "0:61:00"] {
            err(IoType::Timedelta, t);
        }
        assert_eq!(format_seconds(-1_500_000), "-1.500000");
        assert_eq!(format_seconds(90_000_000), "90");
    }

    #[test]
    fn names_and_mount_points() {
        assert!(check_name("in_file2").is_ok());
        for bad in ["", "2x", "a-b", "a b", "../x", "--x"] {
            assert!(check_name(bad).is_err());
        }
        for good in ["report.csv", "out-2.tar.gz", "plots"] {
            assert!(check_output_name(good, IoType::File).is_ok(), "{good}");
        }
        for bad in ["", ".hidden", "../x", "a/b", "a..b", "x y.csv"] {
            assert!(check_output_name(bad, IoType::Dir).is_err(), "{bad}");
        }
        assert!(check_output_name("report.csv", IoType::Int).is_err());
        assert_eq!(
            mount_point("data", Path::new("/h/x.csv"), true),
            "/var/inputs/data.csv"
        );
        assert_eq!(
            mount_point("d", Path::new("/h/dir.d"), false),
            "/var/inputs/d"
        );
    }
}
