"""A simulation as one self-contained HTML page (no script, no external resource), in the
lint and audit reports' style: the verdict (with the deadlock's chain and remedy), the pods by
state over time and the devices held as inline SVG line plots, a device-by-time Gantt chart
(which pod held which device when, old revision and new told apart) and the timeline."""

from __future__ import annotations

from html import escape

from .page_style import STYLE

_PHASES = ("Pending", "Starting", "Running", "Succeeded", "Terminating")
_COLOURS = {"Pending": "#d9822b", "Starting": "#8e6fd0", "Running": "#2f9e44", "Succeeded": "#868e96",
            "Terminating": "#c92a2a",
            "devicesAllocated": "#4a7bd0"}
_PALETTE = ("#1971c2", "#e8590c", "#2b8a3e", "#862e9c", "#c2255c", "#5c940d", "#0b7285", "#5f3dc4")
_EXTRA_STYLE = ("svg text{font:11px system-ui,sans-serif} .plot{margin:.5rem 0 1.5rem} "
                ".chain{margin:.2rem 0 .2rem 1rem} table.timeline td{padding:0 .6rem 0 0}")
_WIDTH, _HEIGHT, _LEFT = 640, 160, 40


def _x(time: float, end: float) -> float:
    return _LEFT + (_WIDTH - _LEFT - 10) * (time / end if end else 0)


def lines(plot_id: str, samples: list[dict], series: dict, end: float, colours: dict | None = None) -> str:
    """Step lines, one per series (name -> value of a sample), time on x."""
    colours = colours or _COLOURS
    top = max([value(s) for s in samples for value in series.values()] + [1])
    paths = []
    for name, value in series.items():
        points, last = [], None
        for s in samples:
            y = _HEIGHT - 20 - (_HEIGHT - 44) * value(s) / top  # below the legend
            if last is not None:
                points.append(f"{_x(s['time'], end):.1f},{last:.1f}")
            points.append(f"{_x(s['time'], end):.1f},{y:.1f}")
            last = y
        paths.append(f'<polyline class="series" data-series="{name}" fill="none" stroke="{colours[name]}" '
                     f'stroke-width="2" points="{" ".join(points)}"><title>{name}</title></polyline>')
    legend = "".join(f'<text x="{_LEFT + i * 110}" y="12" fill="{colours[n]}">{n}</text>'
                     for i, n in enumerate(series))
    axis = (f'<text x="0" y="{_HEIGHT - 20}">0</text><text x="0" y="28">{top}</text>'
            f'<text x="{_LEFT}" y="{_HEIGHT - 4}">0 s</text><text x="{_WIDTH - 60}" y="{_HEIGHT - 4}">{end:.0f} s</text>')
    return (f'<svg class="plot" id="{plot_id}" width="{_WIDTH}" height="{_HEIGHT}" role="img">'
            f'{legend}{axis}{"".join(paths)}</svg>')


def _allocatable(samples: list[dict], end: float) -> str:
    profiles = sorted({p for s in samples for p in s["allocatable"]} | {p for s in samples for p in s["stranded"]})
    if not profiles:
        return '<p class="muted">No profile.</p>'
    colours = {p: _PALETTE[i % len(_PALETTE)] for i, p in enumerate(profiles)}
    series = {p: (lambda s, p=p: s["allocatable"].get(p, 0)) for p in profiles}
    return lines("allocatable", samples, series, end, colours)


def gantt(holds, end: float) -> str:
    """A row per device, a bar per pod that held it: pods placed before the simulated steps
    grey, those placed during them blue. `holds`: (hold, placed during the steps)."""
    devices = sorted({h.device for h, _ in holds})
    if not devices:
        return '<p class="muted">No device was held.</p>'
    row = {d: i for i, d in enumerate(devices)}
    bars = []
    for h, placed in holds:
        x0, x1 = _x(h.start, end), _x(h.end if h.end is not None else end, end)
        colour = "#4a7bd0" if placed else "#adb5bd"
        bars.append(f'<rect class="hold" x="{x0:.1f}" y="{row[h.device] * 18 + 4}" width="{max(x1 - x0, 1):.1f}" '
                    f'height="14" fill="{colour}" data-device="{escape(h.device)}" data-pod="{escape(h.pod)}">'
                    f"<title>{escape(h.pod)} on {escape(h.device)}: {h.start:.1f} to "
                    f"{'the end' if h.end is None else f'{h.end:.1f}'} s</title></rect>")
    labels = "".join(f'<text x="{_WIDTH + 4}" y="{i * 18 + 15}">{escape(d)}</text>' for d, i in row.items())
    return (f'<svg class="plot" id="gantt" width="{_WIDTH + 220}" height="{len(devices) * 18 + 8}" role="img" '
            f'aria-label="which pod held which device when">{"".join(bars)}{labels}</svg>')


def render(simulation, heading: str, subtitle: str) -> str:
    """`simulation`: a rollout's or a drain's (simulate.rollout.Recorded with a verdict)."""
    verdict = simulation.verdict
    timeline = simulation.timeline()
    end = max(verdict.seconds if verdict.ok else max((r.time for r in timeline), default=0.0), 1.0)
    samples = [s for s in simulation.samples() if s["time"] <= end]
    holds = [h for h in simulation.world.holds if h.end is None or h.end >= simulation.start]
    shifted = [(type(h)(h.device, h.pod, max(h.start - simulation.start, 0.0),
                        None if h.end is None else h.end - simulation.start), h.start >= simulation.start)
               for h in holds]
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', "<title>draguard simulate</title>",
        f"<style>{STYLE}{_EXTRA_STYLE}</style></head><body>",
        f"<h1>draguard simulate: {escape(heading)}</h1>", f'<p class="muted">{escape(subtitle)}</p>',
        f'<p class="counts"><span class="{"info" if verdict.ok else "error"}">{escape(verdict.said)}</span></p>',
    ]
    parts += [f'<p class="chain">{"&larr; " if i else ""}{escape(link)}</p>' for i, link in enumerate(verdict.chain)]
    if verdict.remedy:
        parts.append(f"<p><b>Remedy:</b> {escape(verdict.remedy)}</p>")
    parts += [
        "<h2>Pods by state</h2>",
        lines("pods", samples, {p: (lambda s, p=p: s["pods"].get(p, 0)) for p in _PHASES}, end),
        "<h2>Devices held</h2>", lines("devices", samples, {"devicesAllocated": lambda s: s["devicesAllocated"]}, end),
        "<h2>Allocatable per profile</h2>",
        '<p class="muted">How many more devices of each profile could be allocated (KEP-5677\'s count; '
        "dra.pools).</p>", _allocatable(samples, end),
        "<h2>Devices over time</h2>",
        '<p class="muted">Grey: pods placed before; blue: pods placed during the simulated steps.</p>',
        gantt(shifted, end),
        "<h2>Timeline</h2>", '<table class="timeline">',
    ]
    parts += [f"<tr><td>{r.time:.1f} s</td><td>{escape(r.what)}</td><td>{escape(r.pod)}</td>"
              f"<td>{escape(r.detail)}</td></tr>" for r in timeline]
    parts.append("</table></body></html>")
    return "\n".join(parts) + "\n"
