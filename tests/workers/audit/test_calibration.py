"""Precision, recall and Cohen's kappa of "should not be approved", and the baselines."""

import pytest

from workers.audit.calibration import always_approve, random_flagging, score


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
