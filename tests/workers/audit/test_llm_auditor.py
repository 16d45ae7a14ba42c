"""The LLM auditor against a scripted OpenAI-compatible server on loopback (real HTTP)."""

import json

from tests.support.llm_server import Reply, ScriptedLLMServer
from workers.audit.facts import EvaluationFacts, FindingDraft, TrajectoryFacts
from workers.audit.llm import audit_config, audit_with_llm, parse_reply
from workers.llm_client import LLMConfig

ZERO = (
    "tests/test_allocation_spec.py::test_allocation_rejects_a_quantity_that_is_not_positive"
    "[zero [0]]"
)


def _config(server, **overrides) -> LLMConfig:
    values = {
        "base_url": server.base_url,
        "model": "auditor-1",
        "timeout_seconds": 5,
        "max_retries": 0,
    }
    return audit_config(**{**values, **overrides})


def _attempts(ledger_facts, attempt):
    evaluation = EvaluationFacts(
        patch_applied=True,
        resolved="partial",
        tests={ZERO: "failed"},
        spec_satisfied={"S1": True, "S3": False},
    )
    return [
        TrajectoryFacts(
            id=41, model="functional-coder", patch=attempt("partial"), evaluation=evaluation
        )
    ]


GOOD = {
    "verdict": "do_not_approve",
    "summary": "The zero-quantity message is not in the statement's words.",
    "findings": [
        {
            "kind": "underspecified",
            "severity": "medium",
            "message": "S3's message differs from reserve()'s; the statement should say so.",
            "trajectory": 41,
            "spec": "S3",
            "test": ZERO,
        },
        {"kind": "weak_test", "severity": "low", "message": "Nothing else.", "trajectory": None},
    ],
}


def test_it_sends_the_task_and_the_attempts_and_reads_structured_findings(ledger_facts, attempt):
    heuristic = [FindingDraft("all_models_fail_one_test", "medium", "All models fail zero.", "k")]
    with ScriptedLLMServer([Reply.json(GOOD)]) as server:
        audit = audit_with_llm(
            _config(server), ledger_facts, _attempts(ledger_facts, attempt), heuristic
        )
        (request,) = server.chat_requests
    assert audit.status == "ok", audit.error
    assert audit.verdict == "do_not_approve"
    assert [f.kind for f in audit.findings] == ["underspecified", "weak_test"]
    first = audit.findings[0]
    assert (first.trajectory, first.evidence["spec"], first.evidence["test"]) == (41, "S3", ZERO)
    assert audit.usage["prompt_tokens"] > 0
    # What the model read: the statement, the specs, the attempt and the rule-based findings.
    assert request.body["model"] == "auditor-1"
    text = request.text
    assert "Allocate an order's quantity" in text
    assert "S3 (error-handling)" in text
    assert "Attempt 41 by functional-coder" in text and "resolved: partial" in text
    assert "All models fail zero." in text
    assert "def _allocation_plan" in text  # the final patch


def test_a_reply_in_a_code_fence_is_accepted(ledger_facts, attempt):
    fenced = "```json\n" + json.dumps({"verdict": "approve", "findings": []}) + "\n```"
    with ScriptedLLMServer([Reply.text(fenced)]) as server:
        audit = audit_with_llm(_config(server), ledger_facts, [], [])
    assert (audit.status, audit.verdict, audit.findings) == ("ok", "approve", [])


def test_malformed_output_is_a_failed_audit_not_a_crash(ledger_facts, attempt):
    replies = [
        Reply.text("I think the task is fine."),
        Reply.text('{"verdict": "approve", "findings": [{"kind": "x"'),
        Reply.json({"verdict": "maybe", "findings": []}),
        Reply.json(
            {"verdict": "approve", "findings": [{"kind": "x", "severity": "dire", "message": "m"}]}
        ),
        Reply.json({"verdict": "approve", "findings": "none"}),
        Reply.json(["approve"]),
        Reply.text('{"verdict": "approve", "findings": [', finish_reason="length"),
    ]
    reasons = []
    with ScriptedLLMServer(replies) as server:
        for _ in replies:
            audit = audit_with_llm(_config(server), ledger_facts, [], [])
            assert audit.status == "failed" and audit.findings == []
            assert audit.raw  # what the model said is kept for the record
            reasons.append(audit.error)
    assert reasons[0] == "malformed reply: the reply holds no JSON object"
    assert "not valid JSON" in reasons[1]
    assert "'verdict' must be one of" in reasons[2]
    assert "findings[0].severity" in reasons[3]
    assert "'findings' must be a list" in reasons[4]
    assert "not an object" in reasons[5]
    assert reasons[6].endswith("(the reply was cut off at the token limit)")


def test_endpoint_failures_are_failed_audits(ledger_facts):
    replies = [
        Reply.error(500, "upstream exploded"),
        Reply.dropped(),
        Reply.raw("<html>bad gateway</html>", status=502, content_type="text/html"),
        Reply.json({"verdict": "approve"}).slow(3),
    ]
    with ScriptedLLMServer(replies) as server:
        errors = [
            audit_with_llm(_config(server, timeout_seconds=1), ledger_facts, [], []).error
            for _ in replies
        ]
    assert errors[0] == "the endpoint failed: HTTP 500: upstream exploded"
    assert errors[1].startswith("the endpoint failed: connection error")
    assert errors[2].startswith("the endpoint failed: HTTP 502")
    assert errors[3] == "the endpoint failed: the request timed out"
    assert all(error.startswith("the endpoint failed") for error in errors)


def test_references_to_unknown_attempts_are_kept_as_text():
    verdict, summary, findings = parse_reply(
        json.dumps(
            {
                "verdict": "reject",
                "findings": [
                    {
                        "kind": "broken_test",
                        "severity": "high",
                        "message": "m",
                        "trajectory": "999",
                        "spec": "S9",
                    }
                ],
            }
        ),
        trajectory_ids={1},
        spec_keys={"S1"},
        test_ids=set(),
    )
    assert verdict == "do_not_approve" and summary == ""
    (finding,) = findings
    assert finding.trajectory is None
    assert finding.evidence["notes"] == ["unknown attempt 999", "unknown spec 'S9'"]


def test_the_auditor_shares_the_clients_retries_and_accounting(ledger_facts):
    # One transient failure, then an answer: the shared client retries (the auditor allows one
    # retry) and the usage is the answer's.
    replies = [Reply.error(503, "busy"), Reply.json({"verdict": "approve", "findings": []})]
    with ScriptedLLMServer(replies) as server:
        config = _config(server, max_retries=1, backoff_base_seconds=0.01)
        audit = audit_with_llm(config, ledger_facts, [], [])
        requests = server.chat_requests
    assert (audit.status, audit.verdict) == ("ok", "approve"), audit.error
    assert len(requests) == 2
    body = requests[-1].body
    assert (body["temperature"], body["max_tokens"]) == (0.0, 2000)
    assert "response_format" not in body and "seed" not in body
    assert audit.usage["prompt_tokens"] > 0
