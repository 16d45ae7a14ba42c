"""How well an auditor's verdicts predict human decisions (plain Python).

The positive class is "should not be approved": a human rejected the task or asked for
changes; the auditor predicts it when it raised a finding of medium or high severity. Beside
the auditor's scores stand two baselines a useful auditor must beat: always approving (never
flags; recall 0, kappa 0) and flagging at random at the auditor's own rate (expected
precision = prevalence, recall = that rate, kappa 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Scores:
    n: int
    true_positive: float
    false_positive: float
    false_negative: float
    true_negative: float
    precision: float | None
    recall: float | None
    accuracy: float | None
    kappa: float | None
    flag_rate: float | None

    def as_dict(self) -> dict:
        return {
            key: (round(value, 4) if isinstance(value, float) else value)
            for key, value in asdict(self).items()
        }


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def scores_from_counts(tp: float, fp: float, fn: float, tn: float) -> Scores:
    n = tp + fp + fn + tn
    if not n:
        return Scores(0, 0, 0, 0, 0, None, None, None, None, None)
    observed = (tp + tn) / n
    predicted_yes, actual_yes = (tp + fp) / n, (tp + fn) / n
    expected = predicted_yes * actual_yes + (1 - predicted_yes) * (1 - actual_yes)
    kappa = (observed - expected) / (1 - expected) if expected < 1 else None
    return Scores(
        n=round(n),
        true_positive=tp,
        false_positive=fp,
        false_negative=fn,
        true_negative=tn,
        precision=_ratio(tp, tp + fp),
        recall=_ratio(tp, tp + fn),
        accuracy=observed,
        kappa=kappa,
        flag_rate=predicted_yes,
    )


def score(predicted: Mapping[int, bool], actual: Mapping[int, bool]) -> Scores:
    """Scores of `predicted` (True: should not be approved) against `actual`, over the ids of
    `actual` (an id the auditor never looked at counts as not flagged)."""
    tp = fp = fn = tn = 0
    for key, truth in actual.items():
        guess = bool(predicted.get(key, False))
        if guess and truth:
            tp += 1
        elif guess:
            fp += 1
        elif truth:
            fn += 1
        else:
            tn += 1
    return scores_from_counts(tp, fp, fn, tn)


def always_approve(actual: Mapping[int, bool]) -> Scores:
    return score({}, actual)


def random_flagging(actual: Mapping[int, bool], flag_rate: float) -> Scores:
    """The expected scores of flagging each task at random with probability `flag_rate`."""
    n = len(actual)
    positives = sum(1 for truth in actual.values() if truth)
    negatives = n - positives
    return scores_from_counts(
        flag_rate * positives,
        flag_rate * negatives,
        (1 - flag_rate) * positives,
        (1 - flag_rate) * negatives,
    )
