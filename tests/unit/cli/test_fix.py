"""`draguard fix` as a user runs it: the legacy example migrated in place and then linting
clean, --diff and --check writing nothing, stdin to stdout, rule selection, and files that
must not be written (read-only, changed on disk, not UTF-8) left alone and reported."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time

import yaml

from draguard.fix.files import write
from support.paths import EXAMPLES

LEGACY = EXAMPLES / "legacy-multitenant" / "shared-gpu.yaml"


def legacy_copy(tmp_path):
    target = tmp_path / "shared-gpu.yaml"
    shutil.copy(LEGACY, target)
    return target


def test_the_legacy_example_is_migrated_and_then_lints_clean(cli, tmp_path):
    target = legacy_copy(tmp_path)
    os.chmod(target, 0o640)
    done = cli("fix", "--unsafe-fixes", "--no-config", "--profile", "strict", target)
    assert done.code == 0, done.out
    assert "fixed 12 finding(s) in 1 file(s)" in done.out
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640  # the mode is kept
    assert cli("lint", "--no-config", target).code == 0
    again = cli("fix", "--unsafe-fixes", "--no-config", "--profile", "strict", target)
    assert again.code == 0 and "fixed 0 finding(s) in 0 file(s)" in again.out
    assert target.read_text().startswith(LEGACY.read_text().split("apiVersion")[0])  # the header comments


def test_diff_and_check_write_nothing(cli, tmp_path):
    target = legacy_copy(tmp_path)
    before = target.read_bytes()
    diff = cli("fix", "--unsafe-fixes", "--diff", "--no-config", "--profile", "strict", target)
    assert diff.code == 1 and f"--- a/{str(target).lstrip('/')}" in diff.out and "+kind: ResourceClaimTemplate" in diff.out
    check = cli("fix", "--unsafe-fixes", "--check", "--no-config", target)  # recommended: no shm-size-limit fix
    assert check.code == 1 and "would fix 11" in check.out
    assert target.read_bytes() == before


def test_safe_fixes_only_unless_asked(cli, tmp_path):
    target = legacy_copy(tmp_path)
    done = cli("fix", "--no-config", "--check", target)
    assert "would fix 0" in done.out and "pass --unsafe-fixes" in done.out


def test_check_fails_while_an_unsafe_fix_is_pending(cli, tmp_path):
    """A CI job running `fix --check` must not let legacy GPU limits through because their
    migration is unsafe: it exits 1 and says how many fixes wait for --unsafe-fixes; once they
    are applied it passes."""
    target = legacy_copy(tmp_path)
    check = cli("fix", "--no-config", "--kube-version", "1.34", "--check", target)
    lint = cli("lint", "--no-config", "--kube-version", "1.34", "-f", "json", target).json
    unsafe = sum(1 for f in lint["findings"] if (f.get("fix") or {}).get("applicability") == "unsafe")
    assert check.code == 1 and unsafe > 0
    assert f"{unsafe} fix(es) pending: {unsafe} need --unsafe-fixes" in check.out
    assert cli("fix", "--no-config", "--kube-version", "1.34", "--diff", target).code == 1
    assert cli("fix", "--no-config", "--kube-version", "1.34", "--unsafe-fixes", target).code == 0
    again = cli("fix", "--no-config", "--kube-version", "1.34", "--check", target)
    assert again.code == 0 and "pending" not in again.out


def test_the_default_target_is_said_when_nobody_chose_it(cli, tmp_path):
    """The default target writes resource.k8s.io/v1, which 1.32 and 1.33 do not serve: fix says
    which release its output is for unless --kube-version or the config chose it."""
    target = legacy_copy(tmp_path)
    told = cli("fix", "--no-config", "--unsafe-fixes", "--check", target)
    assert "the fixes are for Kubernetes 1.37 (DRA objects as resource.k8s.io/v1), the default target" in told.out
    chosen = cli("fix", "--no-config", "--unsafe-fixes", "--check", "--kube-version", "1.33", target)
    assert "default target" not in chosen.out
    (tmp_path / ".draguard.yaml").write_text('kubeVersion: "1.33"\n')
    configured = cli("fix", "--unsafe-fixes", "--check", target)
    assert configured.code == 1 and "default target" not in configured.out
    assert "resource.k8s.io/v1beta2" in cli("fix", "--unsafe-fixes", "--diff", target).out


def test_select_and_ignore(cli, tmp_path):
    target = legacy_copy(tmp_path)
    only = cli("fix", "--unsafe-fixes", "--no-config", "--check", "--select", "host-ipc", target)
    assert "would fix 1 (host-ipc)" in only.out
    without = cli("fix", "--unsafe-fixes", "--no-config", "--check", "--ignore", "legacy-gpu-resource,host-ipc", target)
    assert "legacy-gpu-resource" not in without.out.split("\n")[0] and "host-ipc" not in without.out.split("\n")[0]
    unknown = cli("fix", "--select", "no-such-rule", target)
    assert unknown.code == 2 and "no such rule: no-such-rule" in unknown.err


def test_stdin_is_fixed_to_stdout_with_the_summary_on_stderr(cli):
    done = cli("fix", "--unsafe-fixes", "--no-config", "-", stdin=LEGACY.read_text())
    assert "kind: ResourceClaimTemplate" in done.out and "fixed 11 finding(s)" in done.err


def test_a_read_only_file_is_reported_not_written(cli, tmp_path):
    if os.geteuid() == 0:
        # root writes anyway: the helper's own check is what stops it
        target = legacy_copy(tmp_path)
        os.chmod(target, 0o444)
        assert write(str(target), target.read_bytes(), b"x") == "it is read-only: not written"
        return
    target = legacy_copy(tmp_path)
    os.chmod(target, 0o444)
    done = cli("fix", "--unsafe-fixes", "--no-config", target)
    assert done.code == 2 and "read-only" in done.out and target.read_bytes() == LEGACY.read_bytes()


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path):
    target = legacy_copy(tmp_path)
    read_then = target.read_bytes()
    target.write_text("# edited by someone else meanwhile\n")
    assert write(str(target), read_then, b"fixed") == "it changed on disk since it was read: not overwritten"
    assert target.read_text() == "# edited by someone else meanwhile\n"


def test_not_utf8_is_left_untouched(cli, tmp_path):
    target = tmp_path / "latin1.yaml"
    target.write_bytes("metadata: {name: caf\xe9}\n".encode("latin-1"))
    done = cli("fix", "--no-config", target)
    assert "not UTF-8 text: left untouched" in done.out and done.code == 2


def test_a_pipe_in_the_folder_is_said_not_waited_for(tmp_path):
    """fix read a named pipe named like a manifest and waited for a writer forever."""
    shutil.copy(EXAMPLES / "legacy-multitenant" / "shared-gpu.yaml", tmp_path)
    os.mkfifo(tmp_path / "pipe.yaml")
    done = subprocess.run([sys.executable, "-m", "draguard", "fix", "--no-config", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert "pipe.yaml: not a regular file (a pipe, socket or device): not read" in done.stdout
    assert done.returncode == 1 and "fixed" in done.stdout  # the legacy file's errors left; lint only warns of it


def test_a_bom_and_crlf_survive(cli, tmp_path):
    target = tmp_path / "crlf.yaml"
    target.write_bytes(b"\xef\xbb\xbf" + LEGACY.read_bytes().replace(b"\n", b"\r\n"))
    assert cli("fix", "--unsafe-fixes", "--no-config", target).code == 0
    data = target.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf# The habits") and b"\n" not in data.replace(b"\r\n", b"")


def test_kill_9_leaves_every_file_old_or_new(tmp_path):
    """Atomic writes: SIGKILL at any moment of a run over many files leaves each one either
    as it was or as a complete run leaves it, never half-written. The kills are spread over
    the run's length, its writing phase (the end) included."""
    def fresh(folder):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for i in range(60):
            text = LEGACY.read_text().replace("shared-gpu-inference", f"app-{i:03}")
            (folder / f"f{i:03}.yaml").write_text(text)
        return folder

    def command(folder):
        return [sys.executable, "-m", "draguard", "fix", "--unsafe-fixes", "--no-config", str(folder)]

    reference = fresh(tmp_path / "reference")
    started = time.monotonic()
    subprocess.run(command(reference), capture_output=True, check=False)
    full = time.monotonic() - started
    old = {p.name: p.read_bytes() for p in fresh(tmp_path / "old").glob("*.yaml")}
    new = {p.name: p.read_bytes() for p in reference.glob("*.yaml")}
    assert all(old[name] != new[name] for name in old)
    for fraction in (0.5, 0.9, 0.97):
        folder = fresh(tmp_path / "killed")
        run = subprocess.Popen(command(folder), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(full * fraction)
        run.send_signal(signal.SIGKILL)
        run.wait()
        for path in folder.glob("*.yaml"):
            assert path.read_bytes() in (old[path.name], new[path.name]), path


def test_extended_resource_strategy_keeps_the_limits_and_adds_one_device_class_per_resource(cli, tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    shutil.copy(LEGACY, a)
    b.write_text(LEGACY.read_text().replace("name: shared-gpu-inference\n", "name: other\n", 1))
    done = cli("fix", "--unsafe-fixes", "--no-config", "--kube-version", "1.36", "--strategy", "extended-resource",
               "--select", "legacy-gpu-resource", tmp_path)
    assert "no per-pod selector, no claim sharing, no driver config" in done.out  # what the bridge does not give
    texts = a.read_text() + b.read_text()
    assert texts.count("kind: DeviceClass") == 2  # one per resource, not one per workload
    assert "extendedResourceName: nvidia.com/gpu\n" in texts and "extendedResourceName: nvidia.com/mig-1g.5gb" in texts
    assert texts.count("nvidia.com/gpu: 1") == 2  # the limits stay
    lint = cli("lint", "--no-config", "--kube-version", "1.36", "-f", "json", tmp_path).json
    assert {f["severity"] for f in lint["findings"] if f["rule"] == "legacy-gpu-resource"} == {"info"}


def test_extended_resource_strategy_needs_1_34(cli, tmp_path):
    target = legacy_copy(tmp_path)
    done = cli("fix", "--unsafe-fixes", "--no-config", "--kube-version", "1.33", "--strategy", "extended-resource",
               "--select", "legacy-gpu-resource", "--check", target)
    assert "would fix 0" in done.out and "DeviceClass extendedResourceName needs resource.k8s.io/v1" in done.out


def test_a_run_that_reads_no_object_says_so_as_lint_does(cli, tmp_path):
    """A mistyped folder or a file of other YAML is no clean run: exit 2, unless --allow-empty
    (which the pre-commit hook passes: the YAML files of a commit need not be manifests)."""
    (tmp_path / "other.yaml").write_text("foo: bar\n")
    done = cli("fix", "--no-config", tmp_path)
    assert done.code == 2 and "no Kubernetes object was checked in 1 file(s)" in done.err
    assert cli("fix", "--no-config", "--allow-empty", tmp_path).code == 0
    assert (tmp_path / "other.yaml").read_text() == "foo: bar\n"


def test_a_migration_left_undone_says_why(cli, tmp_path):
    """Where the rule migrates others but not this one, `fix` gives the reason: a share, a
    fraction, or a kind that builds its pods itself (no pod spec to claim in)."""
    target = tmp_path / "left.yaml"
    target.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "a", "image": "x", "resources": {"limits": {"nvidia.com/gpu.shared": 1, "nvidia.com/gpu": "0.5"}}}]}},
        {"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMService", "metadata": {"name": "n"},
         "spec": {"resources": {"limits": {"nvidia.com/gpu": 1}}}}]))
    done = cli("fix", "--unsafe-fixes", "--no-config", "--check", target)
    assert "left: nvidia.com/gpu.shared is a share of a device" in done.out
    assert "left: '0.5' is not a whole number of devices" in done.out
    assert "left: NIMService builds its pods itself" in done.out
    assert "the rule has no fix for it" not in done.out


def test_a_file_with_a_broken_document_gets_only_the_parseable_ones_fixed(cli, tmp_path):
    target = tmp_path / "mixed.yaml"
    broken = "---\nkind: ConfigMap\nmetadata: {name: [unclosed\n"
    target.write_text(LEGACY.read_text() + broken)
    done = cli("fix", "--unsafe-fixes", "--no-config", target)
    text = target.read_text()
    assert "kind: ResourceClaimTemplate" in text and text.endswith(broken)
    assert "[yaml-syntax]" in done.out


def test_same_named_workloads_in_two_files_each_get_the_count_they_asked_for(cli, tmp_path):
    """Two files define Pod `same` in one namespace, asking for 1 and 2 GPUs: the template
    one migration makes is not the other's (its count differs), so the second gets its own."""
    for file, count in (("one.yaml", 1), ("two.yaml", 2)):
        (tmp_path / file).write_text(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: same, namespace: ns}\nspec:\n  containers:\n"
            f"  - name: a\n    image: img\n    resources:\n      limits:\n        nvidia.com/gpu: {count}\n")
    assert cli("fix", "--unsafe-fixes", "--no-config", tmp_path).code == 0
    counts, names = {}, set()
    for file in ("one.yaml", "two.yaml"):
        documents = list(yaml.safe_load_all((tmp_path / file).read_text()))
        claimed = documents[0]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"]
        made = {d["metadata"]["name"]: d for d in documents[1:]}
        counts[file] = made[claimed]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"]
        names.add(claimed)
    assert counts == {"one.yaml": 1, "two.yaml": 2}
    assert len(names) == 2  # one name holds one request in the namespace, whichever file is applied last


def test_equal_workloads_in_two_folders_each_get_a_template_and_still_apply_alone(cli, tmp_path):
    """The same Deployment in prod/ and staging/ (per-environment folders, applied to
    different clusters): each file applied alone worked before the migration, so each gets
    the template it now names, an equal copy of the other's, and lints clean alone; where
    the file already holds it, it is not added twice."""
    workload = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  replicas: 1\n"
                "  selector: {matchLabels: {app: llm}}\n  template:\n    metadata: {labels: {app: llm}}\n"
                "    spec:\n      containers:\n      - name: server\n        image: img\n"
                "        resources:\n          limits:\n            nvidia.com/gpu: 2\n")
    for env in ("prod", "staging"):
        (tmp_path / env).mkdir()
        (tmp_path / env / "deploy.yaml").write_text(workload)
    assert cli("fix", "--unsafe-fixes", "--no-config", tmp_path).code == 0
    made = {}
    for env in ("prod", "staging"):
        path = tmp_path / env / "deploy.yaml"
        documents = list(yaml.safe_load_all(path.read_text()))
        claimed = documents[0]["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"]
        [template] = [d for d in documents if d["kind"] == "ResourceClaimTemplate"]
        assert template["metadata"]["name"] == claimed
        made[env] = template
        alone = cli("lint", "--no-config", "-f", "json", path)
        assert "claim-reference-missing" not in alone.out
    assert made["prod"] == made["staging"]
    assert cli("fix", "--unsafe-fixes", "--check", "--no-config", tmp_path).code == 0


def test_reference_files_are_read_for_what_rules_read_across_files_and_neither_judged_nor_written(cli, tmp_path):
    """As the pre-commit hooks run: only the changed workload is named, and the rest of the
    repository is `--reference .`. Its template and budget live in files of their own: without
    them, lint calls the template missing and fix adds a second budget; with them, neither,
    and the reference files' own faults (a legacy pod) are not reported or fixed."""
    from draguard.rules.examples import COMPLIANT_DEPLOYMENT

    template, deployment, budget = [d for d in yaml.safe_load_all(textwrap.dedent(COMPLIANT_DEPLOYMENT)) if d]
    (tmp_path / "deploy.yaml").write_text(yaml.safe_dump(deployment, sort_keys=False))
    (tmp_path / "template.yaml").write_text(yaml.safe_dump(template, sort_keys=False))
    (tmp_path / "pdb.yaml").write_text(yaml.safe_dump(budget, sort_keys=False))
    shutil.copy(LEGACY, tmp_path / "legacy.yaml")
    alone = cli("lint", "--no-config", "--profile", "strict", "-f", "json", tmp_path / "deploy.yaml").json
    assert {"claim-reference-missing", "rollout-pdb"} <= {f["rule"] for f in alone["findings"]}
    with_reference = cli("lint", "--no-config", "--profile", "strict", "-f", "json", tmp_path / "deploy.yaml", "--reference", tmp_path).json
    assert with_reference["findings"] == [] and with_reference["summary"]["objects"] == 1, with_reference["findings"]
    before = {p.name: p.read_text() for p in tmp_path.iterdir()}
    done = cli("fix", "--unsafe-fixes", "--no-config", "--profile", "strict", tmp_path / "deploy.yaml", "--reference", tmp_path)
    assert done.code == 0 and {p.name: p.read_text() for p in tmp_path.iterdir()} == before, done.out
    cli("fix", "--unsafe-fixes", "--no-config", "--profile", "strict", tmp_path / "deploy.yaml")
    assert "PodDisruptionBudget" in (tmp_path / "deploy.yaml").read_text()  # what the reference prevents


def test_a_read_only_file_counts_in_no_total(cli, tmp_path):
    """The summary counted a file that was not written ("fixed 12 finding(s) in 1 file(s)")."""
    target = legacy_copy(tmp_path)
    os.chmod(target, 0o444)
    due = re.search(r"would fix (\d+) ", cli("fix", "--unsafe-fixes", "--no-config", "--check", target).out).group(1)
    done = cli("fix", "--unsafe-fixes", "--no-config", target)
    assert done.code == 2 and f"{due} fix(es) not written" in done.out and "it is read-only: not written" in done.out
    assert "fixed 0 finding(s) in 0 file(s)" in done.out and target.read_bytes() == LEGACY.read_bytes()


def _linked(tmp_path):
    """repo/base/t.yaml, repo/link.yaml -> base/t.yaml, and out/o.yaml outside the repo with
    repo/away.yaml -> ../out/o.yaml."""
    (tmp_path / "repo" / "base").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    shutil.copy(LEGACY, tmp_path / "repo" / "base" / "t.yaml")
    shutil.copy(LEGACY, tmp_path / "out" / "o.yaml")
    os.symlink("base/t.yaml", tmp_path / "repo" / "link.yaml")
    os.symlink("../out/o.yaml", tmp_path / "repo" / "away.yaml")
    return tmp_path / "repo"


def test_a_symbolic_link_is_fixed_at_its_target_and_stays_a_link(cli, tmp_path):
    """The link was replaced by a regular file, its target left unfixed, exit 0."""
    repo = _linked(tmp_path)
    done = cli("fix", "--unsafe-fixes", "--no-config", repo / "link.yaml", repo / "base")
    assert os.path.islink(repo / "link.yaml") and os.readlink(repo / "link.yaml") == "base/t.yaml"
    assert "kind: ResourceClaimTemplate" in (repo / "base" / "t.yaml").read_text()
    assert "not written" not in done.out and done.code == 0, done.out


def test_a_symbolic_link_out_of_the_paths_given_is_refused(cli, tmp_path):
    repo = _linked(tmp_path)
    done = cli("fix", "--unsafe-fixes", "--no-config", repo)
    away = os.path.realpath(tmp_path / "out" / "o.yaml")
    assert f"away.yaml: it is a symbolic link to {away}, outside the paths given: not written" in done.out
    assert done.code == 2 and os.path.islink(repo / "away.yaml")
    assert (tmp_path / "out" / "o.yaml").read_bytes() == LEGACY.read_bytes()
    assert "kind: ResourceClaimTemplate" in (repo / "base" / "t.yaml").read_text()  # through its link, once


def test_a_hard_link_keeps_its_inode(cli, tmp_path):
    """A rename gave the name a new inode: the other links kept the old text."""
    target = legacy_copy(tmp_path)
    other = tmp_path / "elsewhere.yaml.keep"
    os.link(target, other)
    before = os.stat(target).st_ino
    done = cli("fix", "--unsafe-fixes", "--no-config", target)
    assert done.code == 0, done.out
    assert os.stat(target).st_ino == before and os.stat(target).st_nlink == 2
    assert other.read_text() == target.read_text() and "kind: ResourceClaimTemplate" in other.read_text()


def test_a_rule_that_fails_exits_2_in_fix_as_in_lint(cli, tmp_path, monkeypatch):
    """`fix --check` exited 0 where lint exits 2, and said "the rule has no fix for it"."""
    from draguard.rules import REGISTRY

    def broken(obj, ctx):
        raise ValueError("boom")

    monkeypatch.setattr(REGISTRY.get("host-ipc"), "check", broken)
    target = legacy_copy(tmp_path)
    assert cli("lint", "--no-config", target).code == 2
    for mode in ("--check", "--diff", None):
        done = cli("fix", "--unsafe-fixes", "--no-config", *([mode] if mode else []), target)
        assert done.code == 2, (mode, done.out)
        assert "rule failure(s)" in done.err and "[internal-error] left: a rule failed here" in done.out


def test_the_temporary_files_of_a_killed_run_are_removed_by_the_next(cli, tmp_path):
    target = legacy_copy(tmp_path)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".draguard-{int(gone.stdout)}-abcd_123"
    stale.write_text("half a file")
    busy = tmp_path / f".draguard-{os.getppid()}-abcd_123"  # a process that is running: its write is under way
    busy.write_text("being written")
    done = cli("fix", "--unsafe-fixes", "--no-config", target)
    assert done.code == 0 and not stale.exists() and busy.exists()
    assert f"{stale}: removed: a temporary file a killed draguard run left" in done.out
