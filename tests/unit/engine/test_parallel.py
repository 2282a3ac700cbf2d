"""`lint --jobs N` judges the objects in N forked processes and reports exactly what one
process reports: the corpus (and the examples) give byte-identical reports in every format,
whatever the number of parts; a suppression on an object judged in another part still holds."""

from __future__ import annotations

import os
import select
import subprocess
import sys

import pytest

from draguard.core.config import Config
from draguard.core.finding import Finding, Severity
from draguard.engine import forked, parallel
from draguard.report import FORMAT_NAMES, chunk_renderer, piece_renderer
from draguard.model.manifest import Manifest
from draguard.sources.discover import Unit
from support.paths import CORPUS, EXAMPLES


@pytest.fixture
def parts(monkeypatch):
    """Every run split however small (the corpus is a few hundred objects), counting splits."""
    monkeypatch.setattr(parallel, "MIN_BYTES_PER_JOB", 1)
    splits = []
    judged = parallel._judged_in_parts

    def counted(shares, *args):
        splits.append(len(shares))
        return judged(shares, *args)

    monkeypatch.setattr(parallel, "_judged_in_parts", counted)
    return splits


@pytest.mark.parametrize("fmt", [*FORMAT_NAMES, "text --color always"])
def test_the_corpus_reads_the_same_in_parts(cli, parts, fmt):
    """Every report, written from the pieces the parts made (report.pieces) and those this
    process made, suppressed findings shown: byte for byte that of one process."""
    lint = ("lint", "--no-config", "--show-suppressed", "-f", *fmt.split(), CORPUS, EXAMPLES)
    one = cli(*lint, "--jobs", "1")
    assert not parts and one.code == 1 and one.out
    for jobs in (2, 3):
        many = cli(*lint, "--jobs", str(jobs))
        assert parts[-1] == jobs
        assert (many.code, many.out, many.err) == (one.code, one.out, one.err)


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_the_parts_render_their_own_findings(parts, fmt, tmp_path):
    """The parts make the pieces of their findings, suppressed ones too; the report joins them
    into what it writes when it makes every piece itself."""
    (tmp_path / "a.yaml").write_text(POD.format(annotations="\n  annotations: {ignore.draguard.io/legacy-gpu-resource: "
                                                            "agreed}"))
    config, options = Config(), {"show_suppressed": True}
    result = parallel.lint_paths_jobs([CORPUS, str(tmp_path)], config, 3,
                                      pieces=piece_renderer(fmt, config=config, **options))
    made = result.pieces
    assert parts == [3] and len(made.found) > len(result.findings) / 2 and result.suppressed
    # the texts came back as texts: the lines a piece split were not sent beside them
    assert all(source._lines is None for source in result.sources)
    assert bool(made.suppressed) is (fmt not in ("github", "junit"))  # neither shows suppressed findings
    joined = "".join(chunk_renderer(fmt)(result, **options))
    result.pieces = None
    assert joined == "".join(chunk_renderer(fmt)(result, **options))


def test_suppressions_in_one_part_hold_for_findings_from_another():
    budget = Manifest.from_data({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                 "metadata": {"name": "b", "namespace": "n", "annotations": {
                                     "ignore.draguard.io/rollout-pdb": "agreed with the platform team"}}})
    other = Manifest.from_data({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}})
    on_budget = Finding("rollout-pdb", "rollout", Severity.WARNING, "m", budget.location(), budget.ref)
    on_other = Finding("rollout-pdb", "rollout", Severity.WARNING, "m", other.location(), other.ref)
    kept, suppressed = parallel.suppressed_across_parts([on_budget, on_other], [],
                                                         parallel.hidden_suppressions([budget, other], Config()))
    assert kept == [on_other] and suppressed == [on_budget]
    assert on_budget.suppressed_by == "agreed with the platform team"


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml{annotations}
spec:
  containers:
  - name: c
    image: registry.example/trainer:1.0
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_a_suppression_in_one_file_does_not_hide_the_same_named_object_in_another(cli, parts, tmp_path, fmt):
    """Suppressions are keyed by file, document and object (engine.run.suppression_key) in
    parts as in one run: the annotation in a.yaml leaves b.yaml's same-named pod judged (the
    suppressed finding's piece made by its part)."""
    (tmp_path / "a.yaml").write_text(POD.format(annotations="\n  annotations: {ignore.draguard.io/legacy-gpu-resource: "
                                                            "agreed}"))
    (tmp_path / "b.yaml").write_text(POD.format(annotations=""))
    one = cli("lint", "--no-config", "--jobs", "1", "-f", fmt, "--show-suppressed", tmp_path)
    many = cli("lint", "--no-config", "--jobs", "2", "-f", fmt, "--show-suppressed", tmp_path)
    assert parts == [2]
    assert (many.code, many.out) == (one.code, one.out)
    if fmt != "json":
        return
    report = many.json
    assert [f["file"].rsplit("/", 1)[-1] for f in report["findings"] if f["rule"] == "legacy-gpu-resource"] == ["b.yaml"]
    assert [f["file"].rsplit("/", 1)[-1] for f in report["suppressed"] if f["rule"] == "legacy-gpu-resource"] == \
        ["a.yaml"]


def test_small_runs_stay_in_one_process(cli, monkeypatch):
    monkeypatch.setattr(parallel, "_judged_in_parts", lambda *a: pytest.fail("split a small run"))
    assert cli("lint", "--no-config", "--jobs", "4", EXAMPLES).code == 1


@pytest.mark.parametrize("jobs", ["0", "-2", "many"])
def test_jobs_must_be_a_positive_number(cli, jobs):
    result = cli("lint", "--no-config", "--jobs", jobs, EXAMPLES)
    assert result.code == 2 and "--jobs" in result.err


def test_a_worker_that_dies_is_an_error_not_a_hang(cli, parts, monkeypatch):
    parent, judge = os.getpid(), parallel._Part.judge

    def dying(*args, **kwargs):
        if os.getpid() != parent:
            os._exit(9)  # as the kernel's OOM killer would end it
        return judge(*args, **kwargs)

    monkeypatch.setattr(parallel._Part, "judge", dying)
    result = cli("lint", "--no-config", "--jobs", "2", CORPUS)
    assert result.code == 2 and "ended without answering" in result.err and "--jobs 1" in result.err


DEPLOYMENT = """\
# the workload: its claim template and its budget are in another file, judged in another part
apiVersion: apps/v1
kind: Deployment
metadata:
  name: server
  namespace: ml
spec:
  replicas: 3
  selector:
    matchLabels: {app: server}
  template:
    metadata:
      labels: {app: server}
    spec:
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: one-gpu
      containers:
      - name: server
        image: registry.example/server:1.0
        resources:
          claims:
          - name: gpu
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: debug, namespace: ml}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, adminAccess: true}}
"""
TEMPLATE_AND_BUDGET = """\
apiVersion: v1
kind: Namespace
metadata:
  name: ml
  labels: {resource.kubernetes.io/admin-access: "true"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: server
  namespace: ml
  annotations: {ignore.draguard.io/rollout-pdb: agreed with the platform team}
spec:
  maxUnavailable: 3
  selector:
    matchLabels: {app: server}
"""


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_what_a_workload_looks_up_in_another_part_is_found(cli, parts, monkeypatch, tmp_path, fmt):
    """The Deployment (a.yaml, part 0) names a claim template that b.yaml (part 1) holds, and
    b.yaml's budget selects it; a.yaml's admin claim is in b.yaml's Namespace, labelled for
    admin access: part 0 alone would report the template missing, the admin claim outside an
    admin namespace, and the budget selecting nothing. The parent judges them again beside
    what they looked up; the rollout-pdb finding placed on the budget is suppressed by the
    budget's annotation. Their report reads the same in every format: the findings judged
    again and the one another part's suppression moved have no piece from a part."""
    (tmp_path / "a.yaml").write_text(DEPLOYMENT)
    (tmp_path / "b.yaml").write_text(TEMPLATE_AND_BUDGET)
    again, judge_again = [], parallel._judged_again

    def counted(*args):
        result = judge_again(*args)
        again.append(sorted({f.location.file.rsplit("/", 1)[-1] for f in result.findings + result.suppressed}))
        return result

    monkeypatch.setattr(parallel, "_judged_again", counted)
    lint = ("lint", "--no-config", "--profile", "strict", "--show-suppressed", tmp_path)
    one = cli(*lint, "-f", fmt, "--jobs", "1")
    many = cli(*lint, "-f", fmt, "--jobs", "2")
    assert parts == [2] and again == [["a.yaml", "b.yaml"]]
    assert (many.code, many.out) == (one.code, one.out)
    many = cli(*lint, "-f", "json", "--jobs", "2")
    rules = {f["rule"] for f in many.json["findings"]}
    assert rules.isdisjoint({"claim-reference-missing", "pdb-selects-nothing", "rollout-pdb",
                             "admin-access-namespace"}) and "admin-access-label" in rules
    assert [(f["rule"], f["file"].rsplit("/", 1)[-1]) for f in many.json["suppressed"]] == [("rollout-pdb", "b.yaml")]


@pytest.mark.parametrize("sizes,jobs", [([1] * 20, 2), ([5, 5, 5, 5], 2), ([100, 1, 1, 1], 3), ([1] * 10 + [0, 0], 4), ([7, 0, 0], 2)])
def test_the_files_are_cut_into_runs_of_about_the_same_size(monkeypatch, tmp_path, sizes, jobs):
    """Consecutive files, every one in one part, no more parts than jobs (files of no bytes,
    or units with nothing to read, at the end included), none empty; this process's part
    PARENT_SHARE of another's."""
    monkeypatch.setattr(parallel, "MIN_BYTES_PER_JOB", 1)
    units = []
    for n, size in enumerate(sizes):
        (tmp_path / f"{n:02}.yaml").write_text("#" * size)
        units.append(Unit("file", str(tmp_path / f"{n:02}.yaml"), f"{n:02}.yaml"))
    shares = parallel._shares(units, jobs)
    assert [u for share in shares for u in share] == units
    assert 1 <= len(shares) <= jobs and all(shares)
    if sizes == [1] * 20:  # this process's part the larger: another part pickles its findings too
        assert [len(share) for share in shares] == [11, 9]


@pytest.mark.parametrize("first,cut_at", [(20, 20), (22, 22), (19, 21), (5, 21), (0, 21)])
def test_a_cut_near_a_change_of_folder_falls_between_the_folders(monkeypatch, tmp_path, first, cut_at):
    """40 files of one size, the first `first` in one folder and the rest in another: the cut
    (file 21 of 40, this process's part PARENT_SHARE of the other's) moves to the change of
    folder when it is within FOLDER_SLACK of a part (files of a folder are often one
    namespace's objects, which look each other up: split, they are judged again after the
    parts); a change of folder farther away leaves the cut where the sizes put it."""
    monkeypatch.setattr(parallel, "MIN_BYTES_PER_JOB", 1)
    units = []
    for n in range(40):
        folder = tmp_path / ("a" if n < first else "b")
        folder.mkdir(exist_ok=True)
        (folder / f"{n:02}.yaml").write_text("#" * 10)
        units.append(Unit("file", str(folder / f"{n:02}.yaml"), f"{n:02}.yaml"))
    shares = parallel._shares(units, 2)
    assert [len(share) for share in shares] == [cut_at, 40 - cut_at]
    assert [u for share in shares for u in share] == units


def test_the_objects_of_a_folder_cut_from_the_next_are_not_judged_again(cli, parts, monkeypatch, tmp_path):
    """Two namespaces, each a folder whose Deployment names a claim template in the folder's
    other file: cut between the folders, no object looks up what the other part holds, so
    none is judged again after the parts; the report is that of one process."""
    monkeypatch.setattr(parallel, "MIN_BYTES_PER_JOB", 1)
    again, judge_again = [], parallel._judged_again
    monkeypatch.setattr(parallel, "_judged_again", lambda *args: again.append(1) or judge_again(*args))
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.yaml").write_text(DEPLOYMENT.replace(": ml", f": {folder}"))
        (tmp_path / folder / "b.yaml").write_text(TEMPLATE_AND_BUDGET.replace(": ml", f": {folder}"))
    lint = ("lint", "--no-config", "--profile", "strict", "-f", "json", tmp_path)
    one, many = cli(*lint, "--jobs", "1"), cli(*lint, "--jobs", "2")
    assert parts == [2] and again == []
    assert (many.code, many.out) == (one.code, one.out)


def test_stdin_and_renders_are_read_in_one_process(monkeypatch, tmp_path):
    monkeypatch.setattr(parallel, "MIN_BYTES_PER_JOB", 1)
    (tmp_path / "a.yaml").write_text("#" * 10)
    units = [Unit("file", str(tmp_path / "a.yaml"), "a.yaml"), Unit("stdin", "-", "-")]
    assert parallel._shares(units, 2) == [units]


POD_AND_BUDGET = """\
# a pod its ReplicaSet (in another file, another part) made: it stands for nothing its
# controller's template does not, so the budget selects nothing
apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: ml
  labels: {app: old}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: 6f1c2a9e-0000-4000-8000-000000000001, controller: true}
spec:
  containers:
  - {name: web, image: registry.example/web:1.0}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: old, namespace: ml}
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: old}
"""
REPLICASET = """\
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: ml, uid: 6f1c2a9e-0000-4000-8000-000000000001}
spec:
  replicas: 1
  selector:
    matchLabels: {app: new}
  template:
    metadata:
      labels: {app: new}
    spec:
      containers:
      - {name: web, image: registry.example/web:1.1}
"""


def test_a_pod_whose_controller_is_in_another_part_stands_for_its_template(cli, parts, tmp_path):
    """The pod (a.yaml, part 0) names its ReplicaSet by uid; the ReplicaSet is in b.yaml (part
    1). Part 0 alone would count the pod as a template of its own, which the budget selects;
    in one process the budget selects nothing, and so it does in parts."""
    (tmp_path / "a.yaml").write_text(POD_AND_BUDGET)
    (tmp_path / "b.yaml").write_text(REPLICASET)
    lint = ("lint", "--no-config", "--profile", "strict", "-f", "json", tmp_path)
    one = cli(*lint, "--jobs", "1")
    many = cli(*lint, "--jobs", "2")
    assert parts == [2] and (many.code, many.out) == (one.code, one.out)
    assert "pdb-selects-nothing" in {f["rule"] for f in many.json["findings"]}
    alone = cli("lint", "--no-config", "--profile", "strict", "-f", "json", tmp_path / "a.yaml")
    assert "pdb-selects-nothing" not in {f["rule"] for f in alone.json["findings"]}


class _Shipped:
    """What a _Counted part read: three objects naming it, shipped."""

    def __init__(self, index: int):
        self.shared = [f"part {index}"] * 3


class _Counted:
    """A part of in_parts that judges by saying whose shipped objects it was given."""

    def __init__(self, index: int):
        self.index = index

    def read(self) -> _Shipped:
        return _Shipped(self.index)

    def judge(self, shared: list[list[str]]) -> list[list[str]]:
        return shared


def test_each_part_is_sent_the_other_parts_shipped_objects_not_its_own():
    """A part holds its own shipped objects: they are not pickled here and read back there
    (both before either judges)."""
    _, judged = parallel.in_parts(3, _Counted)
    assert judged == [[[], ["part 1"] * 3, ["part 2"] * 3],
                      [["part 0"] * 3, [], ["part 2"] * 3],
                      [["part 0"] * 3, ["part 1"] * 3, []]]


PARTS_PROBE = """import io, contextlib, sys
from draguard.engine import parallel
parallel.MIN_BYTES_PER_JOB = 1
split, splits = parallel._judged_in_parts, []
parallel._judged_in_parts = lambda *args: splits.append(len(args[0])) or split(*args)
from draguard.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
print(splits, "multiprocessing" in sys.modules)
"""


def test_a_lint_in_parts_does_not_import_multiprocessing():
    """Its parts are forked and answer over pipes (engine.forked): multiprocessing's import
    (its connection module brings socket, selectors, threading, subprocess and tempfile) was
    part of the serial start before the fork."""
    done = subprocess.run([sys.executable, "-c", PARTS_PROBE, "lint", "--no-config", "--jobs", "2", str(CORPUS)],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[2] False"


INHERITED_PROBE = """import sys
from types import SimpleNamespace
from draguard.engine import parallel

class Probe:
    def __init__(self, index):
        pass

    def read(self):
        return SimpleNamespace(shared=[], imported="jsonschema_rs" in sys.modules)

    def judge(self, shared):
        return None

imported_before = "jsonschema_rs" in sys.modules
read, _ = parallel.in_parts(2, Probe)
print(imported_before, [part.imported for part in read])
"""


def test_the_parts_inherit_the_schema_validators_module():
    """jsonschema_rs (with the email.utils its module loads) is imported once before the
    parts are forked, not again in each part (facts.schemas.import_validators)."""
    done = subprocess.run([sys.executable, "-c", INHERITED_PROBE], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False [True, True]"


def test_parts_are_forked_where_the_schema_validators_module_cannot_be_imported(tmp_path):
    """A jsonschema_rs that fails to import does not end a run in parts before they start:
    one that asks for no validator (custom resources only) ends as it did before the module
    was imported ahead of the fork; the base (2cf025a) ended the same way."""
    broken = tmp_path / "jsonschema_rs"
    broken.mkdir()
    (broken / "__init__.py").write_text('raise ImportError("broken for this test")\n')
    path = os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])
    done = subprocess.run([sys.executable, "-c", INHERITED_PROBE], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": path})
    assert (done.returncode, done.stdout.strip()) == (0, "False [False, False]"), done.stderr


class _SlowToEnd:
    """A part of in_parts whose process, once it has answered, cannot end before this process
    writes to `_LET_GO`."""

    def __init__(self, index: int):
        self.index = index

    def read(self) -> _Shipped:
        return _Shipped(self.index)

    def judge(self, shared: list[list[str]]) -> int:
        if self.index:  # in the forked process only
            end = os._exit

            def end_when_let_go(status: int) -> None:
                select.select([_LET_GO[0]], [], [], 10)
                end(status)

            os._exit = end_when_let_go
        return self.index


_LET_GO = os.pipe()


def test_a_part_that_answered_is_not_waited_for_until_reaped():
    """The parent joins the parts and writes the report while a part's process gives its
    memory back (engine.forked.let_end); reap() waits for it, as the process ends."""
    _, judged = parallel.in_parts(2, _SlowToEnd)
    assert judged == [0, 1]
    (pid,) = forked._ENDING
    assert os.waitpid(pid, os.WNOHANG) == (0, 0)  # still there: in_parts came back without it
    os.write(_LET_GO[1], b"x")
    forked.reap()
    assert forked._ENDING == []
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # waited for: no zombie left
