"""dra.builtin_funnels: a request's funnel against the built-in GPU inventory read back from the
per-user cache is the one the allocator computes; another selector, class definition,
release, feature gate, draguard version or edited module is a miss."""

from __future__ import annotations

import pytest
import yaml

from draguard.core import usercache
from draguard.dra import builtin_funnels
from draguard.dra.devices import claim_from
from draguard.dra.target import Target
from draguard.model.manifest import Manifest
from draguard.sources.loader import Source

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c, namespace: team}}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: {klass}
        count: {count}
        selectors:
        - cel: {{expression: "{expression}"}}
"""
MIG_3G = "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"
CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: mig.nvidia.com}}
spec:
  selectors:
  - cel: {{expression: "{expression}"}}
"""


def manifest(text: str) -> Manifest:
    return Manifest(Source("t.yaml", text), 0, yaml.safe_load(text), has_paths=False)


def request_of(klass: str = "mig.nvidia.com", expression: str = MIG_3G, count: int = 1):
    [request] = claim_from(manifest(CLAIM.format(klass=klass, expression=expression, count=count))).requests
    return request


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def funnel(request, classes=(), kube="1.35", gates=None, calls=None):
    """The cached funnel, and the one computed, with each computation counted in `calls`."""
    gates = gates or {}
    target = Target.for_release(None, [manifest(c) for c in classes], kube, gates)
    own = [e for c in classes for e in [yaml.safe_load(c)["spec"]["selectors"][0]["cel"]["expression"]]] or None

    def compute():
        (calls if calls is not None else []).append(1)
        return target.explain(request, "gpu")

    builtin_funnels._read.clear()  # as a new process would: from the file
    return builtin_funnels.builtin_funnel(request, "gpu", own, kube, gates, compute), target.explain(request, "gpu")


@pytest.mark.parametrize("klass, expression, count", [
    ("mig.nvidia.com", MIG_3G, 1),  # kept: 3g.40gb slices exist
    ("gpu.nvidia.com", MIG_3G, 1),  # emptied by the request's selector: full GPUs have no profile
    ("mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '9g.1tb'", 2),  # emptied, two wanted
    ("no-such.example.com", MIG_3G, 1),  # no such class
    ("mig.nvidia.com", "device.attributes['gpu.nvidia.com'].index == 0", 1),  # fails at runtime on MIG devices
])
def test_read_back_is_the_computed_funnel(cache, klass, expression, count):
    calls: list = []
    request = request_of(klass, expression, count)
    first, computed = funnel(request, calls=calls)
    again, _ = funnel(request, calls=calls)
    assert first == computed and again == computed and first.text() == computed.text()
    assert calls == [1]


def test_the_funnels_differ(cache):
    """Not one answer for all: kept, emptied by the selector, no class."""
    texts = {funnel(request_of(k, e))[0].text() for k, e in
             [("mig.nvidia.com", MIG_3G), ("gpu.nvidia.com", MIG_3G), ("x.example.com", MIG_3G)]}
    assert len(texts) == 3


def test_another_selector_count_or_class_is_a_miss(cache):
    calls: list = []
    funnel(request_of(), calls=calls)
    funnel(request_of(expression=MIG_3G + " "), calls=calls)
    funnel(request_of(count=2), calls=calls)
    funnel(request_of(klass="gpu.nvidia.com"), calls=calls)
    assert len(calls) == 4


def test_the_runs_own_device_class_is_in_the_key(cache):
    """A set that redefines the class to keep only 1g.10gb slices empties the funnel the
    built-in class kept: the entry of the built-in class is not taken for it."""
    calls: list = []
    builtin, _ = funnel(request_of(), calls=calls)
    narrowed, computed = funnel(request_of(), [CLASS.format(expression="device.attributes['gpu.nvidia.com']"
                                                                      ".profile == '1g.10gb'")], calls=calls)
    assert builtin.emptied_at is None and narrowed.emptied_at is not None and narrowed == computed
    assert len(calls) == 2


def test_another_release_or_gate_is_a_miss(cache):
    calls: list = []
    request = request_of()
    funnel(request, kube="1.34", calls=calls)
    funnel(request, kube="1.35", calls=calls)
    funnel(request, kube="1.35", gates={"DRAConsumableCapacity": True}, calls=calls)
    funnel(request, kube="1.35", gates={"DRAConsumableCapacity": True}, calls=calls)
    assert len(calls) == 3


def test_another_draguard_version_or_an_edited_module_is_a_miss(cache, monkeypatch):
    calls: list = []
    request = request_of()
    funnel(request, calls=calls)
    monkeypatch.setattr(usercache, "__version__", "0.0.0-other")
    funnel(request, calls=calls)
    builtin_funnels._code_stamp.cache_clear()
    real = builtin_funnels._code_stamp()
    monkeypatch.setattr(builtin_funnels, "_code_stamp", lambda: real.replace(".yaml:", ".yaml:1", 1))  # a data file
    funnel(request, calls=calls)
    assert len(calls) == 3


def test_the_code_stamp_names_the_modules_and_data_it_is_computed_from():
    builtin_funnels._code_stamp.cache_clear()
    stamp = builtin_funnels._code_stamp()
    for part in ("draguard/dra/allocator.py:", "draguard/cel/env.py:", "draguard/facts/gates.py:",
                 "data/gpus.yaml:", "data/deviceclasses.yaml:", "cel_expr_python"):
        assert part in stamp


def test_a_damaged_entry_is_computed_again(cache):
    calls: list = []
    request = request_of()
    funnel(request, calls=calls)
    [entry] = (cache / f"v{usercache.__version__}" / "funnels").iterdir()
    entry.write_text(entry.read_text().replace('"stages":[', '"stages":[7,'))
    again, computed = funnel(request, calls=calls)
    assert again == computed and len(calls) == 2


def test_a_process_reads_each_shape_once(cache, monkeypatch):
    """Replicated manifests repeat the same requests: the entry is read from the file once."""
    reads = []
    real = builtin_funnels.cached_json
    monkeypatch.setattr(builtin_funnels, "cached_json", lambda *a: reads.append(1) or real(*a))
    request = request_of()
    first, computed = funnel(request)
    for name in ("a", "b"):
        again = builtin_funnels.builtin_funnel(request, name, None, "1.35", {}, lambda: computed)
        assert again.request == name and again.stages == computed.stages
    assert len(reads) == 1 and first == computed


def test_a_process_makes_each_shape_once(cache, monkeypatch):
    """The entry read is made a funnel once a shape; each request gets it under its own name,
    the first one's name untouched by the later ones."""
    made = []
    real = builtin_funnels.RequestExplanation.from_json
    monkeypatch.setattr(builtin_funnels.RequestExplanation, "from_json",
                        staticmethod(lambda name, data: made.append(name) or real(name, data)))
    request = request_of()
    first, computed = funnel(request)
    made.clear()
    named = [builtin_funnels.builtin_funnel(request, name, None, "1.35", {}, lambda: computed) for name in ("a", "b")]
    assert made == []
    assert [f.request for f in (first, *named)] == ["gpu", "a", "b"]
    assert all(f.stages == computed.stages and f.text() == computed.text().replace("'gpu'", f"'{f.request}'")
               for f in named)
