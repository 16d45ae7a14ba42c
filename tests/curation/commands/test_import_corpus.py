import json
import threading

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from curation.models import Repository
from tests.curation.repo_sources import git_repo, write_project
from workers.models import Job
from workers.services import job_execute


def _corpus(tmp_path, items, *, jsonl=False):
    path = tmp_path / ("corpus.jsonl" if jsonl else "corpus.json")
    if jsonl:
        path.write_text("# a corpus\n\n" + "\n".join(json.dumps(i) for i in items) + "\n")
    else:
        path.write_text(json.dumps(items))
    return path


@pytest.mark.django_db
def test_it_queues_one_job_per_repository_and_is_idempotent(repo_storage, tmp_path, capsys):
    folder, log = git_repo(tmp_path / "alpha")
    items = [
        {"source": f"file://{folder}", "commit": log[1], "name": "alpha-old"},
        {"source": str(write_project(tmp_path / "beta")), "setup": "pip install -e ."},
    ]
    corpus = _corpus(tmp_path, items, jsonl=True)
    call_command("import_corpus", str(corpus))
    out = capsys.readouterr().out
    assert "2 item(s): 2 queued; 0 refused" in out
    assert "alpha-old  queued" in out
    assert Job.objects.filter(kind="import_repository").count() == 2
    call_command("import_corpus", str(corpus))
    assert "2 item(s): 2 in_progress; 0 refused" in capsys.readouterr().out
    assert Job.objects.filter(kind="import_repository").count() == 2


@pytest.mark.django_db
def test_refused_items_are_named_and_the_exit_is_an_error(repo_storage, tmp_path, capsys):
    corpus = _corpus(tmp_path, [{"source": str(write_project(tmp_path / "ok"))}, {"url": 3}])
    with pytest.raises(CommandError, match="1 repository"):
        call_command("import_corpus", str(corpus))
    captured = capsys.readouterr()
    assert "item 2: url must be a string" in captured.err
    assert Repository.objects.count() == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [("[1,", "is not valid JSON"), ('{"source": "x"}\nnot json\n', "line 2 is not valid JSON")],
)
@pytest.mark.django_db
def test_a_broken_file_gets_a_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        call_command("import_corpus", str(path))


@pytest.mark.django_db(transaction=True)
def test_wait_prints_the_status_table_and_fails_when_an_import_failed(
    repo_storage, tmp_path, capsys
):
    good = write_project(tmp_path / "good")
    corpus = _corpus(
        tmp_path, [{"source": str(good)}, {"source": f"file://{tmp_path}/missing", "name": "gone"}]
    )
    stop = threading.Event()

    def worker():
        try:
            while not stop.is_set():
                for pk in Job.objects.filter(status="queued").values_list("pk", flat=True):
                    job_execute(job_id=pk)
                stop.wait(0.1)
        finally:
            connection.close()

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    try:
        with pytest.raises(CommandError, match="1 repository"):
            call_command("import_corpus", str(corpus), "--wait")
    finally:
        stop.set()
        thread.join(timeout=30)
    out = capsys.readouterr().out
    table = out[out.index("name  ") :]
    assert "good  imported" in table
    assert "gone  failed" in table
    assert "could not clone" in table
