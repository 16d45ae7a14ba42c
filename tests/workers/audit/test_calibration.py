"""Precision, recall and Cohen's kappa of "should not be approved", the three baselines, the
seeded bootstrap intervals and the verdict, on examples worked by hand in the comments."""

import json

import pytest

from workers.audit.calibration import (
    Settings,
    always_approve,
    always_flag,
    calibrate,
    kappa_from_counts,
    random_flagging,
    score,
    tidy,
)


def test_perfect_agreement():
    actual = {1: True, 2: False, 3: True, 4: False}
    result = score(dict(actual), actual)
    assert (result.precision, result.recall, result.kappa, result.accuracy) == (1, 1, 1, 1)


def test_a_worked_example():
    # 10 tasks, 4 not approved by humans; the auditor flags 5, 3 of them rightly.
    actual = {i: i < 4 for i in range(10)}
    predicted = {0: True, 1: True, 2: True, 4: True, 5: True}
    result = score(predicted, actual)
    assert (result.true_positive, result.false_positive) == (3, 2)
    assert (result.false_negative, result.true_negative) == (1, 4)
    assert result.precision == pytest.approx(0.6)
    assert result.recall == pytest.approx(0.75)
    # p_o = 0.7; p_e = 0.5*0.4 + 0.5*0.6 = 0.5; kappa = 0.2 / 0.5
    assert result.kappa == pytest.approx(0.4)
    assert result.flag_rate == pytest.approx(0.5)


def test_the_baselines():
    actual = {i: i < 4 for i in range(10)}
    approve = always_approve(actual)
    assert approve.precision is None  # it never says "do not approve"
    assert approve.recall == 0 and approve.kappa == 0
    assert approve.accuracy == pytest.approx(0.6)
    chance = random_flagging(actual, 0.5)
    assert chance.precision == pytest.approx(0.4)  # the prevalence
    assert chance.recall == pytest.approx(0.5)  # the flag rate
    assert chance.kappa == pytest.approx(0.0)


def test_degenerate_cases_give_none_or_zero_rather_than_a_division_by_zero():
    assert score({}, {}).as_dict()["precision"] is None
    assert score({}, {}).kappa is None  # no decisions: nothing to say
    unanimous = score({1: True, 2: True}, {1: True, 2: True})
    # Chance agreement is already 1: no agreement beyond chance can be shown, so kappa is 0.
    assert unanimous.kappa == 0


# --- calibrate(): baselines, intervals and verdicts, worked by hand --------------------------

LENIENT = Settings(min_decisions=5)


def _units(rows):
    """(task, turned down by the human, flagged by the auditor) from compact tuples."""
    return [(task, bool(down), bool(flag)) for task, down, flag in rows]


# Ten decisions on ten tasks. Humans turned down tasks 0-3; the auditor flagged 0, 1, 2, 4, 5.
#
#   task       0 1 2 3 4 5 6 7 8 9
#   human      x x x x . . . . . .     (x: rejected or changes requested)
#   auditor    F F F . F F . . . .     (F: a medium/high finding)
#
#   tp = 3 (0,1,2)  fp = 2 (4,5)  fn = 1 (3)  tn = 4 (6..9)      n = 10
#   precision 3/5 = 0.6   recall 3/4 = 0.75   accuracy 7/10 = 0.7
#   prevalence p = 4/10 = 0.4   flag rate r = 5/10 = 0.5
#   kappa = 2(tp·tn - fp·fn) / ((tp+fp)(fp+tn) + (tp+fn)(fn+tn))
#         = 2(12 - 2) / (5·6 + 4·5) = 20/50 = 0.4
#   always approve: tp 0 fp 0 fn 4 tn 6 → accuracy 0.6, kappa 0 → Δaccuracy +0.1
#   always flag:    tp 4 fp 6 fn 0 tn 0 → accuracy 0.4, kappa 0 → Δaccuracy +0.3
#   random at r=0.5: expected (r·P, r·N, (1-r)·P, (1-r)·N) = (2, 3, 2, 3)
#                    accuracy r·p + (1-r)(1-p) = 0.2 + 0.3 = 0.5 → Δaccuracy +0.2
#   Δkappa is +0.4 against each (every baseline's kappa is 0).
WORKED = _units(
    [
        *[(0, 1, 1), (1, 1, 1), (2, 1, 1), (3, 1, 0), (4, 0, 1)],
        *[(5, 0, 1), (6, 0, 0), (7, 0, 0), (8, 0, 0), (9, 0, 0)],
    ]
)


def test_it_scores_the_worked_example_and_its_three_baselines():
    report = calibrate(WORKED, settings=LENIENT)
    got = {k: report[k] for k in ("n", "tasks", "positives", "prevalence", "flag_rate")}
    assert got == {"n": 10, "tasks": 10, "positives": 4, "prevalence": 0.4, "flag_rate": 0.5}
    assert (report["precision"], report["recall"]) == (0.6, 0.75)
    assert (report["accuracy"], report["kappa"]) == (0.7, 0.4)
    bases = report["baselines"]
    assert (bases["always_approve"]["accuracy"], bases["always_approve"]["kappa"]) == (0.6, 0)
    assert (bases["always_flag"]["accuracy"], bases["always_flag"]["recall"]) == (0.4, 1)
    assert bases["random"]["true_positive"] == 2 and bases["random"]["false_positive"] == 3
    assert (bases["random"]["accuracy"], bases["random"]["kappa"]) == (0.5, 0)
    deltas = {name: base["difference"]["accuracy"]["value"] for name, base in bases.items()}
    assert deltas == {"always_approve": 0.1, "always_flag": 0.3, "random": 0.2}
    assert {b["difference"]["kappa"]["value"] for b in bases.values()} == {0.4}
    # Ten decisions cannot tell 0.7 from 0.6: the interval of Δ vs always-approve holds 0.
    gap = bases["always_approve"]["difference"]["accuracy"]["ci"]
    assert gap["low"] < 0 < gap["high"]
    assert report["verdict"] == "ties"
    low, high = report["ci"]["kappa"]["low"], report["ci"]["kappa"]["high"]
    assert low < 0.4 < high


def test_it_says_not_enough_decisions_below_the_minimum_however_good_the_figures():
    # Three decisions, all right: accuracy 1, kappa 2(1·2 - 0)/((1)(2) + (1)(2)) = 4/4 = 1.
    perfect = _units([(1, 1, 1), (2, 0, 0), (3, 0, 0)])
    report = calibrate(perfect, settings=Settings(min_decisions=30))
    assert (report["accuracy"], report["kappa"]) == (1, 1)
    assert report["verdict"] == "not_enough_decisions"
    assert report["verdict_text"] == "not enough decisions"
    empty = calibrate([], settings=Settings())
    assert empty["n"] == 0 and empty["kappa"] is None and empty["ci"]["kappa"] is None
    assert empty["verdict"] == "not_enough_decisions"


def test_it_defines_kappa_as_zero_when_everyone_agrees_on_one_class():
    # Five approvals, never flagged: every decision in tn. p_o = 1 and p_e = 1, so
    # (p_o - p_e) / (1 - p_e) is 0/0; the closed form's denominator (0·5 + 0·5) is 0 as well.
    # Defined as 0: no agreement beyond chance can be shown, and always-approve is as good.
    agree = _units([(i, 0, 0) for i in range(5)])
    report = calibrate(agree, settings=LENIENT)
    assert (report["accuracy"], report["kappa"], report["prevalence"]) == (1, 0, 0)
    assert report["precision"] is None and report["recall"] is None
    approve = report["baselines"]["always_approve"]
    assert approve["accuracy"] == 1 and approve["difference"]["accuracy"]["value"] == 0
    # Every resample is the same five approvals: the interval is a point.
    assert report["ci"]["kappa"] == {"low": 0, "high": 0}
    assert approve["difference"]["accuracy"]["ci"] == {"low": 0, "high": 0}
    assert report["verdict"] == "ties"
    # The mirror image: all turned down and all flagged ties with always-flag.
    flagged = calibrate(_units([(i, 1, 1) for i in range(5)]), settings=LENIENT)
    assert (flagged["kappa"], flagged["verdict"]) == (0, "ties")
    assert flagged["baselines"]["always_flag"]["difference"]["accuracy"]["value"] == 0


def test_it_finds_that_a_clear_win_beats_every_baseline_and_a_clear_loss_loses():
    # 40 tasks, 20 turned down: an auditor right every time has accuracy 1 and kappa 1. In any
    # resample, Δ vs always-approve is the resample's prevalence, vs always-flag 1 - prevalence,
    # vs random 2p(1 - p): all above 0 unless a resample has a single class (chance 2·0.5^40).
    right = _units([(i, i % 2, i % 2) for i in range(40)])
    report = calibrate(right, settings=Settings())
    assert (report["accuracy"], report["kappa"]) == (1, 1)
    assert report["verdict"] == "beats_every_baseline"
    for base in report["baselines"].values():
        assert base["difference"]["accuracy"]["ci"]["low"] > 0
        assert base["difference"]["kappa"]["ci"]["low"] > 0
    # Wrong every time: accuracy 0, kappa 2(0 - 20·20)/(20·20 + 20·20) = -1.
    wrong = calibrate(_units([(i, i % 2, 1 - i % 2) for i in range(40)]), settings=Settings())
    assert (wrong["accuracy"], wrong["kappa"], wrong["verdict"]) == (0, -1, "loses")


def test_it_puts_the_random_baseline_at_the_unrounded_flag_rate():
    # Three decisions, two turned down, one flagged: r = 1/3 exactly (0.3333 when rounded).
    # Expected tp = r·P = 2/3; accuracy = r·p + (1 - r)(1 - p) = 2/9 + 2/9 = 4/9.
    report = calibrate(_units([(1, 1, 1), (2, 1, 0), (3, 0, 0)]), settings=LENIENT)
    random = report["baselines"]["random"]
    assert random["true_positive"] == round(2 / 3, 4)
    assert random["accuracy"] == round(4 / 9, 4)
    # The same figure from the exact rate, unrounded (a rate of 0.3333 gives 0.44442...).
    assert random_flagging({1: True, 2: True, 3: False}, 1 / 3).accuracy == pytest.approx(4 / 9)


def test_it_reproduces_intervals_from_the_seed():
    first = calibrate(WORKED, settings=LENIENT)
    assert calibrate(WORKED, settings=LENIENT) == first
    other = calibrate(WORKED, settings=Settings(min_decisions=5, seed=7))
    assert other["accuracy"] == first["accuracy"]  # the figures do not depend on the seed


def test_it_resamples_decisions_on_one_task_together():
    # Two reviewers who agree on each task add no independent evidence: resampling tasks, the
    # accuracy of every resample is unchanged by the duplication, so is its interval. Counted
    # as twenty separate tasks instead, the interval would narrow.
    doubled = [unit for unit in WORKED for _ in range(2)]
    single = calibrate(WORKED, settings=LENIENT)
    together = calibrate(doubled, settings=LENIENT)
    assert (together["n"], together["tasks"]) == (20, 10)
    assert together["ci"]["accuracy"] == single["ci"]["accuracy"]
    apart = calibrate(
        [(f"{task}-{i}", down, flag) for i, (task, down, flag) in enumerate(doubled)],
        settings=LENIENT,
    )
    width = lambda ci: ci["high"] - ci["low"]  # noqa: E731
    assert width(apart["ci"]["accuracy"]) < width(single["ci"]["accuracy"])


def test_it_never_prints_kappa_as_minus_zero():
    assert str(tidy(-0.00001)) == "0.0"
    assert kappa_from_counts(0, 0, 4, 6) == 0  # always approve: 2(0·6 - 0·4) / (0 + 4·10)
    assert str(always_flag({1: True, 2: False}).as_dict()["kappa"]) == "0.0"
    text = json.dumps(calibrate(_units([(1, 1, 0), (2, 0, 0), (3, 1, 0)]), settings=LENIENT))
    assert "-0.0," not in text and "-0.0}" not in text
