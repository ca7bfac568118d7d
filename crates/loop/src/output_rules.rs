//! Spots rules about the script's output rather than its input data ("the output report must
//! have one row per `sensor_id`"). Such a rule is not a check on a sample: applied to the input it
//! would count the readings of each sensor as violations. It stays text for the code and test
//! prompts, and no model call is spent reading it.

use crate::request::Output;

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
    use super::about_an_output;
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
}
