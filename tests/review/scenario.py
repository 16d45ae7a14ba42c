"""A task with everything a reviewer looks at, built from the marktext fixture without a sandbox.

Specs, declared and observed edges, tests with their roles, the reference and test patches, two
trajectories (one with a long observation and one with hostile output), evaluations, findings.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from curation.models import (
    Evaluation,
    Finding,
    SpecDependency,
    Specification,
    SpecResult,
    Task,
    TestCase,
    Trajectory,
    TrajectoryStep,
)
from tests.factories import RepositoryFactory, TaskFactory

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "marktext_toc"
XSS = (
    '<script>document.body.dataset.pwned="1"</script>'
    '<img src=x onerror="document.body.dataset.pwned=1">'
)
ROLES = [
    "FAIL_TO_PASS",
    "FAIL_TO_PASS",
    "FAIL_TO_PASS",
    "FAIL_TO_PASS",
    "flaky",
    "PASS_TO_PASS",
    "PASS_TO_PASS",
]


def rich_task(
    *, dataset, validated: bool = True, status: str = Task.Status.NEEDS_REVIEW, **extra
) -> Task:
    spec = json.loads((FIXTURE / "task.json").read_text())
    repository = RepositoryFactory()
    task = TaskFactory(
        repository=repository,
        dataset=dataset,
        title=spec["title"],
        problem_statement=spec["problem_statement"],
        reference_patch=(FIXTURE / "reference.patch").read_text(),
        test_patch=(FIXTURE / "tests.patch").read_text(),
        status=status,
        origin=Task.Origin.PROCEDURAL,
        difficulty="15m-1h",
        interaction_score=0.2,
        **extra,
    )
    if validated:
        task.validated_revision = task.revision
        task.validation = {"verified": True, "reasons": [], "runs": [{}, {}], "seconds": 14.2}
        task.save()
    specs = {}
    for order, entry in enumerate(spec["specs"]):
        specs[entry["key"]] = Specification.objects.create(
            task=task,
            key=entry["key"],
            kind=entry["kind"],
            statement=entry["statement"],
            order=order,
            verified=validated,  # each has a FAIL_TO_PASS test once validated
        )
    for dep in spec["dependencies"]:
        SpecDependency.objects.create(
            task=task,
            from_spec=specs[dep["from"]],
            to_spec=specs[dep["to"]],
            relation=dep.get("relation", "depends-on"),
            evidence="declared",
        )
    SpecDependency.objects.create(
        task=task,
        from_spec=specs["S1"],
        to_spec=specs["S2"],
        relation="needs",
        evidence="observed",
        detail="test_toc_nests_headings fails without unique_slug",
    )
    SpecDependency.objects.create(
        task=task, from_spec=specs["S3"], to_spec=specs["S2"], relation="needs", evidence="observed"
    )
    tests = []
    for entry, role in zip(spec["tests"], ROLES, strict=True):
        test = TestCase.objects.create(
            task=task,
            nodeid=entry["nodeid"],
            intended_role=entry["intended_role"],
            role=role if validated else "unvalidated",
            runs=3,
            passes_base=0 if entry["intended_role"] == "FAIL_TO_PASS" else 3,
            passes_reference=3,
        )
        test.specs.set([specs[k] for k in entry["specs"]])
        tests.append(test)
    Finding.objects.create(
        task=task,
        kind=Finding.Kind.FLAKY,
        severity="high",
        message=f"{tests[4].nodeid} is flaky: passed 1 of 3 runs on the reference",
    )
    Finding.objects.create(
        task=task,
        kind=Finding.Kind.UNLINKED_TEST,
        severity="low",
        message=f"{tests[5].nodeid} verifies no spec",
    )
    good = Trajectory.objects.create(
        task=task,
        model_name="qwen3-coder-30b",
        scaffold="swe-agent",
        source_format="swe-agent",
        content_sha256="a" * 64,
        final_patch=task.reference_patch,
        step_count=45,
        tokens_in=182_000,
        tokens_out=9_400,
        exit_status="submitted",
    )
    bad = Trajectory.objects.create(
        task=task,
        model_name="gpt-oss-20b",
        scaffold="openhands",
        source_format="openhands",
        content_sha256="b" * 64,
        final_patch="",
        step_count=3,
        exit_status="exit_cost",
    )
    steps = []
    for i in range(45):
        steps.append(
            TrajectoryStep(
                trajectory=good,
                index=i,
                role="assistant" if i % 2 == 0 else "tool",
                kind="action" if i % 2 == 0 else "observation",
                thought=f"Step {i}: look at anchors.py and the failing test." if i % 2 == 0 else "",
                action=f"grep -n 'def unique_slug' marktext/anchors.py  # {i}"
                if i % 2 == 0
                else "",
                observation=(
                    "\n".join(f"line {n}: def something_{n}(x): return x" for n in range(300))
                )
                if i == 1
                else (f"ok {i}" if i % 2 else ""),
                tool="bash" if i % 2 == 0 else "",
            )
        )
    TrajectoryStep.objects.bulk_create(steps)
    TrajectoryStep.objects.bulk_create(
        [
            TrajectoryStep(
                trajectory=bad, index=0, role="assistant", action="cat README.md", thought=XSS
            ),
            TrajectoryStep(
                trajectory=bad, index=1, role="tool", observation=XSS + "\n" + "x" * 3000
            ),
            TrajectoryStep(trajectory=bad, index=2, role="assistant", content="I give up."),
        ]
    )
    for trajectory, resolved, satisfied in (
        (good, "full", {"S1", "S2", "S3"}),
        (bad, "none", {"S2"}),
    ):
        evaluation = Evaluation.objects.create(
            trajectory=trajectory,
            task_revision=task.revision,
            patch_applied=resolved == "full",
            resolved=resolved,
            test_outcomes={
                t.nodeid: "passed" if resolved == "full" else "failed" for t in tests[:4]
            },
        )
        for key, spec_obj in specs.items():
            SpecResult.objects.create(
                evaluation=evaluation, spec=spec_obj, satisfied=key in satisfied
            )
    return task


KINDS = ["functional", "interface", "error-handling", "security", "performance", "compatibility"]


def many_specs_task(
    *, dataset, specs: int = 14, long_statement: bool = True, dense: bool = False
) -> Task:
    """A task with `specs` specs (S1..Sn) in a layered web of declared and observed edges, a
    long statement and a test per spec: what a real synthesised task looks like."""
    task = rich_task(dataset=dataset)
    task.specs.all().delete()
    if long_statement:
        task.problem_statement = "\n\n".join(
            f"## Part {n}\n\nImplement `step_{n}(x)` so that it returns the running total of "
            f"the previous steps; see S{n}. It raises `ValueError` for negative input."
            for n in range(1, specs + 1)
        )
        task.save(update_fields=["problem_statement"])
    made = []
    for n in range(1, specs + 1):
        made.append(
            Specification.objects.create(
                task=task,
                key=f"S{n}",
                kind=KINDS[n % len(KINDS)],
                statement=f"step_{n} returns the running total and rejects negative input.",
                order=n,
            )
        )
    # Three layers like a synthesised task's: foundations, what builds on them, the top.
    third = max(1, specs // 3)
    layers = [made[:third], made[third : 2 * third], made[2 * third :]]
    for lower, upper in itertools.pairwise(layers):
        for i, spec in enumerate(upper):
            for target in {lower[i % len(lower)], lower[(i * 2 + 1) % len(lower)]}:
                SpecDependency.objects.create(
                    task=task, from_spec=spec, to_spec=target, evidence="declared"
                )
            if i % 2 == 0:
                SpecDependency.objects.create(
                    task=task,
                    from_spec=spec,
                    to_spec=lower[i % len(lower)],
                    relation="needs",
                    evidence="observed",
                    detail=f"test of {spec.key} fails without {lower[i % len(lower)].key}",
                )
    if specs >= 6:
        # One observed edge that skips a layer, and one inside a layer.
        SpecDependency.objects.create(
            task=task, from_spec=made[-1], to_spec=made[0], relation="needs", evidence="observed"
        )
        SpecDependency.objects.create(
            task=task, from_spec=layers[1][0], to_spec=layers[1][1], evidence="observed"
        )
    if dense:
        # As validation observes on real synthesised tasks: specs of a layer need each other.
        for layer in layers:
            for a in layer:
                for b in layer:
                    if a != b:
                        SpecDependency.objects.get_or_create(
                            task=task, from_spec=a, to_spec=b, evidence="observed"
                        )
    tests = list(task.tests.all())
    for i, test in enumerate(tests):
        test.specs.set(made[i * 2 % specs : i * 2 % specs + 2])
    return task
