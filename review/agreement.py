"""How much reviewers agree: Krippendorff's alpha per rubric item, Cohen's kappa per pair, and
per reviewer the number of reviews, the median time per review and agreement with consensus.

A *unit* is one revision of one task; its ratings are the (non-adjudication) reviews of that
revision. Consensus for a unit is the adjudicator's decision if there is one, else what the
dataset's rule yields; units without consensus do not count towards agreement with it.
"""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from dataclasses import dataclass

import krippendorff
import numpy as np

from curation.access import visible_tasks
from curation.review_port import Decision
from review.models import Review
from review.services import consensus_of

ITEMS = [
    # (field, label, level of measurement)
    ("spec_clarity", "Spec clarity", "ordinal"),
    ("test_validity", "Test validity", "ordinal"),
    ("interdependency", "Interdependency", "ordinal"),
    ("difficulty", "Difficulty", "nominal"),
    ("decision", "Decision", "nominal"),
]
CODES = {
    "decision": {decision: code for code, decision in enumerate(Decision.values)},
    "difficulty": {"<15m": 0, "15m-1h": 1, "1-4h": 2, ">4h": 3},
}
MAX_REVIEWS = 20_000
# Digits of alpha and percent agreement wherever they are shown or stored.
ALPHA_DIGITS = 3


@dataclass
class ReviewerStats:
    reviewer: str
    reviews: int
    median_seconds: float | None
    agreed: int
    compared: int

    @property
    def agreement(self) -> float | None:
        return round(self.agreed / self.compared, 3) if self.compared else None


@dataclass
class PairKappa:
    a: str
    b: str
    shared: int
    kappa: float | None


def _code(item: str, value) -> float:
    return float(CODES[item][value]) if item in CODES else float(value)


def krippendorff_alpha(units: list[dict], level: str) -> float | None:
    """Krippendorff's alpha over units (rater -> coded value) rated by two or more raters.

    The one implementation: the agreement page, the dashboard and every release datasheet use
    it. None when alpha is undefined: no unit rated twice, or no variation at all (everyone gave
    the same value everywhere: expected disagreement is 0 and alpha is 0/0; percent agreement,
    reported beside it, says they agreed). Rounded to ALPHA_DIGITS.
    """
    rated = [unit for unit in units if len(unit) >= 2]
    if not rated:
        return None
    raters = sorted({rater for unit in rated for rater in unit})
    index = {rater: i for i, rater in enumerate(raters)}
    data = np.full((len(raters), len(rated)), np.nan)
    for j, unit in enumerate(rated):
        for rater, value in unit.items():
            data[index[rater], j] = value
    if len(np.unique(data[~np.isnan(data)])) < 2:
        return None
    try:
        result = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    except (ValueError, ZeroDivisionError):
        return None
    return None if np.isnan(result) else round(float(result), ALPHA_DIGITS)


def percent_agreement(units: list[dict]) -> float | None:
    """Share of agreeing pairs of ratings within units rated twice or more; None without pairs."""
    pairs = agreeing = 0
    for unit in units:
        for a, b in itertools.combinations(unit.values(), 2):
            pairs += 1
            agreeing += a == b
    return round(agreeing / pairs, ALPHA_DIGITS) if pairs else None


def item_figures(units: dict, item: str, level: str) -> dict:
    """Alpha and percent agreement of one rubric item over the units' ratings."""
    coded = [
        {name: _code(item, getattr(review, item)) for name, review in unit["ratings"].items()}
        for unit in units.values()
    ]
    return {
        "alpha": krippendorff_alpha(coded, level),
        "percent_agreement": percent_agreement(coded),
    }


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters' nominal labels; None when chance agreement is total."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    left = defaultdict(int)
    right = defaultdict(int)
    for a, b in pairs:
        left[a] += 1
        right[b] += 1
    expected = sum(left[k] * right.get(k, 0) for k in left) / (n * n)
    if expected >= 1:
        return 1.0 if observed == 1 else None
    return round((observed - expected) / (1 - expected), 3)


def _units(reviews) -> dict[tuple[int, int], dict]:
    """Reviews (newest first) grouped by task revision: each reviewer's last word, and the
    adjudicator's decision apart (it settles a disagreement, it is not a rating)."""
    units: dict[tuple[int, int], dict] = {}
    for review in reviews:
        unit = units.setdefault(
            (review.task_id, review.task_revision),
            {
                "ratings": {},
                "adjudicated": None,
                "rule": review.task.dataset.consensus,
                "required": review.task.dataset.reviews_required,
            },
        )
        name = review.reviewer.get_username()
        if review.is_adjudication:
            unit["adjudicated"] = review.decision
        else:
            unit["ratings"].setdefault(name, review)
    return units


def _newest_first(reviews):
    return reviews.select_related("reviewer", "task__dataset").order_by("-created_at", "-id")


def decision_agreement(*, dataset) -> dict:
    """Agreement on the decision over all of a dataset's reviews, for its release datasheet:
    the same units, alpha and rounding as the agreement page."""
    units = _units(_newest_first(Review.objects.filter(task__dataset=dataset)).iterator(2000))
    shared = {key: unit for key, unit in units.items() if len(unit["ratings"]) >= 2}
    figures = item_figures(shared, "decision", "nominal")
    return {
        "measure": "decision (approve / request_changes / reject), nominal",
        "items": len(shared),
        "reviews": sum(len(unit["ratings"]) for unit in shared.values()),
        "percent_agreement": figures["percent_agreement"],
        "krippendorff_alpha": figures["alpha"],
    }


def agreement_report(*, user, dataset=None) -> dict:
    reviews = _newest_first(Review.objects.filter(task__in=visible_tasks(user)))
    if dataset is not None:
        reviews = reviews.filter(task__dataset=dataset)
    units = _units(reviews[:MAX_REVIEWS])
    reviewers = sorted({n for u in units.values() for n in u["ratings"]})

    items = [
        {"field": f, "label": label, "level": level, **item_figures(units, f, level)}
        for f, label, level in ITEMS
    ]

    pairs = []
    for a, b in itertools.combinations(reviewers, 2):
        shared = [
            (u["ratings"][a].decision, u["ratings"][b].decision)
            for u in units.values()
            if a in u["ratings"] and b in u["ratings"]
        ]
        if shared:
            pairs.append(PairKappa(a=a, b=b, shared=len(shared), kappa=cohen_kappa(shared)))

    per: dict[str, dict] = {
        n: {"seconds": [], "reviews": 0, "agreed": 0, "compared": 0} for n in reviewers
    }
    for unit in units.values():
        decisions = [r.decision for r in unit["ratings"].values()]
        consensus = unit["adjudicated"]
        if consensus is None and len(decisions) >= unit["required"]:
            consensus = consensus_of(decisions, unit["rule"])
        for name, review in unit["ratings"].items():
            stats = per[name]
            stats["reviews"] += 1
            if review.seconds_spent is not None:
                stats["seconds"].append(review.seconds_spent)
            # A lone review agrees with itself: only shared or adjudicated units tell anything.
            if consensus is not None and (len(unit["ratings"]) >= 2 or unit["adjudicated"]):
                stats["compared"] += 1
                stats["agreed"] += review.decision == consensus
    reviewer_stats = [
        ReviewerStats(
            reviewer=name,
            reviews=s["reviews"],
            median_seconds=round(statistics.median(s["seconds"]), 1) if s["seconds"] else None,
            agreed=s["agreed"],
            compared=s["compared"],
        )
        for name, s in sorted(per.items())
    ]
    return {
        "items": items,
        "pairs": pairs,
        "reviewers": reviewer_stats,
        "units": len(units),
        "multi_rated": sum(1 for u in units.values() if len(u["ratings"]) >= 2),
        "reviews": sum(len(u["ratings"]) for u in units.values()),
    }
