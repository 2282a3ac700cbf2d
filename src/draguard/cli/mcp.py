"""`draguard mcp`: draguard as a Model Context Protocol server (the official `mcp` SDK), for
the AI assistants that write manifests. Tools, with JSON schemas from their signatures: lint
(manifest text or paths), rules, explain, allocate (claims on an inventory, with the reason a
claim does not fit), fix (a diff; it writes only when asked). stdio by default, streamable
HTTP with --http. Simulate and audit come with their commands.

The tools' clients are hostile until shown otherwise. Every path a tool reads or writes (and
the `.draguard.yaml` it finds, and what that names) must resolve, links followed, inside the
workspace: the server's roots (each --root, else its working folder), narrowed to the
file:// roots the client declares when it declares the roots capability (a client narrows,
never widens). Over HTTP every request carries the server's bearer token, and a page of
another origin is refused (403): a browser may reach a loopback port too."""

from __future__ import annotations

import functools
import inspect
import os
import sys
import tempfile
from contextlib import contextmanager, nullcontext
from typing import Any

from ..core.confine import Outside, Roots, active, confined
from ..core.errors import EXIT_ERROR, UsageError
from .mcp_http import TOKEN_VARIABLE


def arguments(name, parser) -> None:
    parser.description = (
        "Serve draguard's tools over the Model Context Protocol. The tools read and write only inside "
        "the workspace: the --root folders (default: the working folder), narrowed to the roots the "
        "client declares. --http serves streamable HTTP, on 127.0.0.1 by default; each request must carry "
        "'Authorization: Bearer TOKEN' and no Origin but a loopback one.")
    parser.add_argument("--root", action="append", metavar="DIR",
                        help="a folder the tools may read and write (repeatable; default: the working folder)")
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1",
                        help="with --http: the address to bind (default 127.0.0.1; any other is warned about)")
    parser.add_argument("--port", type=int, default=8765, help="with --http (default 8765)")
    parser.add_argument("--token", help=f"with --http: the bearer token (default: ${TOKEN_VARIABLE}, which other "
                                        "local users cannot see in the process list; else one generated and "
                                        "printed once on stderr)")


def run(args) -> int:
    roots = _server_roots(args.root or [os.getcwd()])
    try:
        server = build_server(roots)
    except ImportError:
        sys.stderr.write("draguard: the MCP server needs the mcp package: pip install 'draguard[mcp]'\n")
        return EXIT_ERROR
    _quiet_roots_deprecation()
    if args.http:
        from . import mcp_http

        mcp_http.serve(server, args.host, args.port, args.token)
    else:
        from . import mcp_stdio

        mcp_stdio.serve(server)
    return 0


def _server_roots(folders: list[str]) -> Roots:
    for folder in folders:
        if not os.path.isdir(folder):
            raise UsageError(f"--root {folder}: not a folder")
    return Roots.of(folders)


def _quiet_roots_deprecation() -> None:
    """The SDK warns, at the first roots/list, that protocol 2026-07-28 deprecates roots: the
    clients of the earlier versions declare them, and they are asked."""
    import warnings

    from mcp.shared.exceptions import MCPDeprecationWarning

    warnings.filterwarnings("ignore", "The roots capability is deprecated", MCPDeprecationWarning)


def build_server(roots: Roots):
    from mcp.server.mcpserver import MCPServer

    from .. import __version__

    tools: list = []
    tool = _registering(tools, roots)

    @tool
    def lint(workspace: Roots, manifest: str = "", paths: list[str] | None = None, kube_version: str = "",
             feature_gates: str = "", reference: list[str] | None = None) -> dict[str, Any]:
        """Lint Kubernetes manifests: YAML/JSON text in `manifest`, or files, folders, Helm
        charts and Kustomize folders in `paths`; `reference`: paths read only for what rules
        read across files (the template a pod names), not judged; every path must lie in the
        workspace (the server's roots, narrowed to the client's). Returns draguard's JSON
        report (version 2): each finding with its rule, severity, message, file, line,
        column, path and fix."""
        from ..engine.lint import Reading, lint_paths
        from ..report.json_report import document

        config = _config(workspace, kube_version, feature_gates, paths)
        with _inputs(manifest, paths) as inputs:
            result = lint_paths(inputs, config, Reading(reference=tuple(reference or ())))
        return document(result)

    @tool
    def rules() -> list[dict]:
        """draguard's rule catalog: id, category, severity, what each checks, its fixability."""
        from ..rules import REGISTRY

        return [rule.describe() for rule in REGISTRY]

    @tool
    def explain(rule_id: str) -> str:
        """A rule's documentation in markdown: why it matters, failing and passing examples,
        settings, how to suppress it."""
        from ..generate.docs import rule_markdown
        from ..rules import REGISTRY

        rule = REGISTRY.get(rule_id)
        if rule is None:
            raise ValueError(f"unknown rule '{rule_id}' (the rules tool lists them)")
        return rule_markdown(rule)

    @tool
    def allocate(workspace: Roots, claims: str, inventory: str, kube_version: str = "",
                 feature_gates: str = "") -> list[dict]:
        """Allocate ResourceClaims / ResourceClaimTemplates (YAML text) in order on an inventory
        (ResourceSlices, Nodes, DeviceClasses, allocated claims; YAML text) as the scheduler's
        allocator would; for a claim that does not fit, why, per request."""
        from .allocate import allocate as run_allocate, as_json

        config = _config(workspace, kube_version, feature_gates, [])
        with _inputs(claims, None) as claim_files, _inputs(inventory, None) as inventory_files:
            report, notes, variant = run_allocate(claim_files, inventory_files, config.kube_version,
                                                  config.feature_gates)
        return as_json(report, variant) + [{"note": note} for note in notes]

    @tool
    def simulate(workspace: Roots, manifests: str, inventory: str, deployment: str = "", kube_version: str = "",
                 horizon: float = 3600.0, feature_gates: str = "") -> dict[str, Any]:
        """Simulate the next rollout of a Deployment (YAML text, with the ResourceClaimTemplates
        it uses) on an inventory (ResourceSlices and Nodes, YAML text) over time: the verdict
        (`completes` with the time, or `deadlock` with the chain of what waits for what and
        the smallest strategy change that finishes), the timeline and the devices held."""
        from ..core.amounts import is_amount
        from .simulate import Setting, as_json, simulate as run_simulate

        if not is_amount(horizon, positive=True):
            raise ValueError(f"horizon: seconds, a finite number above 0, not {horizon!r}")
        config = _config(workspace, kube_version, feature_gates, [])
        with _inputs(manifests, None) as manifest_files, _inputs(inventory, None) as inventory_files:
            setting = Setting(inventory_files, horizon=horizon, kube_version=config.kube_version,
                              gates=config.feature_gates)
            return as_json(run_simulate(manifest_files, setting, deployment or None))

    @tool
    def fix(workspace: Roots, manifest: str = "", paths: list[str] | None = None, unsafe: bool = False,
            write: bool = False, kube_version: str = "", feature_gates: str = "") -> dict[str, Any]:
        """draguard's fixes for manifest text or files: a unified diff, the fixed text (for
        `manifest`), what was left with the reason, and the files not read (not UTF-8, a
        pipe, a link out of the folder or the workspace) with the reason. Files are written only with
        `write: true`; `unsafe: true` adds fixes that change behaviour (the migration of
        device-plugin GPUs to DRA claims is one)."""
        from ..fix.files import Gathered, encode, gather, unified_diff, write as write_file
        from ..fix.run import Choice, FileText, fix_texts
        from ..sources.discover import DEFAULT_INCLUDE
        from ..sources.options import RenderOptions

        config, choice = _config(workspace, kube_version, feature_gates, paths), Choice(unsafe=unsafe)
        if manifest:
            gathered, files = Gathered(), [FileText("manifest.yaml", manifest)]
        else:
            with _inputs("", paths) as inputs:
                gathered = gather(inputs, DEFAULT_INCLUDE, (), RenderOptions(kube_version=config.kube_version))
            files = [FileText(r.display, r.text, r.bom) for r in gathered.reads.values() if r.text is not None]
        run = fix_texts(files, config, choice, gathered.rendered)
        written = []
        if write and not manifest:
            for f in run.changed:
                reason = write_file(gathered.paths[f.display], gathered.reads[f.display].raw, encode(f.text, f.bom))
                written.append({"file": f.display, "written": reason is None, "reason": reason})
        not_read = [{"file": display, "reason": why} for display, why in gathered.not_read]
        return {"diff": "".join(unified_diff(f.display, f.original, f.text) for f in run.changed),
                "fixed": files[0].text if manifest and files else None,
                "applied": [{"file": f.display, "rule": rule, "fix": title} for f in files for rule, title in f.applied],
                "left": [{"rule": item.finding.rule, "message": item.finding.message, "file": item.finding.location.file,
                          "line": item.finding.location.line, "reason": item.reason} for item in run.left],
                "written": written, "notRead": not_read}

    @tool
    def audit(workspace: Roots, dump: str = "", snapshot: str = "", kubeconfig: str = "", context: str = "",
              at: str = "", kube_version: str = "", feature_gates: str = "") -> dict[str, Any]:
        """Audit a cluster's DRA state for leaked, stale and stuck claims, stuck pods, stale
        slices, unguarded MIG overlap and fragmentation: a dump (`dump`: a file of `kubectl get
        ... -o yaml|json` or a folder from `draguard audit --save-dump`; or its text in
        `snapshot`), else the cluster of `context` in `kubeconfig` (a file in the workspace whose
        users run no exec or auth-provider plugin) or the server's own (read-only). Returns the audit
        JSON report: snapshot, summary with score, pool view and findings."""
        from argparse import Namespace

        from ..cluster.audit import audit as run_audit
        from ..cluster.release import judge_as_cluster
        from ..report.audit import document
        from .audit import read

        def source(path):
            return Namespace(dump=path, kubeconfig=_kubeconfig(workspace, kubeconfig) if kubeconfig else None,
                             context=context or None, at=at or None, save_dump=None, watch=False)

        if snapshot:
            with _inputs(snapshot, None) as files:
                found, loaded = read(source(files[0]))
        else:
            found, loaded = read(source(dump or None))
        config = _config(workspace, "", feature_gates, [])
        judge_as_cluster(config, found.server_version, found.feature_gates, kube_version or None)
        return document(run_audit(found, config, loaded))

    return MCPServer("draguard", version=__version__, tools=tools, instructions=(
        "GPU-partitioning guardrails for Kubernetes Dynamic Resource Allocation. Lint every Kubernetes "
        "manifest you write or change that requests GPUs, and apply or propose the fixes it reports."))


def _registering(tools: list, roots: Roots):
    """A decorator adding a tool to `tools`, for a tool whose first parameter, `workspace`, is
    the call's roots (_workspace), under which all it reads is confined (core.confine); the
    SDK sees the other parameters, each described (mcp_params), and the Context it injects.
    Anticipated failures (what the command line reports with exit status 2: usage and input
    errors, an unknown rule, a path outside the workspace) reach the model with their message
    as a ToolError; the SDK shows any other exception as a crash, 'Error executing tool <name>'
    and nothing more. An argument the tool does not take is refused (_strict), not dropped."""
    from typing import Annotated

    import anyio.to_thread
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.tools import Tool
    from pydantic import Field

    from .mcp_params import description

    def register(fn):
        # evaluated annotations: the SDK reads a __signature__ as it is, and a string return
        # annotation would make it wrap the tool's report in {"result": ...}
        signature = inspect.signature(fn, eval_str=True)
        confines = next(iter(signature.parameters), None) == "workspace"

        @functools.wraps(fn)
        async def call(ctx: Context, **arguments):
            try:
                if not confines:
                    return await anyio.to_thread.run_sync(functools.partial(fn, **arguments))
                workspace = await _workspace(ctx, roots)
                return await anyio.to_thread.run_sync(functools.partial(_confined_call, fn, workspace, arguments))
            except (UsageError, ValueError, OSError) as exc:
                raise ToolError(str(exc)) from exc

        shown = [p.replace(annotation=Annotated[p.annotation, Field(description=description(fn.__name__, p.name))])
                 for p in signature.parameters.values() if p.name != "workspace"]
        call.__signature__ = signature.replace(parameters=[  # type: ignore[attr-defined]  # inspect reads it
            *shown, inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)])
        call.__annotations__ = {**{p.name: p.annotation for p in shown}, "ctx": Context,
                                "return": signature.return_annotation}
        tools.append(_strict(Tool.from_function(call)))
        return fn
    return register


def _strict(tool):
    """The tool with its arguments' model refusing names it does not take: a misspelt
    `kube_versoin` was dropped and the call judged for the default release, silently. The
    published schema says so too (additionalProperties: false)."""
    from pydantic import ConfigDict

    taken = tool.fn_metadata.arg_model
    strict = type(taken.__name__, (taken,), {"model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True),
                                             "__module__": taken.__module__})
    return tool.model_copy(update={"fn_metadata": tool.fn_metadata.model_copy(update={"arg_model": strict}),
                                   "parameters": {**tool.parameters, "additionalProperties": False}})


def _confined_call(fn, workspace: Roots, arguments: dict):
    with confined(workspace):
        return fn(workspace, **arguments)


async def _workspace(ctx, roots: Roots) -> Roots:
    """The roots of a call: the server's, narrowed to the client's when it declares the roots
    capability (asked at each call: they change as the user opens folders). A client that
    declares roots and cannot list them, or none of whose roots lies within the server's,
    gets nothing read."""
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.roots is None or not ctx.session.can_send_request:
        return roots
    try:
        declared = (await ctx.session.list_roots()).roots
    except Exception as exc:  # noqa: BLE001 - the client's failure, of whatever kind, fails the call closed
        raise UsageError(f"the client declares roots but did not list them: {exc}") from None
    workspace = roots.narrowed(_local_folders(str(root.uri) for root in declared))
    if not workspace.folders:
        raise Outside(f"none of the client's roots ({', '.join(str(r.uri) for r in declared) or 'none'}) lies within "
                      f"the server's ({roots.named()}): start it with --root covering them")
    return workspace


def _local_folders(uris) -> list[str]:
    """The folders of file:// URIs on this machine; a URI of another scheme or host names none."""
    from urllib.parse import urlsplit
    from urllib.request import url2pathname

    parts = [urlsplit(uri) for uri in uris]
    return [url2pathname(p.path) for p in parts if p.scheme == "file" and p.netloc in ("", "localhost") and p.path]


#: the fields of a kubeconfig's users and clusters that name a file to read
_KUBECONFIG_FILES = ("client-certificate", "client-key", "certificate-authority", "tokenFile")


def _kubeconfig(workspace: Roots, path: str) -> str:
    """A kubeconfig a client names, resolved: inside the workspace, with no user whose
    credential plugin (`exec`, `auth-provider`) would run a command the file names (the
    Kubernetes client runs it as the file is loaded) and no file it names outside."""
    import yaml

    real = workspace.check(path)
    try:
        with open(real, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not a kubeconfig ({(str(exc).splitlines() or ['YAML'])[0]})") from None
    for kind, name, entry in _kubeconfig_entries(data):
        for plugin in ("exec", "auth-provider") if kind == "user" else ():
            if plugin in entry:
                raise UsageError(f"{path}: its user {name} has `{plugin}`, a command the server would run: not "
                                 "used here (audit a dump, or run `draguard audit` yourself)")
        for field in _KUBECONFIG_FILES:
            if isinstance(entry.get(field), str):
                workspace.check(os.path.join(os.path.dirname(real), entry[field]))
    return real


def _kubeconfig_entries(data) -> list[tuple[str, str, dict]]:
    """(user or cluster, its name, its fields) of each user and cluster of a kubeconfig."""
    found = []
    for kind in ("user", "cluster"):
        listed = data.get(kind + "s") if isinstance(data, dict) else None
        for item in listed if isinstance(listed, list) else []:
            if isinstance(item, dict) and isinstance(item.get(kind), dict):
                found.append((kind, str(item.get("name")), item[kind]))
    return found


def _config(workspace: Roots, kube_version: str, feature_gates: str, near: list[str] | None):
    """The config of a tool call, as the command line's: the project's `.draguard.yaml` (the
    nearest above the first of `near`, else above the server's working folder when it is in
    the workspace, else in its first root; never above the root it is found in), then the
    call's release and the feature gates (`A=true,B=false`) the cluster sets differently from
    that release's defaults, as --kube-version and --feature-gates."""
    from ..core.versions import check_kube_version
    from ..engine.config_file import find_config, load_config
    from ..facts.gates import parse_gates

    here = os.getcwd()
    start = workspace.check(near[0]) if near else here if workspace.holding(here) else workspace.folders[0]
    top = workspace.holding(start)
    found = find_config([start], top=top) if top is not None and os.path.isdir(top) else None  # a root may be one file
    config = load_config(found and workspace.check(found))
    if kube_version:
        config.kube_version = check_kube_version(kube_version)
    config.feature_gates.update(parse_gates(feature_gates))
    return config


@contextmanager
def _inputs(text: str, paths: list[str] | None):
    """Manifest text as a temporary file (readable where reads are confined; removed
    afterwards), or the paths as given."""
    if text:
        fd, temp = tempfile.mkstemp(prefix="draguard-mcp-", suffix=".yaml")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            roots = active()  # the tool's workspace, widened to the temporary file
            with confined(roots.with_file(temp)) if roots is not None else nullcontext():
                yield [temp]
        finally:
            os.unlink(temp)
        return
    if not paths:
        raise ValueError("give manifest text or paths")
    if "-" in paths:  # the server's stdin is the MCP channel itself
        raise ValueError("'-' (stdin) is not read here: give the manifest text in `manifest`")
    yield list(paths)
