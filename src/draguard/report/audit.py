"""Audit reports: text (the summary first, then findings by severity), JSON (documented in the
README, "Audit JSON report"), SARIF (the lint writer's, on the audit's findings) and the
Prometheus text exposition (for a CronJob or node-exporter's textfile collector). The HTML
report is `audit_html`."""

from __future__ import annotations

import json

from ..core.finding import Finding, Severity
from .prose import printable, sentence

AUDIT_VERSION = 1
FORMATS = ("text", "json", "sarif", "prometheus", "html")


def render(name: str, result, **options) -> str:
    if name == "sarif":
        from .sarif import render as sarif

        return sarif(result.lint, **options)
    if name == "html":
        from .audit_html import render as html

        return html(result)
    return {"text": text, "json": json_text, "prometheus": prometheus}[name](result, **options)


def document(result) -> dict:
    """The report as data: snapshot, summary (with the score), what was not read or run, the
    pool view and the findings."""
    summary = result.lint.summary()
    del summary["files"], summary["refused"]
    summary.update(result.score())
    return {"version": AUDIT_VERSION, "snapshot": result.snapshot.header(), "summary": summary,
            "skipped": {rule: {"needs": needs} for rule, needs in sorted(result.skipped.items())},
            "pools": result.pools.as_json(), "findings": [f.as_json() for f in result.findings]}


def json_text(result, **_) -> str:
    return json.dumps(document(result), indent=2, ensure_ascii=False) + "\n"


def _where(f: Finding) -> str:
    if f.location.line:
        return f"{f.file}:{f.line}:{f.column}"
    return f"{f.obj} at {f.location.dotted}" if f.location.dotted else str(f.obj)


def _gates_apart(config) -> dict:
    """The gates the audit judged with that the release's defaults set otherwise (read from
    the cluster, or said in the config or on the command line)."""
    from ..facts.gates import gate_enabled

    return {gate: enabled for gate, enabled in sorted(config.feature_gates.items())
            if enabled != gate_enabled(gate, config.kube_version, {})}


def text(result, **_) -> str:
    snapshot, score = result.snapshot, result.score()
    s = result.lint.summary()
    cluster = result.pools.summary()
    devices = cluster["devices"]
    when = snapshot.header()["capturedAt"] + ("" if snapshot.time_known else " (no capture time in the dump: "
                                                                               "judged as of now; pass --at)")
    out = [f"draguard audit of {snapshot.source or 'a snapshot'}"
           + (f" (Kubernetes {snapshot.server_version})" if snapshot.server_version else "") + f", captured {when}",
           f"score {score['score']} ({score['grade']}): {s['errors']} errors, {s['warnings']} warnings, {s['info']} "
           f"info in {s['objects']} objects",
           f"devices: {devices['total']} total, {devices['allocated']} allocated, {devices['free']} free, "
           f"{devices['tainted']} tainted on {cluster['nodes']} nodes; utilization {cluster['utilization']:.0%}"]
    if cluster["allocatable"]:
        out.append("allocatable now: " + ", ".join(f"{p} {n}" for p, n in cluster["allocatable"].items()))
        stranded = {p: v for p, v in cluster["stranded"].items() if v}
        out.append("stranded: " + (", ".join(f"{p} {v:.0%}" for p, v in stranded.items()) or "none"))
        out.append("largest placeable per GPU: " + ", ".join(f"{p} x{n}" for p, n in
                                                            cluster["largestPlaceable"].items()))
    apart = _gates_apart(result.lint.config)
    if apart:
        out.append(f"feature gates apart from {result.lint.config.kube_version}'s defaults: " + ", ".join(
            f"{gate} {'on' if enabled else 'off'}" for gate, enabled in apart.items()))
    for name, why in sorted(snapshot.unreadable.items()):
        out.append(f"not read: {name}: {why}")
    for rule, needs in sorted(result.skipped.items()):
        out.append(f"skipped: {rule} (needs {', '.join(needs)})")
    for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        group = [f for f in result.findings if f.severity is severity]
        if group:
            out += ["", f"{str(severity).upper()}S ({len(group)})"]
        for f in group:
            out.append(f"{printable(_where(f))}: [{f.rule}] {sentence(f.message)}")
            if f.help:
                out.append(f"    = help: {sentence(f.help)}")
    return "\n".join(out) + "\n"


def prometheus(result, **_) -> str:
    """The exposition format as prometheus_client writes it (help, type, escaping)."""
    from prometheus_client import CollectorRegistry, Gauge, generate_latest

    registry = CollectorRegistry()

    def gauge(name, help_, labels=()):
        return Gauge(f"draguard_{name}", help_, list(labels), registry=registry)

    score = result.score()
    gauge("audit_score", "draguard audit score, 0-100 (README: Audit score)").set(score["score"])
    gauge("audit_capture_timestamp_seconds", "when the audited snapshot was read").set(
        result.snapshot.captured_at.timestamp())
    findings = gauge("audit_findings", "findings by rule and severity", ("rule", "severity"))
    counts: dict = {}
    for f in result.findings:
        counts[(f.rule, str(f.severity))] = counts.get((f.rule, str(f.severity)), 0) + 1
    for (rule, severity), n in sorted(counts.items()):
        findings.labels(rule, severity).set(n)
    devices = gauge("node_devices", "DRA devices per node by state", ("node", "node_pool", "state"))
    utilization = gauge("node_dra_utilization", "DRA utilization per node, as the cluster autoscaler computes it",
                        ("node", "node_pool"))
    allocatable = gauge("node_allocatable_devices", "devices of each profile that still fit per node (KEP-5677)",
                        ("node", "node_pool", "profile"))
    for node in result.pools.nodes:
        for state in ("allocated", "free", "tainted"):
            devices.labels(node.name, node.node_pool, state).set(getattr(node, state))
        utilization.labels(node.name, node.node_pool).set(node.utilization)
        for profile, n in sorted(node.allocatable().items()):
            allocatable.labels(node.name, node.node_pool, profile).set(n)
    stranded = gauge("stranded_ratio", "1 - allocatable now / allocatable after the best repacking, per profile",
                     ("profile",))
    for profile, value in result.pools.stranded().items():
        stranded.labels(profile).set(value)
    return generate_latest(registry).decode()


def watch_lines(stamp: str, appeared, resolved) -> list[str]:
    """`--watch` output: `+ TIME severity [rule] object: message` for a finding that appeared,
    `- TIME severity [rule] object` for one that resolved."""
    return ([f"+ {stamp} {f.severity} [{f.rule}] {printable(str(f.obj))}: {sentence(f.message)}" for f in appeared] +
            [f"- {stamp} {f.severity} [{f.rule}] {printable(str(f.obj))}" for f in resolved])
