//! Several scripts for one plan (`--candidates K`): each runs on the samples, candidates that
//! computed the same outputs form a group, and the tests run against one script of each group.
//! The script that passes the most tests is kept (ties: the larger group, then the one whose
//! outputs agree most with the other candidates', then the earlier script); when it still fails,
//! the diagnosis sees what the other groups computed, with their code, since the tests'
//! hand-computed expectations and the other scripts cannot both be right.

use std::collections::BTreeSet;

use super::Session;
use crate::protocol::{Action, Candidate, CandidateOutput, Disagreement, OtherCandidates, TestRun};

/// Other groups a diagnosis is shown at most (each brings a whole script).
const SHOWN_GROUPS: usize = 2;

/// Scripts of one plan on their way to the tests.
#[derive(Debug, Clone, Default)]
pub(super) struct Selection {
    candidates: Vec<Candidate>,
    /// What each computed, once run.
    outputs: Option<Vec<CandidateOutput>>,
    /// Candidates (indices) that computed the same outputs, largest group first; only groups
    /// whose candidates ran to the end, and each candidate that could not be run on the samples.
    groups: Vec<Vec<usize>>,
    /// The packages the session had before the candidates added theirs.
    packages_before: BTreeSet<String>,
    system_packages_before: BTreeSet<String>,
}

impl Session {
    /// The action a script from scratch takes: one script, or `limits.candidates` of them.
    pub(super) fn write_code(&self, notes: Vec<String>) -> Action {
        if self.limits.candidates > 1 {
            return Action::WriteCandidates {
                notes,
                count: self.limits.candidates,
            };
        }
        Action::WriteCode { notes }
    }

    /// The candidates' next step, if they are still being chosen among: run them on the
    /// samples (once the environment exists), then test each group's script (once the tests
    /// exist).
    pub(super) fn selection_action(&self) -> Option<Action> {
        let selection = self.selection.as_ref()?;
        if selection.outputs.is_none() {
            return Some(Action::RunCandidates {
                scripts: selection
                    .candidates
                    .iter()
                    .map(|c| c.code.clone())
                    .collect(),
            });
        }
        self.tests.as_ref()?;
        Some(Action::TestCandidates {
            scripts: selection
                .groups
                .iter()
                .map(|group| selection.candidates[group[0]].code.clone())
                .collect(),
        })
    }

    pub(super) fn on_candidates_written(&mut self, candidates: Vec<Candidate>) {
        let Some(first) = candidates.first() else {
            self.abort("no candidate script was written".to_owned());
            return;
        };
        self.code = Some(first.code.clone());
        self.previous_code = None;
        self.anchors.clear();
        let selection = Selection {
            packages_before: self.packages.clone(),
            system_packages_before: self.system_packages.clone(),
            candidates,
            ..Selection::default()
        };
        for candidate in &selection.candidates {
            self.add_packages(candidate.packages.clone());
            self.add_system_packages(&candidate.system_packages);
        }
        self.selection = Some(selection);
    }

    pub(super) fn on_candidates_ran(&mut self, outputs: Vec<CandidateOutput>) {
        let Some(selection) = self.selection.as_mut() else {
            return;
        };
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (index, output) in outputs.iter().enumerate().take(selection.candidates.len()) {
            // A script that could not be run on the samples is a group of its own: the
            // tests choose.
            if output.not_runnable {
                groups.push(vec![index]);
                continue;
            }
            if !output.ok {
                continue;
            }
            match groups
                .iter_mut()
                .find(|group| outputs[group[0]].digest == output.digest)
            {
                Some(group) => group.push(index),
                None => groups.push(vec![index]),
            }
        }
        order_groups(&mut groups, &outputs);
        let written = selection.candidates.len();
        let crashed = written - groups.iter().map(Vec::len).sum::<usize>();
        selection.outputs = Some(outputs);
        selection.groups = groups;
        let sizes: Vec<String> = selection
            .groups
            .iter()
            .map(|g| g.len().to_string())
            .collect();
        let unrunnable = outputs_unrunnable(selection);
        let change = if unrunnable > 0 {
            format!(
                "code: {unrunnable} of {written} candidates could not be run on the samples (an input has no sample): the tests choose"
            )
        } else {
            format!(
                "code: {written} candidates ran on the samples: {} group(s) of equal outputs ({}), {crashed} failed",
                selection.groups.len(),
                sizes.join(", ")
            )
        };
        self.note(change);
        // One group (or none that ran to the end), or no tests to come: nothing to choose by
        // the tests; the largest group's script is kept.
        if self.limits.skip_tests || self.selection.as_ref().is_some_and(|s| s.groups.len() <= 1) {
            let chosen = self
                .selection
                .as_ref()
                .and_then(|s| s.groups.first().map(|g| g[0]))
                .unwrap_or(0);
            self.keep_candidate(chosen, true);
        }
    }

    pub(super) fn on_candidates_tested(&mut self, runs: &[TestRun]) {
        let Some(selection) = self.selection.as_ref() else {
            return;
        };
        let groups = selection.groups.clone();
        let scored: Vec<(usize, &TestRun)> = groups.iter().map(|g| g[0]).zip(runs).collect();
        let Some(&(best, best_run)) = scored.iter().min_by_key(|(candidate, run)| {
            let size = groups
                .iter()
                .find(|g| g[0] == *candidate)
                .map_or(0, Vec::len);
            (
                std::cmp::Reverse(run.passed().count()),
                run.failures().count(),
                std::cmp::Reverse(size),
            )
        }) else {
            self.keep_candidate(0, true);
            return;
        };
        let best_run = best_run.clone();
        let disagreement = (!best_run.succeeded()).then(|| disagreement(selection, best, &scored));
        let passes: Vec<String> = scored
            .iter()
            .map(|(candidate, run)| {
                format!(
                    "{}: {} of {}",
                    candidate + 1,
                    run.passed().count(),
                    run.results.len()
                )
            })
            .collect();
        self.keep_candidate(best, !best_run.succeeded());
        self.on_tests_ran(&best_run);
        self.note(format!(
            "code: kept candidate {} (tests passed per group's script: {})",
            best + 1,
            passes.join(", ")
        ));
        if let Some(Action::Diagnose {
            disagreement: slot, ..
        }) = self.queue.back_mut()
        {
            *slot = disagreement.filter(|d| !d.others.is_empty());
        }
    }

    /// Makes candidate `index` the script. With `narrow`, the packages only the other
    /// candidates brought are dropped (the environment is built again before the next run);
    /// without, the environment the tests passed in stays the run's.
    fn keep_candidate(&mut self, index: usize, narrow: bool) {
        let Some(selection) = self.selection.take() else {
            return;
        };
        let Some(chosen) = selection.candidates.get(index) else {
            return;
        };
        self.code = Some(chosen.code.clone());
        if !narrow {
            return;
        }
        let others = selection
            .candidates
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .map(|(_, c)| c);
        let mut only_others: BTreeSet<String> = BTreeSet::new();
        let mut only_others_system: BTreeSet<String> = BTreeSet::new();
        for other in others {
            only_others.extend(
                other
                    .packages
                    .iter()
                    .filter(|p| {
                        !chosen.packages.contains(*p) && !selection.packages_before.contains(*p)
                    })
                    .cloned(),
            );
            only_others_system.extend(
                other
                    .system_packages
                    .iter()
                    .filter(|p| {
                        !chosen.system_packages.contains(*p)
                            && !selection.system_packages_before.contains(*p)
                    })
                    .cloned(),
            );
        }
        let before = self.packages.len() + self.system_packages.len();
        self.packages.retain(|p| !only_others.contains(p));
        self.system_packages
            .retain(|p| !only_others_system.contains(p));
        if self.packages.len() + self.system_packages.len() != before {
            self.env_ready = false;
        }
    }
}

/// Largest group first; among groups of one size, the one whose outputs share the most cells
/// with every other candidate that ran ([`crate::agreement`]); a stable sort keeps the earlier
/// script first among equals.
fn order_groups(groups: &mut [Vec<usize>], outputs: &[CandidateOutput]) {
    let cells: Vec<&[u64]> = outputs
        .iter()
        .map(|o| if o.ok { o.cells.as_slice() } else { &[] })
        .collect();
    let agreement = |group: &Vec<usize>| crate::agreement::agreement(group[0], &cells);
    groups.sort_by(|a, b| {
        b.len()
            .cmp(&a.len())
            .then_with(|| agreement(b).total_cmp(&agreement(a)))
    });
}

/// Candidates that could not be run on the samples.
fn outputs_unrunnable(selection: &Selection) -> usize {
    selection
        .outputs
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter(|o| o.not_runnable)
        .count()
}

/// What the groups other than the kept script's computed (those that ran), largest first.
fn disagreement(selection: &Selection, kept: usize, scored: &[(usize, &TestRun)]) -> Disagreement {
    let outputs = selection.outputs.as_deref().unwrap_or_default();
    let summary = |index: usize| {
        outputs
            .get(index)
            .map(|o| o.summary.clone())
            .unwrap_or_default()
    };
    let agreeing = selection
        .groups
        .iter()
        .find(|g| g[0] == kept)
        .map_or(1, Vec::len);
    let others = selection
        .groups
        .iter()
        .filter(|g| g[0] != kept && outputs.get(g[0]).is_some_and(|o| o.ok))
        .take(SHOWN_GROUPS)
        .map(|group| {
            let run = scored.iter().find(|(c, _)| *c == group[0]).map(|(_, r)| *r);
            OtherCandidates {
                count: group.len(),
                outputs: summary(group[0]),
                code: selection.candidates[group[0]].code.clone(),
                passed: run.map_or(0, |r| r.passed().count()),
                tests: run.map_or(0, |r| r.results.len()),
            }
        })
        .collect();
    Disagreement {
        written: selection.candidates.len(),
        agreeing,
        tested: summary(kept),
        others,
    }
}
