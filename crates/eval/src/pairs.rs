//! Two evals of the same suite side by side (a change's before and after): runs paired by task
//! and seed, totals over the pairs only, which verdicts flipped, and which settings differ. A
//! change to prompts or loop policy is judged by this table, not by one run.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::report::{EvalReport, RunRecord};
use crate::suite::Split;

/// One task and seed run in both evals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    /// The task.
    pub task: String,
    /// Its half.
    pub split: Split,
    /// The seed.
    pub seed: u64,
    /// The run of the first eval.
    pub before: RunRecord,
    /// The run of the second.
    pub after: RunRecord,
}

/// Totals of one side over the paired runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SideTotals {
    /// Runs right on every held-out case.
    pub heldout_correct: usize,
    /// Runs where some script the loop tested was right on every held-out case.
    pub some_script_correct: usize,
    /// Held-out cases right, and in all.
    pub cases_right: usize,
    /// Held-out cases.
    pub cases: usize,
    /// Runs whose own tests passed.
    pub generated: usize,
    /// Runs that hit the task timeout.
    pub timed_out: usize,
    /// Test runs.
    pub test_runs: u64,
    /// Model calls.
    pub model_calls: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    pub cached_tokens: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Diagnosed failures the reference could judge.
    pub verdicts: usize,
    /// Of them, diagnoses that put the fault on the right side.
    pub diagnoses_right: usize,
}

impl SideTotals {
    fn add(&mut self, r: &RunRecord) {
        let (right, all) = r.heldout_counts();
        self.heldout_correct += usize::from(r.heldout_correct());
        self.some_script_correct += usize::from(r.some_script_correct());
        self.cases_right += right;
        self.cases += all;
        self.generated += usize::from(r.generated);
        self.timed_out += usize::from(r.timed_out);
        self.test_runs += u64::from(r.test_runs);
        self.model_calls += u64::from(r.model_calls);
        self.input_tokens += r.input_tokens;
        self.output_tokens += r.output_tokens;
        self.cached_tokens += r.cached_tokens.unwrap_or(0);
        self.seconds += r.seconds;
        let (diagnoses, _, verdicts) = r.verdict_counts();
        self.diagnoses_right += diagnoses;
        self.verdicts += verdicts;
    }

    /// `; diagnoses right R/N` when some diagnosis was checked against the reference.
    fn diagnoses(&self) -> String {
        if self.verdicts == 0 {
            return String::new();
        }
        format!(
            "; diagnoses right {}/{}",
            self.diagnoses_right, self.verdicts
        )
    }

    /// The share of prompt tokens served from cache, in percent.
    fn cached_percent(&self) -> f64 {
        if self.input_tokens == 0 {
            return 0.0;
        }
        // Token counts are far below 2^52: exact as f64.
        100.0 * self.cached_tokens as f64 / self.input_tokens as f64
    }
}

/// The two evals paired.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedReport {
    /// Runs in both, by split, task and seed.
    pub pairs: Vec<Pair>,
    /// The first eval's totals over the pairs.
    pub before: SideTotals,
    /// The second's.
    pub after: SideTotals,
    /// Task and seed run only in the first (left out of the totals).
    pub only_before: Vec<(String, u64)>,
    /// Run only in the second.
    pub only_after: Vec<(String, u64)>,
    /// Settings whose values differ: name -> [before, after] (`null` where one has none).
    pub settings_changed: BTreeMap<String, [serde_json::Value; 2]>,
}

/// Pairs the runs of `before` and `after` by task and seed.
pub fn pair(before: &EvalReport, after: &EvalReport) -> PairedReport {
    let key = |r: &RunRecord| (r.task.clone(), r.seed);
    let after_runs: BTreeMap<(String, u64), &RunRecord> =
        after.runs.iter().map(|r| (key(r), r)).collect();
    let before_keys: Vec<(String, u64)> = before.runs.iter().map(key).collect();
    let mut report = PairedReport {
        pairs: Vec::new(),
        before: SideTotals::default(),
        after: SideTotals::default(),
        only_before: Vec::new(),
        only_after: after
            .runs
            .iter()
            .map(key)
            .filter(|k| !before_keys.contains(k))
            .collect(),
        settings_changed: settings_changed(&before.settings, &after.settings),
    };
    for run in &before.runs {
        let Some(other) = after_runs.get(&key(run)) else {
            report.only_before.push(key(run));
            continue;
        };
        report.before.add(run);
        report.after.add(other);
        report.pairs.push(Pair {
            task: run.task.clone(),
            split: run.split,
            seed: run.seed,
            before: run.clone(),
            after: (*other).clone(),
        });
    }
    report
        .pairs
        .sort_by(|a, b| (a.split, &a.task, a.seed).cmp(&(b.split, &b.task, b.seed)));
    report
}

fn settings_changed(
    before: &serde_json::Value,
    after: &serde_json::Value,
) -> BTreeMap<String, [serde_json::Value; 2]> {
    let empty = serde_json::Map::new();
    let (b, a) = (
        before.as_object().unwrap_or(&empty),
        after.as_object().unwrap_or(&empty),
    );
    b.keys()
        .chain(a.keys())
        .filter_map(|name| {
            let (x, y) = (
                b.get(name).cloned().unwrap_or_default(),
                a.get(name).cloned().unwrap_or_default(),
            );
            (x != y).then(|| (name.clone(), [x, y]))
        })
        .collect()
}

/// One side of a pair as the table shows it: right or not (held-out cases right), whether its
/// tests passed, test runs, calls, tokens, seconds.
fn cell(r: &RunRecord) -> String {
    let (right, all) = r.heldout_counts();
    let verdict = if r.heldout_correct() {
        "right"
    } else {
        "wrong"
    };
    let tests = if r.timed_out {
        "timed out"
    } else if r.generated {
        "tests pass"
    } else {
        "tests fail"
    };
    format!(
        "{verdict} {right}/{all}, {tests}, {} runs, {} calls, {} tok, {:.0} s",
        r.test_runs,
        r.model_calls,
        r.tokens(),
        r.seconds
    )
}

/// The paired table: one line per pair, then the totals of each side, the flips, the runs left
/// out and the settings that differ.
pub fn render_pairs(report: &PairedReport) -> String {
    let mut rows = vec![[
        "task".to_owned(),
        "seed".to_owned(),
        "before".to_owned(),
        "after".to_owned(),
    ]];
    for p in &report.pairs {
        rows.push([
            format!("{} ({})", p.task, p.split.name()),
            p.seed.to_string(),
            cell(&p.before),
            cell(&p.after),
        ]);
    }
    let mut out = crate::report::aligned(&rows);
    let n = report.pairs.len();
    let _ = writeln!(out, "\npairs: {n}");
    for (name, t) in [("before", &report.before), ("after", &report.after)] {
        let _ = writeln!(
            out,
            "{name:<6}  right {}/{n} (some tested script {}/{n}), held-out cases {}/{}, \
             tests passed {}/{n}, timed out {}; {} test runs, {} calls, {} prompt + {} \
             completion tokens, {:.1}% cached, {:.0} s{}",
            t.heldout_correct,
            t.some_script_correct,
            t.cases_right,
            t.cases,
            t.generated,
            t.timed_out,
            t.test_runs,
            t.model_calls,
            t.input_tokens,
            t.output_tokens,
            t.cached_percent(),
            t.seconds,
            t.diagnoses()
        );
    }
    let flipped = |f: fn(&Pair) -> bool| -> Vec<String> {
        report
            .pairs
            .iter()
            .filter(|p| f(p))
            .map(|p| format!("{} seed {}", p.task, p.seed))
            .collect()
    };
    let gained = flipped(|p| !p.before.heldout_correct() && p.after.heldout_correct());
    let lost = flipped(|p| p.before.heldout_correct() && !p.after.heldout_correct());
    let or_none = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    let _ = writeln!(
        out,
        "right after only: {}; right before only: {}",
        or_none(&gained),
        or_none(&lost)
    );
    let left_out = |v: &[(String, u64)]| -> Vec<String> {
        v.iter().map(|(t, s)| format!("{t} seed {s}")).collect()
    };
    if !report.only_before.is_empty() || !report.only_after.is_empty() {
        let _ = writeln!(
            out,
            "not paired (left out of the totals): before only {}; after only {}",
            or_none(&left_out(&report.only_before)),
            or_none(&left_out(&report.only_after))
        );
    }
    for (name, [b, a]) in &report.settings_changed {
        let _ = writeln!(out, "setting {name}: {b} -> {a}");
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::score::CaseResult;

    fn run(task: &str, seed: u64, heldout: &[bool], generated: bool) -> RunRecord {
        let mut cases = vec![CaseResult {
            name: "sample".into(),
            correct: true,
            detail: None,
        }];
        cases.extend(heldout.iter().enumerate().map(|(i, ok)| CaseResult {
            name: format!("h{i}"),
            correct: *ok,
            detail: None,
        }));
        RunRecord {
            task: task.into(),
            split: Split::Test,
            seed,
            generated,
            reason: String::new(),
            timed_out: false,
            test_runs: 3,
            model_calls: 9,
            input_tokens: 1_000,
            output_tokens: 200,
            cached_tokens: Some(500),
            seconds: 100.0,
            cases,
            tried: Vec::new(),
            verdicts: Vec::new(),
        }
    }

    #[test]
    fn runs_pair_by_task_and_seed_and_only_pairs_count() {
        let before = EvalReport::new(
            json!({"candidates": 1, "model": "m"}),
            vec![
                run("a", 1, &[false, false], false),
                run("b", 1, &[true], true),
                run("c", 1, &[false], false),
            ],
        );
        let after = EvalReport::new(
            json!({"candidates": 3, "model": "m", "trace": true}),
            vec![
                run("a", 1, &[true, true], true),
                run("b", 1, &[false], true),
                run("a", 2, &[true, true], true),
            ],
        );
        let mut before = before;
        // Run `a` before: wrong, but its first test run's script was right.
        before.runs[0].tried = vec![crate::score::TriedScript {
            script: "iterations/1/solution.py".into(),
            cases: run("a", 1, &[true, true], false).cases,
        }];
        // and its diagnosis blamed the test, which the reference passes.
        before.runs[0].verdicts = vec![crate::verdicts::Verdict {
            iteration: 1,
            test_id: "test_solution.py::test_total".into(),
            diagnosed: "test_error".into(),
            routed: "test_error".into(),
            reference_passed: Some(true),
        }];
        let paired = pair(&before, &after);
        assert_eq!(paired.pairs.len(), 2);
        assert_eq!(
            (paired.before.diagnoses_right, paired.before.verdicts),
            (0, 1)
        );
        assert_eq!(
            (
                paired.before.some_script_correct,
                paired.after.some_script_correct
            ),
            (2, 1)
        );
        assert_eq!(
            (paired.before.heldout_correct, paired.after.heldout_correct),
            (1, 1)
        );
        assert_eq!((paired.before.cases_right, paired.before.cases), (1, 3));
        assert_eq!((paired.after.cases_right, paired.after.cases), (2, 3));
        assert_eq!(paired.only_before, [("c".to_owned(), 1)]);
        assert_eq!(paired.only_after, [("a".to_owned(), 2)]);
        assert_eq!(
            paired.settings_changed.keys().collect::<Vec<_>>(),
            ["candidates", "trace"]
        );
        let table = render_pairs(&paired);
        assert!(
            table.contains("wrong 0/2, tests fail, 3 runs, 9 calls, 1200 tok, 100 s"),
            "{table}"
        );
        assert!(
            table.contains(
                "before  right 1/2 (some tested script 2/2), held-out cases 1/3, tests passed 1/2"
            ),
            "{table}"
        );
        assert!(table.contains("50.0% cached"), "{table}");
        assert!(table.contains("s; diagnoses right 0/1\n"), "{table}");
        assert_eq!(table.matches("diagnoses right").count(), 1, "{table}");
        assert!(
            table.contains("right after only: a seed 1; right before only: b seed 1"),
            "{table}"
        );
        assert!(
            table.contains("before only c seed 1; after only a seed 2"),
            "{table}"
        );
        assert!(table.contains("setting candidates: 1 -> 3"), "{table}");
        assert!(table.contains("setting trace: null -> true"), "{table}");
    }
}
