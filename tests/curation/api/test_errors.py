"""Bad input anywhere under /api/ gets the one error body with the right status."""

import pytest

from tests.curation.api.support import error_of
from tests.factories import RepositoryFactory

pytestmark = pytest.mark.django_db


def test_an_oversized_body_gets_413_before_anything_reads_it(settings, token_client, bob, dataset):
    settings.SPECLOOM_UPLOAD_MAX_BYTES = 1000
    client = token_client(bob, "release")
    response = client.post(
        "/api/v1/releases", {"dataset": "core", "version": "x" * 2000}, format="json"
    )
    assert response.status_code == 413
    error = error_of(response)
    assert error["code"] == "payload_too_large"
    assert error["details"]["limit_bytes"] == 1000


def test_an_oversized_form_body_gets_413_too(settings, client, bob, dataset):
    settings.SPECLOOM_UPLOAD_MAX_BYTES = 1000
    client.force_login(bob)
    response = client.post("/api/v1/repositories", {"name": "x" * 5000})
    assert response.status_code == 413
    assert error_of(response)["code"] == "payload_too_large"


def test_django_refusing_a_big_form_maps_to_413(settings, client, bob, dataset):
    # Past our own check (say, a larger limit there), Django's own limit still answers 413.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    client.force_login(bob)
    response = client.post("/api/v1/repositories", {"name": "x" * 500})
    assert response.status_code == 413
    assert error_of(response)["code"] == "payload_too_large"


def test_bodies_that_are_json_objects_refuse_a_form(token_client, bob, dataset):
    # In a form every value is text: "0" would pass for a boolean, an empty list would vanish.
    client = token_client(bob, "read", "write", "release")
    cut = client.post("/api/v1/releases", {"dataset": dataset.name, "include_unsafe": 0})
    assert cut.status_code == 415
    assert error_of(cut)["code"] == "unsupported_media_type"
    repository = RepositoryFactory()
    changed = client.patch(f"/api/v1/repositories/{repository.pk}", {"setup_command": "true"})
    assert changed.status_code == 415
    # The same change as JSON is taken.
    changed = client.patch(
        f"/api/v1/repositories/{repository.pk}", {"setup_command": "true"}, format="json"
    )
    assert changed.status_code == 200, changed.content


def test_malformed_json_gets_400(token_client, bob, dataset):
    response = token_client(bob, "release").post(
        "/api/v1/releases", data="{", content_type="application/json"
    )
    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"


def test_an_unsupported_media_type_gets_415(token_client, bob, dataset):
    response = token_client(bob, "release").post(
        "/api/v1/releases", data="dataset: core", content_type="text/yaml"
    )
    assert response.status_code == 415
    assert error_of(response)["code"] == "unsupported_media_type"


def test_an_unknown_api_route_gets_404_in_the_error_body(token_client, bob):
    response = token_client(bob).get("/api/v1/nowhere/at/all")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


def test_an_id_that_is_not_a_number_is_a_404(token_client, bob):
    response = token_client(bob).get("/api/v1/tasks/abc")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


def test_a_representation_we_do_not_offer_is_406(token_client, bob):
    response = token_client(bob).get("/api/v1/tasks", HTTP_ACCEPT="text/html")
    assert response.status_code == 406
    assert error_of(response)["code"] == "not_acceptable"


def test_the_schema_and_its_ui_need_a_role(client, carol, token_client, alice):
    assert client.get("/api/schema/").status_code == 401
    client.force_login(carol)
    assert client.get("/api/schema/").status_code == 403
    response = token_client(alice).get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert "Error" in schema["components"]["schemas"]
    responses = schema["paths"]["/api/v1/releases"]["post"]["responses"]
    for status in ("400", "401", "403", "404", "409", "413", "429"):
        assert responses[status]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Error"
        }
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_swagger_ui_is_served_to_a_logged_in_reviewer(client, alice):
    client.force_login(alice)
    response = client.get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger-ui" in response.content


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/v1/audit-calibration?dataset=co%00re"),
        ("get", "/api/v1/pass-rates?dataset=%00"),
        ("get", "/api/v1/trajectories?dataset=%00"),
        ("get", "/api/v1/trajectories?model=gpt%00"),
        ("get", "/api/v1/tasks?repository=%00"),
        ("get", "/api/v1/tasks?na%00me=1"),
        ("post", "/api/v1/trajectories?dataset=%00"),
    ],
)
def test_a_nul_character_in_a_query_parameter_gets_400(token_client, bob, dataset, method, url):
    client = token_client(bob, "write")
    if method == "post":
        response = client.post(url, data=b"{}", content_type="application/json")
    else:
        response = client.get(url)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert "NUL" in error["message"]


@pytest.mark.parametrize("url", ["/api/v1/tasks", "/api/v1/releases"])
@pytest.mark.parametrize("depth", [100, 1_000, 5_000])
def test_json_nested_too_deep_gets_400(token_client, bob, dataset, url, depth):
    body = '{"dataset": ' + "[" * depth + "]" * depth + "}"
    response = token_client(bob, "write", "release").post(
        url, data=body, content_type="application/json"
    )
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert "nested" in error["message"] or "depth" in error["message"]


def test_json_nested_a_little_is_read_as_before(token_client, bob, dataset):
    body = '{"dataset": "core", "version": "v9", "trajectories": false}'
    response = token_client(bob, "release").post(
        "/api/v1/releases", data=body, content_type="application/json"
    )
    assert response.status_code == 202


def test_a_malformed_host_gets_400_in_the_error_body(token_client, bob):
    response = token_client(bob).get("/api/v1/tasks", HTTP_HOST="!1t$N")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert error_of(response)["code"] == "bad_request"


def test_every_string_a_request_carries_is_documented_without_nul(token_client, alice):
    schema = token_client(alice).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    cut = schema["components"]["schemas"]["ReleaseCutRequest"]["properties"]["dataset"]
    assert cut["pattern"] == "^[^\\u0000]*$"
    (model,) = [
        p
        for p in schema["paths"]["/api/v1/trajectories"]["get"]["parameters"]
        if p["name"] == "model"
    ]
    assert model["schema"]["pattern"] == "^[^\\u0000]*$"


@pytest.mark.parametrize("path", ["/api/v1/pass-rates", "/api/v1/trajectories"])
def test_a_unicode_digit_as_a_dataset_is_a_404_not_a_crash(token_client, bob, dataset, path):
    # "¹".isdigit() is true, and int("¹") raises: found by the long fuzz run.
    response = token_client(bob).get(f"{path}?dataset=%C2%B9")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"
