"""The specs' dependency graph as SVG, readable at any size.

Layered top to bottom: a spec sits above everything it depends on, so arrows point down.
Layers wrap at a few boxes per row, so the drawing keeps its natural size in the workspace's
narrow left column and grows downwards with the spec count instead of shrinking its labels.
Every node is a link to its spec's card; declared edges are solid, observed ones dashed, both
thick (the page's legend says so), and each edge and node carries a tooltip.

Nothing here trusts its input: every text is escaped, the result is marked safe at the end.
"""

from __future__ import annotations

import math
from html import escape

from django.utils.safestring import SafeString, mark_safe

BOX_W, BOX_H = 86, 38
GAP_X, ROW_GAP, LAYER_GAP, PAD = 14, 14, 36, 10
# Four boxes fit the left column (about 360 px) at 90% or more; a longer layer wraps.
MAX_PER_ROW = 4


def layers(keys: list[str], edges: set[tuple[str, str]]) -> dict[str, int]:
    """Depth of each spec: one more than the deepest spec it depends on (0: depends on none)."""
    depth = dict.fromkeys(keys, 0)
    for _ in range(len(keys)):
        changed = False
        for source, target in edges:
            # A cycle stops growing at the spec count.
            if (
                source in depth
                and target in depth
                and depth[source] < depth[target] + 1 < len(keys)
            ):
                depth[source] = depth[target] + 1
                changed = True
        if not changed:
            break
    return depth


def _ordered_layers(specs: list, edges: list[dict], depth: dict[str, int]) -> list[list]:
    """Layers top (most dependent) to bottom, each ordered by where its neighbours above sit
    (one barycentre pass), which removes most crossings on graphs this small."""
    by_depth: dict[int, list] = {}
    for spec in specs:
        by_depth.setdefault(depth[spec.key], []).append(spec)
    ordered: list[list] = []
    position: dict[str, float] = {}
    for level in sorted(by_depth, reverse=True):
        members = by_depth[level]

        def centre(spec, members=members) -> float:
            above = [
                position[e["from"]] for e in edges if e["to"] == spec.key and e["from"] in position
            ]
            return sum(above) / len(above) if above else members.index(spec)

        members = sorted(members, key=lambda s: (centre(s), members.index(s)))
        for i, spec in enumerate(members):
            position[spec.key] = i
        ordered.append(members)
    return ordered


def _layout(specs: list, edges: list[dict]) -> tuple[dict, dict[str, int], int, int]:
    """Top-left corner of each spec's box, each spec's layer (0 at the top), the size."""
    keys = [s.key for s in specs]
    depth = layers(keys, {(e["from"], e["to"]) for e in edges})
    per_row = min(MAX_PER_ROW, max(1, len(specs)))
    width = PAD * 2 + per_row * BOX_W + (per_row - 1) * GAP_X
    pos: dict[str, tuple[float, float]] = {}
    layer_of: dict[str, int] = {}
    y = PAD
    for index, members in enumerate(_ordered_layers(specs, edges, depth)):
        if index:
            y += LAYER_GAP - ROW_GAP
        # A long layer wraps into rows of 4, 3, 4...: centred, each row sits half a box off
        # the one above, so edges from above pass between its boxes.
        start, number = 0, 0
        while start < len(members):
            room = per_row if number % 2 == 0 or per_row == 1 else per_row - 1
            row = members[start : start + room]
            row_w = len(row) * BOX_W + (len(row) - 1) * GAP_X
            x = (width - row_w) / 2
            for spec in row:
                pos[spec.key] = (x, y)
                layer_of[spec.key] = index
                x += BOX_W + GAP_X
            y += BOX_H + ROW_GAP
            start += room
            number += 1
    height = math.ceil(y - ROW_GAP + PAD)
    return pos, layer_of, width, height


def _edge_path(a: tuple[float, float], b: tuple[float, float], skips: bool, width: int) -> str:
    (x1, y1), (x2, y2) = a, b
    if skips:
        # Past a layer in between: around the side, so it never runs over the boxes between
        # (a straight drop would hide behind them, or over another edge).
        right = x1 + BOX_W / 2 >= width / 2 - 1
        sx = x1 + (BOX_W if right else 0)
        tx = x2 + (BOX_W if right else 0)
        sy, ty = y1 + BOX_H / 2, y2 + BOX_H / 2
        # Bézier control points: the curve bulges about 3/4 of that far, inside the drawing.
        reach = max(3, min(width - 3, max(sx, tx) + 44 if right else min(sx, tx) - 44))
        return f"M{sx:.0f},{sy:.0f} C{reach:.0f},{sy:.0f} {reach:.0f},{ty:.0f} {tx:.0f},{ty:.0f}"
    if y2 > y1 + BOX_H / 2:
        # Down to a dependency: bottom centre to top centre.
        sx, sy, tx, ty = x1 + BOX_W / 2, y1 + BOX_H, x2 + BOX_W / 2, y2
        bend = max(18.0, (ty - sy) / 2)
        return (
            f"M{sx:.0f},{sy:.0f} C{sx:.0f},{sy + bend:.0f} "
            f"{tx:.0f},{ty - bend:.0f} {tx:.0f},{ty:.0f}"
        )
    # Same row or upwards (a cycle): around the side that has more room.
    right = x1 + BOX_W / 2 < width / 2
    side = 1 if right else -1
    sx = x1 + (BOX_W if right else 0)
    tx = x2 + (BOX_W if right else 0)
    sy, ty = y1 + BOX_H / 2, y2 + BOX_H / 2
    reach = 26 + abs(sy - ty) / 4
    if abs(sy - ty) < 1:
        # Neighbours on one row: over the top, between their centres.
        sx, sy, tx, ty = x1 + BOX_W / 2, y1, x2 + BOX_W / 2, y2
        lift = min(y1, y2) - 16
        return f"M{sx:.0f},{sy:.0f} C{sx:.0f},{lift:.0f} {tx:.0f},{lift:.0f} {tx:.0f},{ty:.0f}"
    return (
        f"M{sx:.0f},{sy:.0f} C{sx + side * reach:.0f},{sy:.0f} "
        f"{tx + side * reach:.0f},{ty:.0f} {tx:.0f},{ty:.0f}"
    )


MARKERS = (("declared", 8), ("observed", 8), ("both", 9))


def edge_kind(edge: dict) -> str:
    if edge["declared"] and edge["observed"]:
        return "both"
    return "declared" if edge["declared"] else "observed"


def _evidence(edge: dict) -> str:
    return " and ".join(k for k in ("declared", "observed") if edge[k])


def is_dense(specs: list, edges: list[dict]) -> bool:
    """Too many edges for lines to be followed: the matrix shows them better."""
    return len(edges) > max(12, 2 * len(specs))


def adjacency(specs: list, edges: list[dict]) -> list[dict]:
    """The graph as a matrix, readable however dense: one row per spec, one cell per other
    spec, marked when the row's spec needs the column's (declared, observed, or both)."""
    by_pair = {(e["from"], e["to"]): e for e in edges}
    rows = []
    for spec in specs:
        cells = []
        for other in specs:
            edge = by_pair.get((spec.key, other.key))
            cell = {"to": other.key, "self": other.key == spec.key, "kind": ""}
            if edge is not None:
                cell["kind"] = edge_kind(edge)
                cell["title"] = (
                    f"{spec.key} needs {other.key} ({_evidence(edge)}) {edge.get('detail', '')}"
                ).strip()
            cells.append(cell)
        needs = sum(1 for c in cells if c["kind"])
        rows.append({"spec": spec, "cells": cells, "needs": needs})
    return rows


def _marker(name: str, size: int) -> str:
    # Sized in pixels, not in stroke widths: a thick "both" edge gets no giant arrowhead.
    return (
        f'<marker id="arrow-{name[0]}" viewBox="0 0 10 10" refX="9" refY="5" '
        f'markerWidth="{size}" markerHeight="{size}" markerUnits="userSpaceOnUse" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrow-{name}"/>'
        "</marker>"
    )


def dependency_svg(specs: list, edges: list[dict]) -> SafeString:
    """`specs`: objects with .key, .kind, .statement; `edges`: {from, to, declared, observed,
    detail} (review.selectors.workspace.merged_edges)."""
    if not specs:
        return mark_safe("")
    pos, layer_of, width, height = _layout(specs, edges)
    parts = [
        f'<svg class="depgraph" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" data-width="{width}" data-height="{height}" role="img" '
        f'aria-label="Dependency graph of the {len(specs)} specifications; the list below '
        f'says the same in words" xmlns="http://www.w3.org/2000/svg">',
        "<defs>" + "".join(_marker(name, size) for name, size in MARKERS) + "</defs>",
    ]
    kinds = {(e["from"], e["to"]): edge_kind(e) for e in edges}
    drawn: set[tuple[str, str]] = set()
    for edge in edges:
        source, target = edge["from"], edge["to"]
        if source not in pos or target not in pos or (source, target) in drawn:
            continue
        kind = kinds[(source, target)]
        marker = f"arrow-{kind[0]}"
        # Specs that need each other the same way get one line with two heads, not two.
        mutual = kinds.get((target, source)) == kind
        drawn |= {(source, target), (target, source)} if mutual else {(source, target)}
        text = f"{source} depends on {target} ({_evidence(edge)}) {edge.get('detail', '')}"
        if mutual:
            text = f"{source} and {target} depend on each other ({_evidence(edge)})"
        skips = abs(layer_of[target] - layer_of[source]) > 1
        path = _edge_path(pos[source], pos[target], skips, width)
        # A pale halo under each edge keeps crossing edges apart.
        parts.append(f'<path class="edge-halo" d="{path}"/>')
        start = f' marker-start="url(#{marker})"' if mutual else ""
        parts.append(
            f'<path class="edge {kind}" data-edge="{escape(source)}->{escape(target)}" '
            f'd="{path}" marker-end="url(#{marker})"{start}>'
            f"<title>{escape(text.strip())}</title></path>"
        )
    for spec in specs:
        x, y = pos[spec.key]
        key, kind = escape(spec.key), escape(spec.kind)
        statement = escape(" ".join(str(spec.statement).split())[:240])
        # The longest kinds ("error-handling", "compatibility") are squeezed into the box.
        squeeze = (
            f' textLength="{BOX_W - 14}" lengthAdjust="spacingAndGlyphs"'
            if len(spec.kind) > 11
            else ""
        )
        parts.append(
            f'<a href="#spec-{key}" class="node kind-{kind}" data-spec="{key}">'
            f"<title>{key} ({kind}): {statement}</title>"
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{BOX_W}" height="{BOX_H}" rx="6"/>'
            f'<text x="{x + 9:.0f}" y="{y + 17:.0f}" class="key">{key}</text>'
            f'<text x="{x + 9:.0f}" y="{y + 32:.0f}" class="kind"{squeeze}>{kind}</text></a>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every text above is escaped
