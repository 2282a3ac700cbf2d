"""The real kube-apiserver as the judge of cel-invalid: generated selectors (every library,
valid and invalid) and the CEL regressions are sent in DeviceClasses and in
ResourceClaimTemplates with server-side dry-run; the server's accept/reject, and the column
of its first CEL error, must match draguard's compile_selector. `--selectors N` sets how many
generated selectors are sent (default 2000, each in both kinds).

One class is still open and counted apart: the server refuses a selector whose estimated
cost (cel-go's cost estimator with the Kubernetes library costs) exceeds 1,000,000, and
draguard has no cost estimator yet, so it accepts those."""

from __future__ import annotations

import json
import re
import shutil
import ssl
import urllib.error
import urllib.request

import pytest

from draguard.dra.celenv import compile_selector
from support import celgen
from support.cel_regressions import REGRESSIONS
from support.cluster import ControlPlane, build

pytestmark = pytest.mark.cluster
NS = "default"
_COLUMN = re.compile(r"<input>:\d+:(\d+):")
OVER_COST = "too complex, exceeds cost limit"


@pytest.fixture(scope="module")
def plane(tmp_path_factory):
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the control plane cannot be built")
    plane = ControlPlane(build(), tmp_path_factory.mktemp("apiserver-judge"))
    try:
        plane.start()
        yield plane
    finally:
        plane.stop()


def _objects(expression: str) -> list[tuple[str, dict]]:
    selectors = [{"cel": {"expression": expression}}]
    return [
        ("/apis/resource.k8s.io/v1/deviceclasses",
         {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "judged"},
          "spec": {"selectors": selectors}}),
        (f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaimtemplates",
         {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
          "metadata": {"name": "judged", "namespace": NS},
          "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
              "deviceClassName": "gpu.example.com", "selectors": selectors}}]}}}}),
    ]


class Judge:
    """Server-side dry-run creates over one keep-alive-free HTTPS opener."""

    def __init__(self, plane: ControlPlane):
        self.url, self.token = plane.url, plane.token
        self.context = ssl.create_default_context(cafile=str(plane.ca_file))

    def verdict(self, path: str, body: dict) -> tuple[bool, int | None, str]:
        """(accepted, column of the first CEL error or None, the server's message)."""
        request = urllib.request.Request(f"{self.url}{path}?dryRun=All", data=json.dumps(body).encode(),
                                         method="POST", headers={"Authorization": f"Bearer {self.token}",
                                                                 "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=30):
                return True, None, ""
        except urllib.error.HTTPError as exc:
            status = json.loads(exc.read() or b"{}")
            message = status.get("message", "")
            if exc.code != 422:
                raise AssertionError(f"{exc.code}: {message}") from None
            where = _COLUMN.search(message)
            return False, int(where.group(1)) if where else None, message


def disagreements(judge: Judge, expressions: list[str]) -> list:
    found = []
    for expression in expressions:
        compiled = compile_selector(expression)
        ours = (compiled.error is None, compiled.error.offset + 1 if compiled.error else None)
        for path, body in _objects(expression):
            accepted, column, message = judge.verdict(path, body)
            if accepted != ours[0] or (column is not None and ours[1] != column):
                found.append((body["kind"], expression, ours, (accepted, column), message[:300]))
    return found


def test_generated_selectors_are_judged_alike(plane, request):
    count = request.config.getoption("--selectors")
    expressions = celgen.expressions(0, count)
    found = disagreements(Judge(plane), expressions)
    over_cost = [f for f in found if f[2][0] and OVER_COST in f[4]]
    rejected = sum(1 for e in expressions if compile_selector(e).error)
    print(f"\n{count} generated selectors x 2 kinds ({rejected} rejected by draguard); "
          f"{len(found) - len(over_cost)} disagreements, {len(over_cost)} over the server's cost estimate")
    assert not [f for f in found if f not in over_cost], found[:5]


def test_regressions_are_judged_alike(plane):
    found = disagreements(Judge(plane), list(REGRESSIONS.values()))
    assert not [f for f in found if not (f[2][0] and OVER_COST in f[4])], found[:5]
