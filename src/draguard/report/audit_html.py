"""The audit as one self-contained HTML page (no script, no external resource): the summary and
score, the pool view as inline SVG plots (a heat map of device use per node, bars of
allocatable and stranded capacity per profile, the histogram of the largest placeable
profile per GPU) and the findings by severity."""

from __future__ import annotations

from html import escape

from .audit import _where
from .page_style import STYLE
from .prose import sentence

_CELL, _PER_ROW = 14, 50
_EXTRA_STYLE = "svg text{font:11px system-ui,sans-serif} .plot{margin:.5rem 0 1.5rem}"


def _colour(fraction: float) -> str:
    """White (unused) to deep red (full)."""
    level = int(235 - 175 * max(0.0, min(1.0, fraction)))
    return f"rgb(235,{level},{level})"


def heat_map(nodes) -> str:
    """One cell per node, coloured by its allocated share of devices, in rows of 50."""
    if not nodes:
        return '<p class="muted">No node publishes devices.</p>'
    rows = (len(nodes) + _PER_ROW - 1) // _PER_ROW
    cells = []
    for i, node in enumerate(nodes):
        x, y = (i % _PER_ROW) * _CELL, (i // _PER_ROW) * _CELL
        share = node.allocated / node.total if node.total else 0.0
        cells.append(f'<rect class="node" x="{x}" y="{y}" width="{_CELL - 2}" height="{_CELL - 2}" '
                     f'fill="{_colour(share)}" stroke="#999" stroke-width=".5" data-node="{escape(node.name)}">'
                     f"<title>{escape(node.name)}: {node.allocated}/{node.total} allocated, {node.tainted} tainted"
                     "</title></rect>")
    width, height = min(len(nodes), _PER_ROW) * _CELL, rows * _CELL
    return (f'<svg class="plot" id="heat-map" width="{width}" height="{height}" role="img" '
            f'aria-label="allocated share of devices per node">{"".join(cells)}</svg>')


def bars(series_id: str, values: dict, unit: str = "") -> str:
    """Horizontal bars, one per key, scaled to the largest value."""
    if not values:
        return '<p class="muted">Nothing to plot.</p>'
    top = max(values.values()) or 1
    rows = []
    for i, (label, value) in enumerate(values.items()):
        width = 300 * value / top
        shown = f"{value:.0%}" if unit == "%" else str(value)
        rows.append(f'<text x="0" y="{i * 20 + 14}">{escape(label)}</text>'
                    f'<rect class="bar" x="120" y="{i * 20 + 3}" width="{width:.1f}" height="14" fill="#4a7bd0" '
                    f'data-label="{escape(label)}" data-value="{value}"></rect>'
                    f'<text x="{126 + width:.1f}" y="{i * 20 + 14}">{shown}</text>')
    return (f'<svg class="plot" id="{series_id}" width="480" height="{len(values) * 20 + 6}" role="img">'
            f'{"".join(rows)}</svg>')


def render(result) -> str:
    from .audit import document

    data = document(result)
    summary, cluster = data["summary"], data["pools"]["cluster"]
    snapshot = data["snapshot"]
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', "<title>draguard audit</title>",
        f"<style>{STYLE}{_EXTRA_STYLE}</style></head><body>",
        f"<h1>draguard audit: {escape(snapshot['source'] or 'snapshot')}</h1>",
        f'<p class="muted">Kubernetes {escape(snapshot["serverVersion"] or "?")}, captured '
        f'{escape(snapshot["capturedAt"])}; {summary["objects"]} objects</p>',
        f'<p class="counts"><span class="score">score {summary["score"]} ({summary["grade"]})</span>'
        + "".join(f'<span class="{s}">{summary[k]} {s}</span>'
                  for s, k in (("error", "errors"), ("warning", "warnings"), ("info", "info"))) + "</p>",
        "<h2>Devices per node</h2>",
        f'<p class="muted">{cluster["devices"]["total"]} devices on {cluster["nodes"]} nodes: '
        f'{cluster["devices"]["allocated"]} allocated, {cluster["devices"]["free"]} free, '
        f'{cluster["devices"]["tainted"]} tainted; utilization {cluster["utilization"]:.0%}. '
        "Darker is fuller.</p>",
        heat_map(result.pools.nodes),
        "<h2>Allocatable now, per profile</h2>", bars("allocatable", cluster["allocatable"]),
        "<h2>Stranded capacity, per profile</h2>", bars("stranded", cluster["stranded"], "%"),
        "<h2>Largest placeable profile, per GPU</h2>", bars("largest-placeable", cluster["largestPlaceable"]),
        "<h2>Findings</h2>",
    ]
    for f in result.findings:
        parts.append(f'<div class="finding"><span class="sev {f.severity}">{f.severity}</span> '
                     f"<b>{escape(f.rule)}</b> <span class=\"where\">{escape(_where(f))}</span>"
                     f"<p>{escape(sentence(f.message))}</p>"
                     + (f'<p class="muted">{escape(sentence(f.help))}</p>' if f.help else "") + "</div>")
    if not result.findings:
        parts.append('<p class="muted">No findings.</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
