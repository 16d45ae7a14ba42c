"""Whether an auditor's verdicts predict human decisions better than trivial rules (plain Python).

The positive class is "should not be approved": a human rejected the task or asked for changes;
the auditor predicts it when it raised a finding of medium or high severity. The unit is one
human decision. Beside the auditor's scores stand the baselines it must beat, on the same
decisions:

- always approve: never flags (recall 0, accuracy = 1 - prevalence, kappa 0);
- always flag: flags everything (recall 1, accuracy = prevalence, kappa 0);
- random at the auditor's own flag rate r (unrounded): the closed-form expectation, i.e. the
  confusion table (r·P, r·N, (1-r)·P, (1-r)·N); accuracy r·p + (1-r)(1-p), kappa 0.

Cohen's kappa (2x2) is 2(tp·tn - fp·fn) / ((tp+fp)(fp+tn) + (tp+fn)(fn+tn)). It is 0/0 when
there is no variance: every decision and every verdict fall in one agreeing cell (all approved
and never flagged, or all turned down and all flagged). Then chance agreement is already 1 and
no agreement beyond chance can be shown, so kappa is defined as 0 — the same as the baselines,
which is what such a sample says about the auditor.

Uncertainty: a percentile bootstrap (seeded, so the same data always give the same interval)
that resamples *tasks* with their decisions, since decisions on one task share its findings.
Every resample recomputes the auditor's and the baselines' figures (the random baseline at that
resample's own flag rate), so each difference is paired. Verdict, once there are at least
`min_decisions` decisions: "beats every baseline" when the lower bound of the difference in
accuracy and in kappa is above zero for every baseline; "loses" when some baseline is better
with the upper bound below zero; otherwise "ties".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import asdict, dataclass

import numpy as np

BASELINES = {
    "always_approve": "always approve",
    "always_flag": "always flag",
    "random": "random at the row's flag rate",
}
METRICS = ("accuracy", "kappa")
BEATS = "beats_every_baseline"
TIES = "ties"
LOSES = "loses"
NOT_ENOUGH = "not_enough_decisions"
VERDICT_TEXT = {
    BEATS: "beats every baseline",
    TIES: "ties with a baseline",
    LOSES: "loses to a baseline",
    NOT_ENOUGH: "not enough decisions",
}


def tidy(value: float | None, places: int = 4) -> float | None:
    """Rounded for display; never -0.0 (a kappa of -0.00001 is 0, not "-0.0")."""
    if value is None:
        return None
    return round(float(value), places) + 0.0


def kappa_from_counts(tp: float, fp: float, fn: float, tn: float) -> float | None:
    """Cohen's kappa of a 2x2 table; 0 without variance (see the module), None without data."""
    if not tp + fp + fn + tn:
        return None
    denominator = (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)
    if not denominator:
        return 0.0
    value = 2 * (tp * tn - fp * fn) / denominator
    # The random baseline's expected table gives 0 up to rounding error.
    return 0.0 if abs(value) < 1e-12 else value


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
            key: (tidy(value) if isinstance(value, float) else value)
            for key, value in asdict(self).items()
        }


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def scores_from_counts(tp: float, fp: float, fn: float, tn: float) -> Scores:
    n = tp + fp + fn + tn
    if not n:
        return Scores(0, 0, 0, 0, 0, None, None, None, None, None)
    return Scores(
        n=round(n),
        true_positive=tp,
        false_positive=fp,
        false_negative=fn,
        true_negative=tn,
        precision=_ratio(tp, tp + fp),
        recall=_ratio(tp, tp + fn),
        accuracy=(tp + tn) / n,
        kappa=kappa_from_counts(tp, fp, fn, tn),
        flag_rate=(tp + fp) / n,
    )


def _cells(predicted: bool, actual: bool) -> tuple[int, int, int, int]:
    return (
        int(predicted and actual),
        int(predicted and not actual),
        int(actual and not predicted),
        int(not predicted and not actual),
    )


def score(predicted: Mapping[int, bool], actual: Mapping[int, bool]) -> Scores:
    """Scores of `predicted` (True: should not be approved) against `actual`, over the ids of
    `actual` (an id the auditor never looked at counts as not flagged)."""
    tp = fp = fn = tn = 0
    for key, truth in actual.items():
        a, b, c, d = _cells(bool(predicted.get(key, False)), truth)
        tp, fp, fn, tn = tp + a, fp + b, fn + c, tn + d
    return scores_from_counts(tp, fp, fn, tn)


def _split(actual: Mapping[int, bool]) -> tuple[int, int]:
    positives = sum(1 for truth in actual.values() if truth)
    return positives, len(actual) - positives


def always_approve(actual: Mapping[int, bool]) -> Scores:
    positives, negatives = _split(actual)
    return scores_from_counts(0, 0, positives, negatives)


def always_flag(actual: Mapping[int, bool]) -> Scores:
    positives, negatives = _split(actual)
    return scores_from_counts(positives, negatives, 0, 0)


def random_flagging(actual: Mapping[int, bool], flag_rate: float) -> Scores:
    """The expected scores of flagging each decision at random with probability `flag_rate`."""
    positives, negatives = _split(actual)
    return _random_from(positives, negatives, flag_rate)


def _random_from(positives: float, negatives: float, rate: float) -> Scores:
    return scores_from_counts(
        rate * positives, rate * negatives, (1 - rate) * positives, (1 - rate) * negatives
    )


# --- calibration with intervals and a verdict -------------------------------------------------


@dataclass(frozen=True)
class Settings:
    min_decisions: int = 30
    resamples: int = 2000
    seed: int = 19
    confidence: float = 0.95

    def as_dict(self) -> dict:
        return asdict(self)


def _kappa_vector(tp, fp, fn, tn):
    denominator = (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)
    safe = np.where(denominator > 0, denominator, 1)
    value = np.where(denominator > 0, 2 * (tp * tn - fp * fn) / safe, 0.0)
    return np.where(np.abs(value) < 1e-12, 0.0, value)


def _bootstrap(
    units: list[tuple[Hashable, bool, bool]], settings: Settings
) -> dict[str, np.ndarray]:
    """Figures of every resample of tasks. Tasks with the same decisions and verdicts are
    interchangeable, so drawing tasks with replacement is a multinomial draw over the distinct
    patterns (exact, and fast for any number of tasks)."""
    per_task: dict[Hashable, list[int]] = {}
    for cluster, actual, flagged in units:
        cells = per_task.setdefault(cluster, [0, 0, 0, 0])
        for index, value in enumerate(_cells(flagged, actual)):
            cells[index] += value
    patterns = Counter(tuple(cells) for cells in per_task.values())
    # Sorted, so the same data meet the random stream in the same order on every run.
    shapes = sorted(patterns)
    tasks = len(per_task)
    weights = np.array([patterns[shape] / tasks for shape in shapes])
    rng = np.random.Generator(np.random.PCG64(settings.seed))
    draws = rng.multinomial(tasks, weights, size=settings.resamples)
    counts = draws @ np.array(shapes, dtype=float)
    tp, fp, fn, tn = (counts[:, i] for i in range(4))
    n = tp + fp + fn + tn
    positives, negatives = tp + fn, fp + tn
    prevalence, rate = positives / n, (tp + fp) / n
    zero = np.zeros_like(n)
    return {
        "accuracy": (tp + tn) / n,
        "kappa": _kappa_vector(tp, fp, fn, tn),
        "always_approve.accuracy": 1 - prevalence,
        "always_approve.kappa": _kappa_vector(zero, zero, positives, negatives),
        "always_flag.accuracy": prevalence,
        "always_flag.kappa": _kappa_vector(positives, negatives, zero, zero),
        "random.accuracy": rate * prevalence + (1 - rate) * (1 - prevalence),
        "random.kappa": _kappa_vector(
            rate * positives, rate * negatives, (1 - rate) * positives, (1 - rate) * negatives
        ),
    }


def _interval(values: np.ndarray, confidence: float) -> dict[str, float]:
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return {"low": tidy(low), "high": tidy(high)}


def verdict_of(differences: Iterable[dict], *, n: int, min_decisions: int) -> str:
    """The verdict from each difference's interval (see the module)."""
    if n < min_decisions or n == 0:
        return NOT_ENOUGH
    intervals = [d["ci"] for d in differences]
    if any(ci["high"] < 0 for ci in intervals):
        return LOSES
    if all(ci["low"] > 0 for ci in intervals):
        return BEATS
    return TIES


def calibrate(
    units: Iterable[tuple[Hashable, bool, bool]], *, settings: Settings | None = None
) -> dict:
    """The report of one auditor over its decisions: `units` are (task, turned down by the
    human, flagged by the auditor), one per decision. JSON-ready (rounded to 4 places)."""
    settings = settings or Settings()
    units = list(units)
    tp = fp = fn = tn = 0
    for _, actual, flagged in units:
        a, b, c, d = _cells(flagged, actual)
        tp, fp, fn, tn = tp + a, fp + b, fn + c, tn + d
    n = len(units)
    positives, negatives = tp + fn, fp + tn
    own = scores_from_counts(tp, fp, fn, tn)
    rate = own.flag_rate or 0.0  # unrounded: the random baseline's rate
    baselines = {
        "always_approve": scores_from_counts(0, 0, positives, negatives),
        "always_flag": scores_from_counts(positives, negatives, 0, 0),
        "random": _random_from(positives, negatives, rate),
    }
    samples = _bootstrap(units, settings) if n else None
    report = {
        **own.as_dict(),
        "tasks": len({cluster for cluster, _, _ in units}),
        "positives": positives,
        "prevalence": tidy(positives / n) if n else None,
        "ci": {
            metric: _interval(samples[metric], settings.confidence) if samples else None
            for metric in METRICS
        },
        "baselines": {},
    }
    differences = []
    for name, base in baselines.items():
        entry = {"label": BASELINES[name], **base.as_dict(), "difference": {}}
        for metric in METRICS:
            mine, theirs = getattr(own, metric), getattr(base, metric)
            difference = {
                "value": tidy(mine - theirs) if mine is not None and theirs is not None else None,
                "ci": _interval(samples[metric] - samples[f"{name}.{metric}"], settings.confidence)
                if samples
                else None,
            }
            entry["difference"][metric] = difference
            differences.append(difference)
        report["baselines"][name] = entry
    verdict = verdict_of(differences, n=n, min_decisions=settings.min_decisions)
    report["verdict"] = verdict
    report["verdict_text"] = VERDICT_TEXT[verdict]
    return report
