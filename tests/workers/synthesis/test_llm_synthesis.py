"""The LLM agent loop end to end: scripted model over real HTTP, real client, real sandbox.

The model's answers come from tests/support/llm_proposals.py: a real feature for the marktext
sample repository whose reference patch applies and whose tests fail before and pass after.
Broken variants of it (malformed JSON, schema violations, a misquoted patch, a test that passes
without the feature) must each be recorded, fed back, and fixed by the next round.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests.support.llm_proposals import (
    FAIL_TO_PASS,
    MODULE,
    PASS_TO_PASS,
    TEST_PATH,
    good_proposal,
    with_a_misquoted_patch,
    with_a_test_passing_on_base,
    with_changes,
)
from tests.support.llm_server import (  # noqa: F401 (llm_server_fixture registers the fixture)
    Reply,
    ScriptedLLMServer,
    Usage,
    llm_server_fixture,
)
from workers.gitstore import commit_folder, read_file
from workers.sandbox import get_backend
from workers.sandbox.types import EnvironmentSpec, Outcome, RunRequest, Snapshot
from workers.synthesis.llm import (
    LLMConfig,
    LLMSynthesisOutcome,
    normalise_patch,
    synthesize_llm,
)
from workers.synthesis.proposals import SynthesisOutcome

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "repos"
SANDBOX_ROOT = Path("/var/tmp/specloom-test-jail-llm")
MODEL = "scripted-coder"
PRICE_PROMPT = 0.5  # per 1k tokens
PRICE_COMPLETION = 1.5


@pytest.fixture(scope="module")
def runner():
    return get_backend("process", root=SANDBOX_ROOT).run


@pytest.fixture(scope="module")
def marktext(tmp_path_factory) -> Snapshot:
    source = EXAMPLES / "marktext"
    if not source.is_dir():
        pytest.skip("the marktext sample repository is missing")
    folder = tmp_path_factory.mktemp("marktext") / "src"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    git_dir = folder.parent / "repo.git"
    return Snapshot(git_dir, commit_folder(folder, git_dir, "import marktext"))


@pytest.fixture(scope="module")
def good(marktext) -> dict:
    return good_proposal(read_file(marktext.git_dir, marktext.commit, MODULE))


def no_sandbox(request: RunRequest):
    raise AssertionError("this scenario must not reach the sandbox")


def config_for(server: ScriptedLLMServer, **overrides) -> LLMConfig:
    values = {
        "base_url": server.base_url,
        "model": MODEL,
        "api_key": "test-key",
        "timeout_seconds": 10.0,
        "max_retries": 2,
        "backoff_base_seconds": 0.01,
        "backoff_max_seconds": 0.05,
        "retry_after_cap_seconds": 0.1,
        "price_per_1k_prompt": PRICE_PROMPT,
        "price_per_1k_completion": PRICE_COMPLETION,
    }
    return LLMConfig(**(values | overrides))


def synthesize(server, snapshot, runner, *, rounds=3, count=1, **config) -> LLMSynthesisOutcome:
    return synthesize_llm(
        snapshot=snapshot,
        environment=EnvironmentSpec(),
        runner=runner,
        config=config_for(server, **config),
        count=count,
        seed=7,
        rounds=rounds,
        module=MODULE,
        reruns=1,
        # Measured once, in good_run; elsewhere the leave-one-out runs would only cost time.
        interaction_check=False,
    )


def statuses(outcome: LLMSynthesisOutcome) -> list[str]:
    return [r.status for r in outcome.rounds]


# -- a good proposal, after two server errors ---------------------------------------------------


@pytest.fixture(scope="module")
def good_run(marktext, runner, good):
    """Two HTTP 500s, then the good proposal: (outcome, requests, usage sent, progress, secs)."""
    script = [Reply.error(500), Reply.error(500), Reply.json(good, usage=Usage(5200, 1800))]
    progress: list[tuple[int, str]] = []
    with ScriptedLLMServer(script) as server:
        started = time.monotonic()
        outcome = synthesize_llm(
            snapshot=marktext,
            environment=EnvironmentSpec(),
            runner=runner,
            config=config_for(server),
            count=1,
            seed=7,
            rounds=3,
            module=MODULE,
            reruns=1,
            progress=lambda percent, message: progress.append((percent, message)),
        )
        seconds = time.monotonic() - started
        return outcome, server.chat_requests, server.usage_sent(), progress, seconds


@pytest.mark.slow
def test_a_good_proposal_verifies_in_round_one(good_run, marktext):
    outcome, *_ = good_run
    assert isinstance(outcome, SynthesisOutcome)
    assert statuses(outcome) == ["verified"], outcome.rounds
    assert outcome.report["status"] == "ok"
    [proposal] = outcome.proposals
    assert proposal.base_commit == marktext.commit  # the feature is added to the snapshot
    assert proposal.title == "Word frequencies and the most frequent words"
    assert proposal.fail_to_pass == FAIL_TO_PASS
    assert proposal.pass_to_pass == PASS_TO_PASS
    assert proposal.test_patch.startswith(f"diff --git a/{TEST_PATH} b/{TEST_PATH}\nnew file")
    assert proposal.reference_patch.startswith(f"diff --git a/{MODULE} b/{MODULE}\n")
    assert {s.key: s.kind for s in proposal.specs} == {
        "S1": "functional",
        "S2": "interface",
        "S3": "error-handling",
        "S4": "compatibility",
    }
    verified_by = {s.key: s.verified_by for s in proposal.specs}
    assert verified_by["S3"] == [FAIL_TO_PASS[3]]
    assert verified_by["S4"] == [FAIL_TO_PASS[1], PASS_TO_PASS[0]]
    assert [(d.from_key, d.to_key) for d in proposal.dependencies] == [
        ("S2", "S1"),
        ("S3", "S2"),
        ("S1", "S4"),
    ]
    assert outcome.rejected == []


@pytest.mark.slow
def test_the_reference_has_two_parts_and_one_test_needs_both(good_run):
    outcome, *_ = good_run
    [proposal] = outcome.proposals
    # word_frequencies and top_words are two parts; only the ordering test needs both.
    assert len(proposal.reference_parts) == 2
    assert proposal.metadata["interaction_score"] == 0.25
    first, second = proposal.reference_parts
    assert first.spec_keys == ["S1", "S2", "S4"]  # without it, S1/S2/S4 tests fail
    assert second.spec_keys == ["S1", "S2", "S3"]
    assert proposal.metadata["origin"] == "llm"
    assert proposal.metadata["model"] == MODEL
    assert proposal.metadata["rounds"] == 1
    assert proposal.difficulty.factors["error_contracts"] == 1


@pytest.mark.slow
def test_the_tests_really_fail_before_and_pass_after(good_run, marktext, runner):
    outcome, *_ = good_run
    [proposal] = outcome.proposals
    tests = tuple(proposal.fail_to_pass + proposal.pass_to_pass)
    before = runner(RunRequest(snapshot=marktext, patches=(proposal.test_patch,), tests=tests))
    after = runner(
        RunRequest(
            snapshot=marktext, patches=(proposal.reference_patch, proposal.test_patch), tests=tests
        )
    )
    for test in proposal.fail_to_pass:
        assert before.tests[test].outcome == Outcome.FAILED, test
    assert before.tests[PASS_TO_PASS[0]].outcome == Outcome.PASSED
    assert all(after.tests[t].outcome == Outcome.PASSED for t in tests), after.tests


@pytest.mark.slow
def test_server_errors_were_retried_with_backoff(good_run):
    outcome, requests, _usage, _progress, _seconds = good_run
    [record] = outcome.rounds
    assert (record.requests, record.retries) == (3, 2)
    assert outcome.report["retries"] == 2 and outcome.report["requests"] == 3
    assert record.model_seconds < 1.5  # tiny backoff from the config (the default: >= 1.5 s)
    assert len(requests) == 3
    assert requests[0].body == requests[2].body  # a retry resends the same request


@pytest.mark.slow
def test_what_the_agent_sent(good_run):
    _outcome, requests, *_ = good_run
    body = requests[-1].body
    assert body["model"] == MODEL
    assert body["response_format"] == {"type": "json_object"}
    assert requests[-1].headers["authorization"] == "Bearer test-key"
    system, user = body["messages"]
    assert system["role"] == "system" and '"fail_to_pass"' in system["content"]
    assert user["role"] == "user"
    assert "def truncate_words" in user["content"]  # the module's source
    assert "## Existing tests: `tests/test_textutil.py`" in user["content"]
    assert "marktext/tokenizer.py" in user["content"]  # the file tree


@pytest.mark.slow
def test_tokens_and_cost_add_up_from_the_usage_fields(good_run):
    outcome, _requests, usage_sent, *_ = good_run
    assert usage_sent == Usage(5200, 1800)
    expected_cost = 5200 / 1000 * PRICE_PROMPT + 1800 / 1000 * PRICE_COMPLETION
    [record] = outcome.rounds
    assert (record.prompt_tokens, record.completion_tokens) == (5200, 1800)
    assert record.cost == pytest.approx(expected_cost)
    assert outcome.usage.total_tokens == 7000
    assert outcome.report["tokens"] == {"prompt": 5200, "completion": 1800, "total": 7000}
    assert outcome.report["cost"] == pytest.approx(expected_cost)
    assert outcome.report["rounds"][0]["cost"] == pytest.approx(expected_cost)


@pytest.mark.slow
def test_progress_climbs_to_done(good_run):
    *_, progress, _seconds = good_run
    percents = [p for p, _ in progress]
    assert percents == sorted(percents)
    assert progress[-1] == (100, "1 of 1 tasks")
    assert any("validating" in message for _, message in progress)


# -- failures fed back --------------------------------------------------------------------------


@pytest.mark.slow
def test_malformed_json_is_fed_back_and_the_revision_verifies(llm_server, marktext, runner, good):
    broken = '{"title": "Word frequencies",, "specs": []}'
    llm_server.enqueue(Reply.text(broken), Reply.json(good))
    outcome = synthesize(llm_server, marktext, runner)
    assert statuses(outcome) == ["malformed", "verified"]
    first = outcome.rounds[0]
    assert first.error.startswith("the answer is not valid JSON: Expecting property name")
    assert first.prompt_tokens > 0  # a broken answer still costs tokens
    second_request = llm_server.chat_requests[1]
    assert second_request.messages[-2] == {"role": "assistant", "content": broken}
    assert "Round 1 failed: your answer was not a JSON object" in second_request.last_user_message
    assert "line 1 column 30" in second_request.last_user_message
    assert outcome.proposals[0].metadata["rounds"] == 2


@pytest.mark.slow
def test_schema_violations_are_recorded_and_fed_back(llm_server, marktext, runner, good):
    broken = with_changes(good, reference_patch=None)
    broken["specs"][2]["kind"] = "robustness"
    llm_server.enqueue(Reply.json(broken), Reply.json(good))
    outcome = synthesize(llm_server, marktext, runner)
    assert statuses(outcome) == ["schema-invalid", "verified"]
    problems = outcome.rounds[0].problems
    assert "$: missing required field 'reference_patch'" in problems
    assert any('$.specs[2].kind: "robustness" is not one of' in p for p in problems)
    feedback = llm_server.chat_requests[1].last_user_message
    assert "missing required field 'reference_patch'" in feedback
    assert '"robustness" is not one of' in feedback


@pytest.mark.slow
def test_a_patch_that_does_not_apply_is_fed_back_and_fixed(llm_server, marktext, runner, good):
    sandbox_runs: list[RunRequest] = []

    def counting_runner(request: RunRequest):
        sandbox_runs.append(request)
        return runner(request)

    llm_server.enqueue(Reply.json(with_a_misquoted_patch(good)), Reply.json(good))
    outcome = synthesize(llm_server, marktext, counting_runner)
    assert statuses(outcome) == ["validation-failed", "verified"]
    first = outcome.rounds[0]
    assert first.error.startswith("the reference patch does not apply to the current code")
    assert f"patch failed: {MODULE}" in first.error
    # git refused it before any sandbox run: the only runs are round 2's base and reference.
    assert len(sandbox_runs) == 2
    feedback = llm_server.chat_requests[1].last_user_message
    assert "Round 1 failed: the sandbox checked it" in feedback
    assert "does not apply" in feedback


@pytest.mark.slow
def test_tests_that_pass_without_the_feature_are_fed_back(llm_server, marktext, runner, good):
    llm_server.enqueue(Reply.json(with_a_test_passing_on_base(good)), Reply.json(good))
    outcome = synthesize(llm_server, marktext, runner)
    assert statuses(outcome) == ["validation-failed", "verified"]
    [problem] = outcome.rounds[0].problems
    assert problem.startswith(
        f"{PASS_TO_PASS[0]}, meant as FAIL_TO_PASS, is invalid: passes without the solution"
    )
    assert "(base: passed; reference: passed)" in problem
    assert outcome.rounds[0].validation_seconds > 0
    assert PASS_TO_PASS[0] in llm_server.chat_requests[1].last_user_message


@pytest.mark.slow
def test_later_tasks_are_told_what_was_made_already(llm_server, marktext, runner, good):
    llm_server.enqueue(Reply.json(good), Reply.text("no more ideas"))
    outcome = synthesize(llm_server, marktext, runner, count=2, rounds=1)
    assert [a.produced for a in outcome.attempts] == [True, False]
    assert (outcome.report["tasks_wanted"], outcome.report["tasks"]) == (2, 1)
    assert outcome.report["status"] == "ok"
    second = llm_server.chat_requests[1].last_user_message
    assert "Tasks already made from this repository" in second
    assert f"- {good['title']}" in second


# -- HTTP trouble and giving up -----------------------------------------------------------------


@pytest.mark.slow
def test_a_slow_answer_is_a_timeout_and_the_run_goes_on(llm_server, marktext, runner, good):
    llm_server.enqueue(Reply.json(good).slow(5), Reply.json(good))
    outcome = synthesize(llm_server, marktext, runner, timeout_seconds=0.5, max_retries=0)
    assert statuses(outcome) == ["timeout", "verified"]
    first = outcome.rounds[0]
    assert first.error == "the request timed out"
    assert first.model_seconds < 2
    assert (first.prompt_tokens, first.cost) == (0, 0.0)
    # Nothing came back, so nothing is fed back: round 2 asks the same question again.
    requests = llm_server.chat_requests
    assert requests[0].body["messages"] == requests[1].body["messages"]


def test_k_rounds_exhausted_reports_the_task_as_not_produced(llm_server, marktext, good):
    llm_server.enqueue(
        Reply.text("I would add a cache."),
        Reply.json(with_changes(good, specs=[], dependencies=[])),
        Reply.json(with_a_misquoted_patch(good)),
    )
    outcome = synthesize(llm_server, marktext, no_sandbox, rounds=3)
    assert statuses(outcome) == ["malformed", "schema-invalid", "validation-failed"]
    assert outcome.proposals == []
    [rejection] = outcome.rejected
    assert rejection.cluster == (MODULE,)
    assert rejection.reason == "no verified proposal (last: validation-failed)"
    [attempt] = outcome.attempts
    assert not attempt.produced
    assert attempt.reasons[0].startswith("round 3: validation-failed: the reference patch")
    assert outcome.report["status"] == "no tasks"
    assert outcome.report["round_statuses"] == {
        "malformed": 1,
        "schema-invalid": 1,
        "validation-failed": 1,
    }
    # Each revision saw the previous answer and its problems, never more than two back.
    assert len(llm_server.chat_requests[2].messages) == 6


def test_a_refused_key_stops_the_run_at_once(marktext, good):
    with ScriptedLLMServer([Reply.json(good)] * 4, api_key="the-right-key") as server:
        outcome = synthesize(server, marktext, no_sandbox, count=2, rounds=3)
        assert len(server.chat_requests) == 1
    [record] = outcome.rounds
    assert (record.status, record.http_status) == ("http-error", 401)
    assert outcome.report["status"] == "stopped"
    assert "the endpoint refused the request: HTTP 401" in outcome.report["reason"]
    assert len(outcome.attempts) == 1


def test_an_answer_that_is_not_a_chat_completion_is_recorded(llm_server, marktext):
    llm_server.enqueue(Reply.raw("<html>502 Bad Gateway</html>"), Reply.error(500, "down"))
    outcome = synthesize(llm_server, marktext, no_sandbox, rounds=2, max_retries=0)
    assert statuses(outcome) == ["malformed", "http-error"]
    assert "not JSON" in outcome.rounds[0].error
    assert outcome.rounds[1].error == "HTTP 500: down"
    assert outcome.report["status"] == "no tasks"


def test_a_sandbox_that_breaks_stops_the_run(llm_server, marktext, good):
    def broken_sandbox(request):
        raise RuntimeError("environment build failed: no pip")

    llm_server.enqueue(Reply.json(good), Reply.json(good))
    outcome = synthesize(llm_server, marktext, broken_sandbox, count=2)
    assert statuses(outcome) == ["sandbox-error"]
    assert "no pip" in outcome.rounds[0].error
    assert outcome.report["status"] == "stopped"


def test_an_unknown_module_is_unusable_not_a_crash(llm_server, marktext):
    outcome = synthesize_llm(
        snapshot=marktext,
        environment=EnvironmentSpec(),
        runner=no_sandbox,
        config=config_for(llm_server),
        count=1,
        seed=1,
        module="marktext/missing.py",
    )
    assert outcome.report["status"] == "unusable"
    assert "marktext/missing.py is not a Python file" in outcome.report["reason"]
    assert llm_server.chat_requests == []


def test_patches_are_normalised_with_recounted_hunks(marktext, good):
    # Models get hunk positions and line counts wrong; git finds the place, and the patch is
    # rewritten as git would write it.
    patch = good["reference_patch"]
    header_at = patch.index("@@ -")
    end_of_header = patch.index("@@", header_at + 2) + 2
    miscounted = patch[:header_at] + "@@ -100,2 +100,3 @@" + patch[end_of_header:]
    normalised, error = normalise_patch(marktext.git_dir, marktext.commit, miscounted)
    assert error == ""
    assert normalised.startswith(f"diff --git a/{MODULE} b/{MODULE}\nindex ")
    assert normalised.count("\n+def ") == 2


def _stored_objects(git_dir: Path) -> set[str]:
    return {f"{p.parent.name}{p.name}" for p in (Path(git_dir) / "objects").glob("??/*")}


def test_a_models_patch_never_enters_the_stored_repository(marktext, good):
    # Normalising applies the model's patch in a scratch index whose objects are thrown away:
    # the stored repository holds only what was imported (and our own base commits).
    before = _stored_objects(marktext.git_dir)
    normalised, error = normalise_patch(marktext.git_dir, marktext.commit, good["reference_patch"])
    assert error == "" and normalised
    new_blob = normalised.split("\nindex ", 1)[1].split("..", 1)[1].split()[0]
    assert _stored_objects(marktext.git_dir) == before
    assert not any(name.startswith(new_blob) for name in before)
