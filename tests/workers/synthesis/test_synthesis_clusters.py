from workers.sandbox import types as sandbox
from workers.synthesis.candidates import CandidatePolicy, select_candidates
from workers.synthesis.clusters import form_clusters
from workers.synthesis.coverage_map import build_coverage_map, normalise_context


def test_coverage_maps_tests_to_functions_by_body_lines(shop_analysis):
    _, table, _, cmap = shop_analysis
    assert cmap.tests_of["shop/cart.py::Cart.close"] == {"tests/test_cart.py::TestCart::test_close"}
    assert (
        "shop/pricing.py::discounted"
        in cmap.functions_of["tests/test_pricing.py::test_discounted[0-12.0]"]
    )
    # A def line alone (run at import) does not make a test cover the function.
    net = table.functions["shop/pricing.py::net_price"]
    only_def = {"tests/test_pricing.py::test_net_price": {net.path: [net.def_line]}}
    results = {
        "tests/test_pricing.py::test_net_price": sandbox.TestResult("x", sandbox.Outcome.PASSED)
    }
    assert build_coverage_map(table, only_def, results).tests_of == {}


def test_failing_tests_do_not_count_and_phases_merge(shop_analysis):
    _, table, _, _ = shop_analysis
    net = table.functions["shop/pricing.py::net_price"]
    coverage = {
        "t.py::a|setup": {net.path: [net.body_start]},
        "t.py::b": {net.path: [net.body_start]},
        "": {net.path: [net.body_start]},
    }
    results = {
        "t.py::a": sandbox.TestResult("t.py::a", sandbox.Outcome.PASSED),
        "t.py::b": sandbox.TestResult("t.py::b", sandbox.Outcome.FAILED),
    }
    cmap = build_coverage_map(table, coverage, results)
    assert cmap.tests_of[net.id] == {"t.py::a"}
    assert net.id in cmap.import_time
    assert normalise_context("t.py::a|run") == "t.py::a"


def test_candidates_need_a_real_covered_body(shop_analysis):
    _, table, _, cmap = shop_analysis
    candidates, skipped = select_candidates(table, cmap)
    assert "shop/cart.py::Cart.close" in candidates
    assert "shop/pricing.py::net_price" in candidates
    assert all(not c.startswith("tests/") for c in candidates)
    assert skipped == {} or all(reason for reason in skipped.values())


def test_a_library_every_test_runs_is_still_a_candidate(shop_analysis):
    """When the share cap would leave nothing (a small library whose every function most of
    the suite runs), the widely covered functions are the candidates."""
    _, table, _, cmap = shop_analysis
    strict = CandidatePolicy(max_cover_share=0.0, max_cover_share_floor=0)
    candidates, skipped = select_candidates(table, cmap, strict)
    assert candidates == select_candidates(table, cmap)[0]
    assert "covered by most of the suite" not in skipped.values()


def clusters_for(shop_analysis, seed, wanted=4):
    _, table, graph, cmap = shop_analysis
    candidates, _ = select_candidates(table, cmap)
    return form_clusters(candidates, graph, cmap, table, seed=seed, wanted=wanted)


def test_clusters_are_disjoint_coupled_and_sized_two_to_four(shop_analysis):
    for seed in range(20):
        clusters = clusters_for(shop_analysis, seed)
        assert clusters
        seen: set[str] = set()
        for cluster in clusters:
            assert 2 <= len(cluster.functions) <= 4
            assert not seen & set(cluster.functions)
            seen |= set(cluster.functions)
            assert cluster.cohesion > 0


def test_same_seed_gives_same_clusters_and_seeds_vary(shop_analysis):
    runs = {seed: clusters_for(shop_analysis, seed) for seed in range(12)}
    assert clusters_for(shop_analysis, 3) == runs[3]
    assert len({tuple(c.functions for c in clusters) for clusters in runs.values()}) > 1


def test_per_module_cap_spreads_clusters(shop_analysis):
    _, table, graph, cmap = shop_analysis
    candidates, _ = select_candidates(table, cmap)
    for seed in range(10):
        clusters = form_clusters(
            candidates, graph, cmap, table, seed=seed, wanted=1, per_module_cap=1
        )
        modules = [m for c in clusters for m in {table.functions[f].module for f in c.functions}]
        assert len(modules) == len(set(modules))
