"""A dataset with audited tasks and human decisions, blind and informed, for calibration tests.

Every task gets one real audit (`audit_record`) before its decisions, so each decision meets the
set of its revision; the verdicts and decisions follow a fixed plan, so the figures are known.
"""

from __future__ import annotations

from curation.models import Finding, Task
from curation.services.audit import audit_record
from tests.curation.release_helpers import review
from tests.factories import TaskFactory, UserFactory
from workers.audit.facts import AuditResult, FindingDraft


def audited_task(dataset, *, flag: bool, dismissed: bool = False) -> Task:
    task = TaskFactory(dataset=dataset)
    drafts = (
        [FindingDraft(kind="weak_test", severity="high", message="an empty patch passes", key="w")]
        if flag or dismissed
        else []
    )
    audit_record(task=task, result=AuditResult(findings=drafts, unsafe=set()), llm=None, job=None)
    if dismissed:
        Finding.objects.filter(task=task).update(dismissed=True)
    return task


def seed_calibration(dataset, *, blind: int = 32, informed: int = 12) -> dict[str, int]:
    """`blind` blind decisions and `informed` informed ones, one per task. On the blind ones the
    agent is right seven times in eight; on the informed ones it is right two times in three, and
    one task has a dismissed finding. Returns the counts of each kind of decision."""
    blind_reviewer = UserFactory(username="blindfold", roles=["reviewer"])
    informed_reviewer = UserFactory(username="onlooker", roles=["reviewer"])
    dataset.members.add(blind_reviewer, informed_reviewer)
    counts = {"blind": 0, "informed": 0}
    for i in range(blind):
        turned_down = i % 2 == 0
        right = i % 8 != 7
        task = audited_task(dataset, flag=turned_down == right)
        review(task, blind_reviewer, "reject" if turned_down else "approve", blind=True)
        counts["blind"] += 1
    for i in range(informed):
        turned_down = i % 3 == 0
        right = i % 3 != 2
        task = audited_task(dataset, flag=turned_down == right, dismissed=i == 4)
        review(task, informed_reviewer, "request_changes" if turned_down else "approve")
        counts["informed"] += 1
    return counts
