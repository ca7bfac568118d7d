//! Spots rules about the script's output rather than its input data ("the output report must
//! have one row per `sensor_id`"). Such a rule is not a check on a sample: applied to the input it
//! would count the readings of each sensor as violations. It stays text for the code and test
//! prompts, and no model call is spent reading it. One kind is checked all the same: "one row
//! per `<column>`" names a key the harness can count in the sample and in the CSV the script
//! writes from it ([`one_row_per`]).

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::request::Output;

/// "one row per unique `sensor_id`", "a single row for each customer", "exactly one row for
/// every distinct `sku`": the word after the optional "unique" is the key column.
static ONE_ROW_PER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:exactly\s+one|one|a\s+single|a)\s+row\s+(?:per|for\s+each|for\s+every|for)\s+(?:(?:unique|distinct|each|every)\s+)?`?([A-Za-z_][A-Za-z0-9_]*)`?",
    )
    .ok()
});

/// A rule saying a CSV output has one row per value of a sample's column: the script run on
/// the samples must write each value of `column` found in sample `sample` exactly once, under a
/// `column` header of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowKey {
    /// The rule as the user wrote it.
    pub rule: String,
    /// The CSV output (`report.csv`).
    pub output: String,
    /// The key column, spelled as in the sample's header.
    pub column: String,
    /// The input whose sample holds the column.
    pub sample: String,
    /// Where that sample is mounted in the sandbox.
    pub mount: String,
    /// The sample's field delimiter, as its profile found it.
    #[serde(default = "comma")]
    pub delimiter: char,
}

/// Row keys read before [`RowKey::delimiter`] existed were of comma-separated samples.
fn comma() -> char {
    ','
}

/// A tabular sample as [`one_row_per`] needs it: input name, mount path, header.
pub(crate) struct SampleColumns<'a> {
    pub(crate) name: &'a str,
    pub(crate) mount: &'a str,
    pub(crate) columns: Vec<&'a str>,
    pub(crate) delimiter: char,
}

/// The row key `rule` sets, when it says "one row per <column>" of a sample's column and there
/// is a CSV output it can be about: the one it names, or the only one declared.
pub(crate) fn one_row_per(
    rule: &str,
    outputs: &[Output],
    samples: &[SampleColumns<'_>],
) -> Option<RowKey> {
    let word = ONE_ROW_PER.as_ref()?.captures(rule)?.get(1)?.as_str();
    let (sample, column) = samples.iter().find_map(|sample| {
        let column = sample
            .columns
            .iter()
            .find(|c| c.eq_ignore_ascii_case(word))?;
        Some((sample, *column))
    })?;
    let csv_outputs: Vec<&Output> = outputs
        .iter()
        .filter(|o| o.name.to_lowercase().ends_with(".csv"))
        .collect();
    let lowered = rule.to_lowercase();
    let named = csv_outputs.iter().find(|o| {
        let stem = o.name.split('.').next().unwrap_or(&o.name).to_lowercase();
        lowered.contains(&o.name.to_lowercase()) || (stem.len() >= 3 && lowered.contains(&stem))
    });
    let ((Some(output), _) | (None, [output])) = (named, csv_outputs.as_slice()) else {
        return None;
    };
    Some(RowKey {
        rule: rule.to_owned(),
        output: output.name.clone(),
        column: column.to_owned(),
        sample: sample.name.to_owned(),
        mount: sample.mount.to_owned(),
        delimiter: sample.delimiter,
    })
}

/// Why `rule` is left as text, when it is about an output: it says "output", or names a
/// declared output (`report` for `report.csv`), and neither word is a column of `columns`.
pub(crate) fn about_an_output(rule: &str, outputs: &[Output], columns: &[&str]) -> Option<String> {
    let words: Vec<String> = rule
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map(|w| w.trim_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    let is_column = |word: &str| columns.iter().any(|c| c.eq_ignore_ascii_case(word));
    let says_output = words
        .iter()
        .any(|w| (w == "output" || w == "outputs") && !is_column(w));
    let named = outputs.iter().find(|output| {
        let stem = output.name.split('.').next().unwrap_or(&output.name);
        words.iter().any(|w| {
            (*w == output.name.to_lowercase() || (stem.len() >= 3 && *w == stem.to_lowercase()))
                && !is_column(w)
        })
    });
    match named {
        Some(output) => Some(format!(
            "it is about the output `{}`, not the sample data: the script must make it hold",
            output.name
        )),
        None if says_output => Some(
            "it is about the script's output, not the sample data: the script must make it hold"
                .to_owned(),
        ),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{SampleColumns, about_an_output, one_row_per};
    use crate::request::{IoType, Output};

    fn outputs() -> Vec<Output> {
        ["report.csv", "total_anomalies"]
            .iter()
            .map(|name| Output {
                name: (*name).to_owned(),
                ty: IoType::File,
                path: format!("/var/outputs/{name}"),
            })
            .collect()
    }

    #[test]
    fn rules_naming_an_output_stay_text() {
        let columns = ["sensor_id", "temperature"];
        let reason = about_an_output(
            "Output report must have one row per unique sensor_id",
            &outputs(),
            &columns,
        );
        assert!(reason.unwrap().contains("`report.csv`"));
        let reason = about_an_output("total_anomalies must not be negative", &outputs(), &columns);
        assert!(reason.unwrap().contains("`total_anomalies`"));
        let reason = about_an_output("The output has no duplicates", &[], &columns);
        assert!(reason.unwrap().contains("the script's output"));
    }

    #[test]
    fn rules_about_the_data_are_not_output_rules() {
        let columns = ["sensor_id", "temperature", "report"];
        for rule in [
            "Temperature values must be between -40 and 60 Celsius",
            "sensor_id must be unique",
            // `report` is a column here, so this is a rule about the data.
            "report must not be empty",
        ] {
            assert_eq!(about_an_output(rule, &outputs(), &columns), None, "{rule}");
        }
        // A column named `output` makes "output" a column reference.
        assert_eq!(
            about_an_output("output must be positive", &[], &["output"]),
            None
        );
    }

    #[test]
    fn one_row_per_names_a_sample_column_and_a_csv_output() {
        let readings = SampleColumns {
            name: "readings",
            mount: "/var/inputs/readings.csv",
            columns: vec!["Sensor_ID", "temperature"],
            delimiter: ';',
        };
        let samples = [readings];
        let key = one_row_per(
            "Output report must have one row per unique sensor_id",
            &outputs(),
            &samples,
        )
        .unwrap();
        assert_eq!(
            (
                key.output.as_str(),
                key.column.as_str(),
                key.sample.as_str()
            ),
            ("report.csv", "Sensor_ID", "readings")
        );
        assert_eq!(key.mount, "/var/inputs/readings.csv");
        assert_eq!(key.delimiter, ';');
        for rule in [
            "The report has a single row for each `sensor_id`",
            "exactly one row for every distinct sensor_id in the output",
        ] {
            assert!(one_row_per(rule, &outputs(), &samples).is_some(), "{rule}");
        }
        for rule in [
            // Not a column of any sample.
            "Output report must have one row per day",
            // Not about rows per key.
            "Output report must be sorted by sensor_id",
            "temperature must be between -40 and 60",
        ] {
            assert_eq!(one_row_per(rule, &outputs(), &samples), None, "{rule}");
        }
        // Two CSV outputs and the rule names neither: no way to tell which.
        let two = ["a.csv", "b.csv"].map(|name| Output {
            name: name.to_owned(),
            ty: IoType::File,
            path: String::new(),
        });
        assert_eq!(one_row_per("one row per sensor_id", &two, &samples), None);
        assert_eq!(
            one_row_per("b.csv has one row per sensor_id", &two, &samples).map(|k| k.output),
            Some("b.csv".to_owned())
        );
    }
}
