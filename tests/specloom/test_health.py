import pytest


@pytest.mark.django_db
def test_it_reports_database_broker_and_storage(client):
    response = client.get("/healthz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "broker", "storage"}
    assert all(check["ok"] for check in body["checks"].values())


@pytest.mark.django_db
def test_it_says_degraded_when_storage_cannot_be_written(client, settings, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    settings.STORAGE_ROOT = blocker / "storage"
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["storage"]["ok"] is False


@pytest.mark.django_db
def test_it_rejects_post(client):
    assert client.post("/healthz").status_code == 405


def test_it_names_no_server_path(client, settings):
    body = client.get("/healthz").content.decode()
    assert str(settings.STORAGE_ROOT) not in body and str(settings.VAR_DIR) not in body
