"""`fix --jobs N` fixes the files in N forked processes and prints, writes and returns exactly
what one process does: the corpus and the rule fixtures give byte-identical diffs, checks,
summaries and exit statuses whatever the number of parts; a file whose fixing reads what
another part holds is fixed again in one process; files written in place hold the same bytes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from draguard.core.atomic import TEMPORARY_PREFIX
from draguard.engine import parallel
from draguard.fix import parallel as fix_parallel
from draguard.rules import REGISTRY
from support.paths import CORPUS, EXAMPLES, ROOT


@pytest.fixture
def parts(monkeypatch):
    """Every run split however small, counting the splits and the files fixed again here."""
    monkeypatch.setattr(parallel, "MIN_BYTES_PER_JOB", 1)
    splits, again = [], []
    split, fixed_again = fix_parallel.in_parts, fix_parallel._fixed_again

    def counted_split(count, make):
        splits.append(count)
        return split(count, make)

    def counted_again(files, *args):
        again.append(sorted(Path(f.display).name for f in files))
        return fixed_again(files, *args)

    monkeypatch.setattr(fix_parallel, "in_parts", counted_split)
    monkeypatch.setattr(fix_parallel, "_fixed_again", counted_again)
    return splits, again


def _same(cli, parts, jobs: int, *args):
    """The fix run of `args` in one process and in `jobs` parts: (code, out, err) of both."""
    one = cli("fix", "--no-config", *args, "--jobs", "1")
    assert not parts[0]
    many = cli("fix", "--no-config", *args, "--jobs", str(jobs))
    assert parts[0] == [jobs]
    parts[0].clear()
    return one, many


@pytest.mark.parametrize("jobs", [2, 3, 7])
def test_the_corpus_is_fixed_the_same_in_parts(cli, parts, jobs):
    one, many = _same(cli, parts, jobs, "--unsafe-fixes", "--diff", CORPUS, EXAMPLES)
    assert one.code == 1 and one.out.count("\n+++ ") > 50 and "would fix" in one.out
    assert (many.code, many.out, many.err) == (one.code, one.out, one.err)


def test_the_corpus_checks_the_same_in_parts(cli, parts):
    one, many = _same(cli, parts, 3, "--check", CORPUS)
    assert one.code == 1 and "pending" in one.out
    assert (many.code, many.out, many.err) == (one.code, one.out, one.err)


@pytest.mark.parametrize("jobs", [2, 7])
def test_the_rule_fixtures_are_fixed_the_same_in_parts(cli, parts, jobs):
    one, many = _same(cli, parts, jobs, "--unsafe-fixes", "--profile", "strict", "--diff", ROOT / "tests" / "rules")
    assert one.out.count("\n+++ ") > 20
    assert (many.code, many.out, many.err) == (one.code, one.out, one.err)


def test_a_device_class_a_fix_adds_is_seen_by_every_file(cli, parts):
    """The extended-resource migration adds a DeviceClass, which every part read as it was
    (a shipped kind): this process fixes every file again."""
    one, many = _same(cli, parts, 2, "--unsafe-fixes", "--strategy", "extended-resource", "--diff", CORPUS)
    assert "extendedResourceName" in one.out
    assert (many.code, many.out, many.err) == (one.code, one.out, one.err)
    assert len(parts[1]) == 1 and len(parts[1][0]) > 100


WORKLOADS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: inference, namespace: ml}
spec:
  replicas: 2
  selector: {matchLabels: {app: inference}}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
  template:
    metadata: {labels: {app: inference}}
    spec:
      terminationGracePeriodSeconds: 60
      resourceClaims:
      - {name: gpu, resourceClaimTemplateName: mig-1g}
      containers:
      - name: server
        image: vllm/vllm-openai
        args: [--shutdown-timeout, '30']
        resources:
          claims: [{name: gpu}]
        lifecycle:
          preStop:
            exec: {command: [sh, -c, sleep 10]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: notebook, namespace: ml}
spec:
  replicas: 1
  selector: {matchLabels: {app: notebook}}
  template:
    metadata: {labels: {app: notebook}}
    spec:
      nodeSelector: {nvidia.com/gpu.product: Tesla-T4-SHARED}
      containers:
      - name: lab
        image: jupyter/base-notebook
        resources: {limits: {nvidia.com/gpu: 1}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: server, namespace: ml}
spec:
  replicas: 1
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:
      containers:
      - name: server
        image: vllm/vllm-openai
        resources: {limits: {nvidia.com/gpu: 1}}
"""
# what the workloads' fixes read: their claim template and budget, the device plugin's config,
# and a template holding the name the server's migration would give its own
THEIR_OBJECTS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: mig-1g, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: mig.nvidia.com
          allocationMode: ExactCount
          count: 1
          selectors:
          - cel:
              expression: device.attributes['gpu.nvidia.com'].profile == '1g.10gb'
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: inference, namespace: ml}
spec:
  maxUnavailable: 3
  selector: {matchLabels: {app: inference}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: device-plugin-config, namespace: gpu-operator}
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: server-server-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: mig.nvidia.com, allocationMode: ExactCount, count: 1}
"""


def test_what_a_workload_s_fix_reads_in_another_part_is_found(cli, parts, monkeypatch, tmp_path):
    """a.yaml's workloads (part 0) are fixed by what b.yaml (part 1) holds: the budget their
    rollout-pdb fix lowers (placed in b.yaml), the device plugin's time-slicing config (a
    ConfigMap, sent to every part), and a template of the name the migration would choose (so
    it takes `-2`). a.yaml and b.yaml are fixed again here, together, as one run fixes them."""
    (tmp_path / "a.yaml").write_text(WORKLOADS)
    (tmp_path / "b.yaml").write_text(THEIR_OBJECTS)
    args = ("--unsafe-fixes", "--profile", "strict", "--diff", tmp_path)
    one, many = _same(cli, parts, 2, *args)
    assert parts[1] == [["a.yaml", "b.yaml"]]
    assert (many.code, many.out, many.err) == (one.code, one.out, one.err)
    assert "-  maxUnavailable: 3\n+  maxUnavailable: 1\n" in one.out and "strategy: TimeSlicing" in one.out
    assert "resourceClaimTemplateName: server-server-gpu-2" in one.out
    # the test has teeth: without fixing them again, the parts' own results differ
    monkeypatch.setattr(fix_parallel, "_unsure", lambda *a: set())
    alone = cli("fix", "--no-config", *args, "--jobs", "2")
    assert "-  maxUnavailable: 3\n+  maxUnavailable: 1\n" not in alone.out and "server-server-gpu-2" not in alone.out


def test_files_written_in_place_hold_the_same_bytes(cli, parts, monkeypatch, tmp_path):
    trees = {}
    for jobs in ("1", "3"):
        root = tmp_path / jobs
        shutil.copytree(CORPUS, root / "corpus")
        monkeypatch.chdir(root)
        result = cli("fix", "--no-config", "--unsafe-fixes", "corpus", "--jobs", jobs)
        files = {p.relative_to(root): p.read_bytes() for p in sorted((root / "corpus").rglob("*")) if p.is_file()}
        trees[jobs] = (result.code, result.out, result.err, files)
    assert parts[0] == [3]
    assert trees["1"] == trees["3"]
    changed = [p for p, data in trees["3"][3].items() if data != (CORPUS / p.relative_to("corpus")).read_bytes()]
    assert len(changed) > 50 and "fixed " in trees["3"][1]
    assert not [p for p in (tmp_path / "3").rglob("*") if p.name.startswith(TEMPORARY_PREFIX)]  # no temporary left


def test_a_rule_that_fails_in_another_process_fails_the_run_as_in_one(cli, parts, monkeypatch, tmp_path):
    """host-ipc raises on the pod of the last file, which a forked part judges: the same
    internal-error finding, message and exit status 2 as in one process."""
    check, parent = REGISTRY.get("host-ipc").check, os.getpid()
    where = tmp_path / "raised-in"
    where.mkdir()

    def explode(obj, ctx):
        if obj.name == "broken":
            (where / str(os.getpid())).touch()
            raise RuntimeError("boom")
        yield from check(obj, ctx)

    monkeypatch.setattr(REGISTRY.get("host-ipc"), "check", explode)
    for n in range(4):
        name = "broken" if n == 3 else f"pod-{n}"
        (tmp_path / f"{n}.yaml").write_text(
            LEGACY_POD.replace("name: p,", f"name: {name},").replace("spec:\n", "spec:\n  hostIPC: true\n"))
    one, many = _same(cli, parts, 3, "--unsafe-fixes", "--diff", tmp_path)
    assert one.code == 2 and "rule failure" in one.err and "[internal-error] left: a rule failed here" in one.out
    assert (many.code, many.out, many.err) == (one.code, one.out, one.err)
    assert {int(p.name) for p in where.iterdir()} - {parent}  # raised in a forked part too


def test_a_worker_that_dies_is_an_error_not_a_hang(cli, parts, monkeypatch):
    parent, judge = os.getpid(), fix_parallel._Part.judge

    def dying(*args, **kwargs):
        if os.getpid() != parent:
            os._exit(9)  # as the kernel's OOM killer would end it
        return judge(*args, **kwargs)

    monkeypatch.setattr(fix_parallel._Part, "judge", dying)
    result = cli("fix", "--no-config", "--diff", "--jobs", "2", CORPUS)
    assert result.code == 2 and "ended without answering" in result.err and "--jobs 1" in result.err


LEGACY_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: t}\nspec:\n"
              "  containers:\n  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}\n")


def test_small_runs_and_stdin_stay_in_one_process(cli, monkeypatch):
    monkeypatch.setattr(fix_parallel, "in_parts", lambda *a: pytest.fail("split a run that should not be"))
    assert cli("fix", "--no-config", "--unsafe-fixes", "--diff", "--jobs", "4", EXAMPLES).code == 1
    monkeypatch.setattr(parallel, "MIN_BYTES_PER_JOB", 1)
    result = cli("fix", "--no-config", "--unsafe-fixes", "--diff", "--jobs", "4", CORPUS, "-", stdin=LEGACY_POD)
    assert result.code == 1 and "resourceClaimTemplateName" in result.out


def test_this_process_s_part_is_about_the_size_of_another_s(monkeypatch):
    """fix cuts with its own share (fix.parallel.PARENT_SHARE), not lint's 1.1: a part of fix
    costs about alike per byte wherever it runs, and lint's larger first part left this
    process's part the slower. 100 files of one size: 51 here, not lint's 53."""
    from draguard.core.config import Config
    from draguard.fix.run import Choice, FileText

    class Cut(Exception):
        pass

    def stop(count, make):
        raise Cut([len(share) for share in fix_parallel._RUN.shares])

    monkeypatch.setattr(parallel, "MIN_BYTES_PER_JOB", 1)
    monkeypatch.setattr(fix_parallel, "in_parts", stop)
    files = [FileText(f"{n:03}.yaml", LEGACY_POD) for n in range(100)]
    with pytest.raises(Cut) as cut:
        fix_parallel.fix_texts_jobs(files, Config(), Choice(), None, None, 2)
    assert cut.value.args[0] == [51, 49]
