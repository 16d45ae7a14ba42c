"""The calibration page (curators), the dashboard card, the API and the release datasheet: one
computation, so on a seeded dataset they give the same figures and verdicts."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from curation.models import Release
from tests.curation.calibration_seed import seed_calibration
from tests.curation.release_helpers import cut, reviewed_task
from tests.factories import DatasetFactory

pytestmark = pytest.mark.django_db

URL = "/calibration/"
ATTRIBUTES = ("data-n", "data-accuracy", "data-kappa", "data-kappa-low", "data-kappa-high")


@pytest.fixture(autouse=True)
def release_root(settings, tmp_path):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"


class _Rows(HTMLParser):
    """The rows a page shows, keyed `group:row`, with their data-* figures."""

    def __init__(self):
        super().__init__()
        self.rows: dict[str, dict[str, str]] = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and "data-calibration" in attrs:
            self.rows[attrs["data-calibration"]] = attrs


def shown(html: bytes) -> dict[str, dict[str, str]]:
    parser = _Rows()
    parser.feed(html.decode())
    return parser.rows


def expected(report: dict, key: str) -> dict[str, str]:
    group, row = key.split(":")
    figures = report["groups"][group]["rows"][row]
    # A row without decisions has no interval: the template renders nothing there.
    ci = figures["ci"]["kappa"] or {"low": "", "high": ""}
    values = {
        "data-n": figures["n"],
        "data-accuracy": figures["accuracy"],
        "data-kappa": figures["kappa"],
        "data-kappa-low": ci["low"],
        "data-kappa-high": ci["high"],
        "data-verdict": figures["verdict"],
    }
    return {name: str(value) for name, value in values.items()}


def test_it_rejects_post_and_needs_a_curator(client, alice, bob, carol, dataset):
    client.force_login(bob)
    assert client.post(URL).status_code == 405
    client.force_login(alice)  # a reviewer: not their page
    assert client.get(URL).status_code == 403
    client.force_login(carol)  # no role at all
    assert client.get(URL).status_code == 403
    client.logout()
    response = client.get(URL)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_an_unknown_dataset_is_a_404_that_echoes_nothing(client, bob, dataset):
    client.force_login(bob)
    assert client.get(URL, {"dataset": "missing"}).status_code == 404
    response = client.get(URL, {"dataset": "<script>alert(1)</script>"})
    assert response.status_code == 404 and b"<script>alert(1)" not in response.content


def test_without_datasets_it_says_so(client, bob):
    client.force_login(bob)
    response = client.get(URL)
    assert response.status_code == 200 and b"No datasets yet." in response.content


def test_it_says_which_decisions_were_blind_and_how_dismissed_findings_count(client, bob, dataset):
    seed_calibration(dataset, blind=4, informed=6)
    client.force_login(bob)
    response = client.get(URL, {"dataset": "core"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Blind decisions" in html and "Informed decisions" in html
    assert "decided without seeing the review agent" in html
    assert "anchoring possible" in html and "may have anchored" in html
    assert "dismissed findings are not counted as flags" in html
    assert "1 dismissed finding, not counted as flags" in html
    assert "not enough decisions" in html  # 4 and 6 are below the minimum of 30
    assert 'href="/calibration/"' in html  # the nav links here for curators
    assert "{#" not in html and "{%" not in html  # no template source leaks into the page
    # Every row, with its baselines.
    rows = shown(response.content)
    assert set(rows) == {
        f"{group}:{row}"
        for group in ("blind", "informed", "all")
        for row in ("review_agent", "heuristic", "llm")
    }
    assert html.count("vs always flag") == 9


def test_page_dashboard_api_and_datasheet_give_the_same_figures(client, bob, dataset):
    seed_calibration(dataset)
    reviewed_task(dataset=dataset)  # something to release
    client.force_login(bob)
    (api,) = client.get("/api/v1/audit-calibration", {"dataset": "core"}).json()["datasets"]
    # The seeded plan, worked out: 32 blind decisions, 16 turned down, the agent wrong on
    # 4 (i = 7, 15, 23, 31: all approvals it flagged): tp 16, fp 4, fn 0, tn 12.
    blind = api["groups"]["blind"]["rows"]["review_agent"]
    assert [blind[k] for k in ("true_positive", "false_positive", "false_negative")] == [16, 4, 0]
    assert blind["true_negative"] == 12
    # accuracy 28/32 = 0.875; kappa = 2(16·12 - 4·0) / (20·16 + 16·12) = 384/512 = 0.75
    assert (blind["accuracy"], blind["kappa"]) == (0.875, 0.75)
    assert blind["verdict"] == "beats_every_baseline"
    informed = api["groups"]["informed"]["rows"]["review_agent"]
    assert (informed["n"], informed["verdict"]) == (12, "not_enough_decisions")
    assert informed["dismissed"] == {"findings": 1, "decisions": 1}

    release = cut(dataset)
    assert release.status == Release.Status.READY
    assert release.datasheet["calibration"] == api

    page = shown(client.get(URL, {"dataset": "core"}).content)
    dashboard = shown(client.get("/", {"dataset": "core"}).content)
    sheet = shown(client.get(f"/releases/{release.pk}/").content)
    for key, attrs in page.items():
        assert {name: attrs[name] for name in (*ATTRIBUTES, "data-verdict")} == expected(api, key)
    for rendered in (dashboard, sheet):
        assert set(rendered) == {"blind:review_agent", "informed:review_agent", "all:review_agent"}
        for key, attrs in rendered.items():
            assert {name: attrs[name] for name in (*ATTRIBUTES, "data-verdict")} == expected(
                api, key
            )


def test_the_dashboard_card_is_for_curators(client, alice, bob, dataset):
    DatasetFactory(name="extra")
    client.force_login(alice)
    assert b'id="calibration-card"' not in client.get("/").content
    client.force_login(bob)
    response = client.get("/")
    assert b'id="calibration-card"' in response.content
    assert b'data-calibration-dataset="core"' in response.content
    assert b'data-calibration-dataset="extra"' in response.content
    assert b"{#" not in response.content and b"{%" not in response.content
