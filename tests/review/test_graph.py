"""review.graph: the specs' dependency graph keeps readable boxes at any spec count (it grows
instead of shrinking), links every node to its spec, tells declared from observed edges, and
escapes everything."""

import re
from types import SimpleNamespace

import pytest
from django.urls import reverse

from review import graph, services
from tests.review.scenario import many_specs_task

HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'


def _specs(n):
    return [SimpleNamespace(key=f"S{i}", kind="functional", statement="s") for i in range(1, n + 1)]


def _size(svg: str) -> tuple[int, int]:
    width, height = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg).groups()
    return int(width), int(height)


def test_it_grows_with_the_spec_count_instead_of_shrinking_its_boxes():
    small = str(graph.dependency_svg(_specs(3), []))
    large = str(graph.dependency_svg(_specs(14), []))
    # Boxes keep their size; the drawing stays narrow enough for the left column and grows
    # downwards (14 independent specs wrap into rows).
    assert 'width="86" height="38"' in small and 'width="86" height="38"' in large
    assert _size(large)[0] <= 420
    assert _size(large)[1] > 3 * _size(small)[1] / 2
    # The SVG is drawn at its natural size (width and height attributes in pixels).
    width, height = _size(large)
    assert f'width="{width}" height="{height}"' in large


def test_a_spec_sits_above_what_it_depends_on():
    specs = _specs(3)
    edges = [
        {"from": "S1", "to": "S2", "declared": True, "observed": False, "detail": ""},
        {"from": "S2", "to": "S3", "declared": True, "observed": False, "detail": ""},
    ]
    svg = str(graph.dependency_svg(specs, edges))
    ys = {
        k: int(y)
        for k, y in re.findall(r'data-spec="(S\d)"><title>.*?<rect x="\d+" y="(\d+)"', svg)
    }
    assert ys["S1"] < ys["S2"] < ys["S3"]


def test_every_node_links_to_its_spec_card():
    svg = str(graph.dependency_svg(_specs(4), []))
    for n in range(1, 5):
        assert f'<a href="#spec-S{n}" class="node kind-functional" data-spec="S{n}">' in svg


def test_declared_observed_and_both_edges_are_told_apart():
    specs = _specs(3)
    edges = [
        {"from": "S1", "to": "S2", "declared": True, "observed": True, "detail": ""},
        {"from": "S3", "to": "S2", "declared": False, "observed": True, "detail": "t fails"},
        {"from": "S3", "to": "S1", "declared": True, "observed": False, "detail": ""},
    ]
    svg = str(graph.dependency_svg(specs, edges))
    assert 'class="edge both"' in svg and 'marker-end="url(#arrow-b)"' in svg
    assert 'class="edge observed"' in svg and 'marker-end="url(#arrow-o)"' in svg
    assert 'class="edge declared"' in svg and 'marker-end="url(#arrow-d)"' in svg
    assert "S3 depends on S2 (observed) t fails" in svg


def test_an_edge_past_a_layer_goes_around_the_boxes_between():
    specs = _specs(3)
    edges = [
        {"from": "S1", "to": "S2", "declared": True, "observed": False, "detail": ""},
        {"from": "S2", "to": "S3", "declared": True, "observed": False, "detail": ""},
        {"from": "S1", "to": "S3", "declared": False, "observed": True, "detail": ""},
    ]
    svg = str(graph.dependency_svg(specs, edges))
    straight = re.search(r'data-edge="S1->S2" d="M(\d+),', svg).group(1)
    around = re.search(r'data-edge="S1->S3" d="M(\d+),', svg).group(1)
    assert around != straight  # leaves from the side, not down through S2


def test_everything_is_escaped():
    specs = [SimpleNamespace(key=HOSTILE, kind="functional", statement=HOSTILE)]
    specs.append(SimpleNamespace(key="S2", kind=HOSTILE, statement="x"))
    edges = [{"from": HOSTILE, "to": "S2", "declared": True, "observed": True, "detail": HOSTILE}]
    svg = str(graph.dependency_svg(specs, edges))
    assert "<script" not in svg and "<img" not in svg and 'onerror=alert(2)"' not in svg


def test_no_specs_no_graph():
    assert str(graph.dependency_svg([], [])) == ""


@pytest.mark.django_db
def test_the_task_page_shows_the_graph_its_legend_and_the_same_graph_as_a_list(
    client, alice, dataset
):
    task = many_specs_task(dataset=dataset, specs=14)
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    html = client.get(reverse("review-task", args=[task.pk])).content.decode()
    assert html.count('class="node kind-') == 14
    assert "observed in validation" in html and "declared" in html
    assert "data-graph-zoom" in html and "data-graph-enlarge" in html
    listing = html.split("data-graph-list")[1].split("</details>")[0]
    assert listing.count("<li>") == 14 and "needs" in listing
    # The graph comes before the spec cards, right after the statement.
    assert html.index("spec-graph") < html.index('id="spec-S1"')
    assert html.index('id="statement"') < html.index("spec-graph")


def _edge(a, b, declared=False, observed=True):
    return {"from": a, "to": b, "declared": declared, "observed": observed, "detail": ""}


def test_specs_that_need_each_other_get_one_line_with_two_heads():
    edges = [_edge("S1", "S2"), _edge("S2", "S1"), _edge("S2", "S3", True, False)]
    svg = str(graph.dependency_svg(_specs(3), edges))
    assert svg.count('class="edge observed"') == 1 and 'marker-start="url(#arrow-o)"' in svg
    assert "S1 and S2 depend on each other (observed)" in svg
    assert svg.count('class="edge declared"') == 1


def test_a_dense_graph_is_also_a_matrix():
    specs = _specs(5)
    edges = [_edge(a.key, b.key) for a in specs for b in specs if a is not b]
    edges[0]["declared"] = True
    assert graph.is_dense(specs, edges) and not graph.is_dense(specs, edges[:3])
    rows = graph.adjacency(specs, edges)
    assert [r["spec"].key for r in rows] == ["S1", "S2", "S3", "S4", "S5"]
    first = rows[0]["cells"]
    assert first[0]["self"] and not first[0]["kind"]
    assert first[1]["kind"] == "both" and first[1]["title"] == "S1 needs S2 (declared and observed)"
    assert first[2]["kind"] == "observed" and rows[0]["needs"] == 4
