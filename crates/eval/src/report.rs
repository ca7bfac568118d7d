//! What an eval found: one record per task and seed, and the summary over them. Written as
//! `eval.json`; [`render_table`] gives the text table the CLI prints.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::score::{CaseResult, TriedScript, all_heldout_right, is_heldout};
use crate::suite::Split;
use crate::verdicts::Verdict;

/// Version of the `eval.json` layout.
pub const EVAL_FORMAT_VERSION: u32 = 1;

/// One task generated with one seed, and scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The task.
    pub task: String,
    /// Its half.
    pub split: Split,
    /// The sampling seed.
    pub seed: u64,
    /// The loop ended with passing tests.
    pub generated: bool,
    /// Why the loop stopped (or the error that stopped it, or the timeout).
    pub reason: String,
    /// The generation ran out of `--task-timeout`.
    pub timed_out: bool,
    /// Test runs.
    pub test_runs: u32,
    /// Model calls.
    pub model_calls: u32,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache, when the run recorded them.
    pub cached_tokens: Option<u64>,
    /// Wall-clock seconds of the generation (scoring excluded).
    pub seconds: f64,
    /// Every case, the sample case first.
    pub cases: Vec<CaseResult>,
    /// The other scripts the loop tested on its way, scored the same way (none recorded before
    /// they were kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tried: Vec<TriedScript>,
    /// Each diagnosed failure checked against the reference solution (none recorded before
    /// they were checked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<Verdict>,
}

impl RunRecord {
    /// Right on every held-out case (whether or not the loop's own tests passed: this is the
    /// script the user gets).
    pub fn heldout_correct(&self) -> bool {
        all_heldout_right(&self.cases)
    }

    /// Held-out cases right, and held-out cases in all.
    pub fn heldout_counts(&self) -> (usize, usize) {
        let heldout: Vec<&CaseResult> = self.cases.iter().filter(|c| is_heldout(c)).collect();
        (heldout.iter().filter(|c| c.correct).count(), heldout.len())
    }

    /// Right on the samples (`None` when it was not scored).
    pub fn sample_correct(&self) -> Option<bool> {
        self.cases
            .iter()
            .find(|c| !is_heldout(c))
            .map(|c| c.correct)
    }

    /// Some script the loop tested (the kept one or one it tried on the way) was right on every
    /// held-out case: what a perfect choice among its scripts would have scored.
    pub fn some_script_correct(&self) -> bool {
        self.heldout_correct() || self.tried.iter().any(TriedScript::heldout_correct)
    }

    /// Of the candidates the model wrote (each round's `candidates/<n>/<k>/solution.py`, the
    /// fixes not counted), those right on every held-out case, and all of them: the model's
    /// own rate of right scripts on the task, whichever the loop kept.
    pub fn candidate_counts(&self) -> (usize, usize) {
        self.tried
            .iter()
            .filter(|t| t.script.starts_with("candidates/"))
            .fold((0, 0), |(right, all), t| {
                (right + usize::from(t.heldout_correct()), all + 1)
            })
    }

    /// The diagnosed failures the reference could judge: (diagnoses right, routes right, all).
    pub fn verdict_counts(&self) -> (usize, usize, usize) {
        self.verdicts
            .iter()
            .filter_map(|v| Some((v.diagnosis_right()?, v.route_right()?)))
            .fold((0, 0, 0), |(diagnoses, routes, all), (d, r)| {
                (diagnoses + usize::from(d), routes + usize::from(r), all + 1)
            })
    }

    /// Input plus output tokens.
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// Totals over the runs of one split.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SplitSummary {
    /// Task and seed pairs run.
    pub runs: usize,
    /// Runs whose tests passed.
    pub generated: usize,
    /// Runs right on every held-out case.
    pub heldout_correct: usize,
    /// Runs right on the samples.
    pub sample_correct: usize,
    /// Runs where some script the loop tested was right on every held-out case.
    #[serde(default)]
    pub some_script_correct: usize,
    /// Candidates the model wrote over the runs ([`RunRecord::candidate_counts`]).
    #[serde(default)]
    pub candidates_written: usize,
    /// Of them, those right on every held-out case.
    #[serde(default)]
    pub candidates_correct: usize,
    /// Diagnosed failures the reference could judge ([`RunRecord::verdict_counts`]).
    #[serde(default)]
    pub verdicts: usize,
    /// Of them, those whose diagnosis put the fault on the right side (the test or the script).
    #[serde(default)]
    pub diagnoses_right: usize,
    /// Of them, those the loop acted on on the right side (after its own overrides).
    #[serde(default)]
    pub routes_right: usize,
    /// Of them, those the reference failed too (the test's fault).
    #[serde(default)]
    pub tests_at_fault: usize,
    /// `seed -> held-out correct runs` with that seed: the spread across seeds.
    pub correct_by_seed: BTreeMap<u64, usize>,
    /// Tasks right with at least one seed.
    pub tasks_ever_correct: usize,
    /// Tasks in the split that were run.
    pub tasks: usize,
    /// Tokens over all runs.
    pub tokens: u64,
    /// Cached prompt tokens over the runs that recorded them.
    pub cached_tokens: u64,
    /// Seconds over all runs.
    pub seconds: f64,
    /// Tokens per held-out-correct run (`None` with none correct).
    pub tokens_per_correct: Option<f64>,
    /// Seconds per held-out-correct run.
    pub seconds_per_correct: Option<f64>,
}

/// `eval.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// [`EVAL_FORMAT_VERSION`].
    pub format_version: u32,
    /// The settings every run used; resuming requires the same.
    pub settings: serde_json::Value,
    /// Every finished run, by task then seed.
    pub runs: Vec<RunRecord>,
    /// Per split.
    pub summary: BTreeMap<String, SplitSummary>,
}

impl EvalReport {
    /// A report of `runs` (sorted here) with its summaries.
    pub fn new(settings: serde_json::Value, mut runs: Vec<RunRecord>) -> Self {
        runs.sort_by(|a, b| (a.split, &a.task, a.seed).cmp(&(b.split, &b.task, b.seed)));
        let mut summary = BTreeMap::new();
        for split in [Split::Dev, Split::Test] {
            let of_split: Vec<&RunRecord> = runs.iter().filter(|r| r.split == split).collect();
            if !of_split.is_empty() {
                summary.insert(split.name().to_owned(), summarize(&of_split));
            }
        }
        EvalReport {
            format_version: EVAL_FORMAT_VERSION,
            settings,
            runs,
            summary,
        }
    }
}

fn summarize(runs: &[&RunRecord]) -> SplitSummary {
    let mut s = SplitSummary {
        runs: runs.len(),
        ..SplitSummary::default()
    };
    let mut tasks = BTreeSet::new();
    let mut right = BTreeSet::new();
    for r in runs {
        tasks.insert(&r.task);
        s.generated += usize::from(r.generated);
        s.sample_correct += usize::from(r.sample_correct() == Some(true));
        let correct = r.heldout_correct();
        s.heldout_correct += usize::from(correct);
        s.some_script_correct += usize::from(r.some_script_correct());
        let (candidates_right, candidates) = r.candidate_counts();
        s.candidates_correct += candidates_right;
        s.candidates_written += candidates;
        let (diagnoses, routes, verdicts) = r.verdict_counts();
        s.diagnoses_right += diagnoses;
        s.routes_right += routes;
        s.verdicts += verdicts;
        s.tests_at_fault += r
            .verdicts
            .iter()
            .filter(|v| v.test_at_fault() == Some(true))
            .count();
        *s.correct_by_seed.entry(r.seed).or_default() += usize::from(correct);
        if correct {
            right.insert(&r.task);
        }
        s.tokens += r.tokens();
        s.cached_tokens += r.cached_tokens.unwrap_or(0);
        s.seconds += r.seconds;
    }
    s.tasks = tasks.len();
    s.tasks_ever_correct = right.len();
    if s.heldout_correct > 0 {
        s.tokens_per_correct = Some(s.tokens as f64 / s.heldout_correct as f64);
        s.seconds_per_correct = Some(s.seconds / s.heldout_correct as f64);
    }
    s
}

/// The table: one line per run, then a summary per split.
pub fn render_table(report: &EvalReport) -> String {
    let header = [
        "task",
        "split",
        "seed",
        "generated",
        "held-out",
        "sample",
        "test runs",
        "tokens",
        "cached",
        "wall s",
        "diagnoses right",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| (*h).to_owned()).collect()];
    for r in &report.runs {
        let (right, all) = r.heldout_counts();
        let verdict = if r.heldout_correct() { "yes" } else { "no" };
        rows.push(vec![
            r.task.clone(),
            r.split.name().to_owned(),
            r.seed.to_string(),
            if r.timed_out {
                "timeout".to_owned()
            } else {
                yes_no(r.generated)
            },
            format!("{verdict} ({right}/{all})"),
            r.sample_correct().map_or_else(|| "-".to_owned(), yes_no),
            r.test_runs.to_string(),
            r.tokens().to_string(),
            r.cached_tokens
                .map_or_else(|| "unknown".to_owned(), |c| c.to_string()),
            format!("{:.0}", r.seconds),
            match r.verdict_counts() {
                (_, _, 0) => "-".to_owned(),
                (right, _, all) => format!("{right}/{all}"),
            },
        ]);
    }
    let mut out = aligned(&rows);
    for (split, s) in &report.summary {
        let spread: Vec<String> = s
            .correct_by_seed
            .iter()
            .map(|(seed, n)| format!("seed {seed}: {n}"))
            .collect();
        let per = |v: Option<f64>, unit: &str| {
            v.map_or_else(
                || "n/a (none correct)".to_owned(),
                |v| format!("{v:.0} {unit}"),
            )
        };
        // Written only with `--candidates` above 1: at 1 the first script is no candidate.
        let candidates = if s.candidates_written > 0 {
            format!(
                " (candidates right {}/{})",
                s.candidates_correct, s.candidates_written
            )
        } else {
            String::new()
        };
        // Written when some diagnosis was checked against the reference.
        let diagnoses = if s.verdicts > 0 {
            format!(
                "; diagnoses right {}/{} (the loop acted right on {}; the test was at fault in {})",
                s.diagnoses_right, s.verdicts, s.routes_right, s.tests_at_fault
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "\n{split}: held-out correct {}/{} runs ({}), some tested script right in {}/{}{}, \
             tasks right with some seed {}/{}; tests passed {}/{}, right on samples {}/{}; \
             {} tokens ({} cached), {:.0} s; per correct run: {}, {}{}",
            s.heldout_correct,
            s.runs,
            spread.join(", "),
            s.some_script_correct,
            s.runs,
            candidates,
            s.tasks_ever_correct,
            s.tasks,
            s.generated,
            s.runs,
            s.sample_correct,
            s.runs,
            s.tokens,
            s.cached_tokens,
            s.seconds,
            per(s.tokens_per_correct, "tokens"),
            per(s.seconds_per_correct, "s"),
            diagnoses,
        );
    }
    out
}

/// `rows` (the header first) as text, each column padded to its widest cell.
pub(crate) fn aligned<R: AsRef<[String]>>(rows: &[R]) -> String {
    let columns = rows.first().map_or(0, |row| row.as_ref().len());
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|row| row.as_ref().get(i))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .as_ref()
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(task: &str, split: Split, seed: u64, heldout: &[bool]) -> RunRecord {
        let mut cases = vec![CaseResult {
            name: "sample".into(),
            correct: true,
            detail: None,
        }];
        for (i, ok) in heldout.iter().enumerate() {
            cases.push(CaseResult {
                name: format!("h{i}"),
                correct: *ok,
                detail: None,
            });
        }
        RunRecord {
            task: task.into(),
            split,
            seed,
            generated: true,
            reason: "tests pass".into(),
            timed_out: false,
            test_runs: 2,
            model_calls: 5,
            input_tokens: 900,
            output_tokens: 100,
            cached_tokens: None,
            seconds: 60.0,
            cases,
            tried: Vec::new(),
            verdicts: Vec::new(),
        }
    }

    /// `script`, scored with the sample right and `heldout` as its held-out cases.
    fn tried(script: &str, heldout: &[bool]) -> TriedScript {
        TriedScript {
            script: script.into(),
            cases: record("a", Split::Dev, 1, heldout).cases,
        }
    }

    #[test]
    fn a_run_is_correct_only_when_every_heldout_case_is() {
        assert!(record("a", Split::Dev, 1, &[true, true]).heldout_correct());
        assert!(!record("a", Split::Dev, 1, &[true, false]).heldout_correct());
        assert!(!record("a", Split::Dev, 1, &[]).heldout_correct());
    }

    #[test]
    fn a_tried_script_right_on_every_heldout_case_counts_as_some_script_correct() {
        let fix = "iterations/1/solution.py";
        let mut wrong = record("a", Split::Dev, 1, &[true, false]);
        wrong.tried = vec![tried(fix, &[false, true]), tried(fix, &[true, true])];
        let mut still_wrong = record("b", Split::Dev, 1, &[false]);
        still_wrong.tried = vec![tried(fix, &[true, false])];
        let right = record("c", Split::Dev, 1, &[true]);
        assert!(wrong.some_script_correct() && !wrong.heldout_correct());
        assert!(!still_wrong.some_script_correct());
        assert!(right.some_script_correct());
        let report = EvalReport::new(serde_json::json!({}), vec![wrong, still_wrong, right]);
        assert_eq!(report.summary["dev"].some_script_correct, 2);
        let table = render_table(&report);
        assert!(
            table.contains("some tested script right in 2/3, tasks right"),
            "{table}"
        );
    }

    #[test]
    fn candidates_are_counted_apart_from_the_fixes() {
        let mut first = record("a", Split::Test, 1, &[false]);
        first.tried = vec![
            tried("candidates/1/1/solution.py", &[false]),
            tried("candidates/1/2/solution.py", &[true, true]),
            tried("candidates/2/1/solution.py", &[true, false]),
            tried("iterations/1/solution.py", &[true]),
        ];
        let mut second = record("b", Split::Test, 1, &[true]);
        second.tried = vec![tried("candidates/1/1/solution.py", &[true])];
        assert_eq!(first.candidate_counts(), (1, 3));
        assert_eq!(second.candidate_counts(), (1, 1));
        let report = EvalReport::new(serde_json::json!({}), vec![first, second]);
        let test = &report.summary["test"];
        assert_eq!((test.candidates_correct, test.candidates_written), (2, 4));
        let table = render_table(&report);
        assert!(
            table.contains("some tested script right in 2/2 (candidates right 2/4)"),
            "{table}"
        );
    }

    #[test]
    fn summaries_count_per_split_and_seed() {
        let report = EvalReport::new(
            serde_json::json!({}),
            vec![
                record("b", Split::Test, 2, &[false]),
                record("a", Split::Dev, 1, &[true]),
                record("a", Split::Dev, 2, &[false]),
                record("c", Split::Dev, 1, &[false]),
            ],
        );
        let dev = &report.summary["dev"];
        assert_eq!(
            (
                dev.runs,
                dev.heldout_correct,
                dev.tasks,
                dev.tasks_ever_correct
            ),
            (3, 1, 2, 1)
        );
        assert_eq!(dev.correct_by_seed, BTreeMap::from([(1, 1), (2, 0)]));
        assert_eq!(dev.tokens_per_correct, Some(3000.0));
        assert_eq!(report.summary["test"].tokens_per_correct, None);
        assert_eq!(report.runs[0].task, "a");
        let table = render_table(&report);
        assert!(table.contains("yes (1/1)"), "{table}");
        assert!(
            table.contains("dev: held-out correct 1/3 runs (seed 1: 1, seed 2: 0)"),
            "{table}"
        );
        assert!(table.contains("test: held-out correct 0/1"), "{table}");
    }

    #[test]
    fn checked_diagnoses_are_counted_per_run_and_per_split() {
        let verdict = |diagnosed: &str, reference_passed: Option<bool>| Verdict {
            iteration: 1,
            test_id: "test_solution.py::test_total".into(),
            diagnosed: diagnosed.into(),
            routed: "logic".into(),
            reference_passed,
        };
        let mut checked = record("a", Split::Dev, 1, &[false]);
        checked.verdicts = vec![
            verdict("test_error", Some(false)),
            verdict("logic", Some(true)),
            verdict("environment", Some(false)),
            verdict("logic", None),
        ];
        assert_eq!(checked.verdict_counts(), (2, 1, 3));
        let unchecked = record("b", Split::Dev, 1, &[false]);
        let report = EvalReport::new(serde_json::json!({}), vec![checked, unchecked]);
        let dev = &report.summary["dev"];
        assert_eq!(
            (
                dev.verdicts,
                dev.diagnoses_right,
                dev.routes_right,
                dev.tests_at_fault
            ),
            (3, 2, 1, 2)
        );
        let table = render_table(&report);
        let rows: Vec<&str> = table.lines().skip(1).take(2).collect();
        assert!(
            rows[0].starts_with("a ") && rows[0].ends_with(" 2/3"),
            "{table}"
        );
        assert!(
            rows[1].starts_with("b ") && rows[1].ends_with(" -"),
            "{table}"
        );
        assert!(
            table.contains(
                "; diagnoses right 2/3 (the loop acted right on 1; the test was at fault in 2)"
            ),
            "{table}"
        );
    }
}
