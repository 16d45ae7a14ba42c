import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from curation.models import Dataset, Repository
from workers.models import Job

pytestmark = pytest.mark.django_db


def test_it_prepares_the_demo_once(repo_storage, capsys, monkeypatch):
    monkeypatch.setenv("SPECLOOM_ADMIN_PASSWORD", "a-demo-password")
    call_command("demo_setup")
    out = capsys.readouterr().out
    assert "Imported sample repository ledger" in out
    assert "Created admin 'admin' with password (from SPECLOOM_ADMIN_PASSWORD)" in out
    assert set(Repository.objects.values_list("name", flat=True)) == {"ledger", "marktext"}
    assert get_user_model().objects.get(username="admin").check_password("a-demo-password")
    assert Job.objects.filter(kind="synthesize").count() == 2
    demo = Dataset.objects.get(name="demo")
    assert set(demo.members.values_list("username", flat=True)) == {"alice", "bob"}

    call_command("demo_setup")
    assert "Created" not in capsys.readouterr().out
    assert Job.objects.filter(kind="synthesize").count() == 2
