"""Commands import only what they use: listing or explaining rules loads neither the CEL
engine, protobuf, the schema validator nor semver; `--version` loads no command's module,
and a command only its own (a fresh interpreter each time)."""

import ast
import subprocess
import sys

import pytest

HEAVY = ("cel_expr_python", "google.protobuf", "jsonschema_rs", "semver")
PROBE = ("import io, contextlib, sys\nfrom draguard.cli import main\n"
         "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(sys.argv[1:])\n"
         f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))")


def loaded_by(*argv) -> str:
    return subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("argv", [("rules",), ("rules", "-f", "json"), ("explain", "cel-invalid"), ("--version",)])
def test_catalog_commands_stay_light(argv):
    assert loaded_by(*argv).split(" ", 1)[1].strip() == "[]"


def test_lint_loads_what_it_needs(monkeypatch, tmp_path):
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path))  # nothing compiled before
    assert "cel_expr_python" in loaded_by("lint", "--no-config", "examples/dra-inference")


CEL_AND_ALLOCATOR = ("cel_expr_python", "google.protobuf", "draguard.cel.env", "draguard.dra.allocator",
                     "draguard.dra.target")


def test_a_repeat_lint_of_seen_selectors_loads_neither_cel_nor_the_allocator(monkeypatch, tmp_path):
    """The example's selectors' compile facts (cel.summary) and its request's funnel against the
    built-in inventory (dra.builtin_funnels) are read back from the per-user cache: the second
    run says the same without the CEL engine, protobuf or the allocator; so does a run of an
    edited file whose claim is unchanged."""
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path / "cache"))
    example = "examples/dra-inference/inference.yaml"
    first = subprocess.run([sys.executable, "-m", "draguard", "lint", "--no-config", "-f", "json", example],
                           capture_output=True, text=True)
    assert loads(CEL_AND_ALLOCATOR, "lint", "--no-config", example) == []
    again = subprocess.run([sys.executable, "-m", "draguard", "lint", "--no-config", "-f", "json", example],
                           capture_output=True, text=True)
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)
    edited = tmp_path / "inference.yaml"
    text = open(example, encoding="utf-8").read()
    edited.write_text(text.replace("replicas: 2", "replicas: 3"), encoding="utf-8")
    assert loads(CEL_AND_ALLOCATOR, "lint", "--no-config", str(edited)) == []
    other = tmp_path / "other.yaml"  # another selector: compiled, judged
    other.write_text(text.replace("profile == '3g.40gb'", "profile == '1g.10gb'"), encoding="utf-8")
    assert "cel_expr_python" in loads(CEL_AND_ALLOCATOR, "lint", "--no-config", str(other))


COMMAND_MODULES = ("import io, contextlib, sys\nfrom draguard.cli import main\n"
                   "with contextlib.redirect_stdout(io.StringIO()):\n    main(sys.argv[1:])\n"
                   "print(sorted(m for m in sys.modules if m.startswith('draguard.cli.')))")


@pytest.mark.parametrize("argv,modules", [
    (("--version",), []),
    (("lint", "--no-config", "examples/dra-inference/inference.yaml"), ["draguard.cli.lint"]),
    (("rules",), ["draguard.cli.catalog"]),
])
def test_a_command_loads_only_its_own_module(argv, modules):
    done = subprocess.run([sys.executable, "-c", COMMAND_MODULES, *argv], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == repr(modules)


def loads(modules: tuple, *argv) -> list:
    """Which of `modules` a command imported, in a fresh interpreter."""
    probe = PROBE.replace(repr(HEAVY), repr(modules))
    done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True)
    return ast.literal_eval(done.stdout.split(" ", 1)[1])  # the probe prints a sorted list of names


def test_lint_of_one_small_file_loads_neither_re2_nor_multiprocessing_nor_the_renderer():
    """No pattern to match, too few objects to judge in parts, no chart to render (the
    renderer brings subprocess, tarfile and the chart dependency reader), no file to write
    (the atomic writer imports tempfile only for one)."""
    assert loads(("re2", "multiprocessing", "draguard.sources.render", "subprocess", "tempfile"),
                 "lint", "--no-config", "examples/dra-inference/inference.yaml") == []


def test_the_renderer_is_imported_when_a_chart_is_met(tmp_path):
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (tmp_path / "templates").mkdir()
    assert loads(("draguard.sources.render",), "lint", "--no-config", str(tmp_path)) == ["draguard.sources.render"]


def test_lint_of_one_small_file_makes_no_dataclass():
    """The records a one-file lint makes are written by hand (core.value): `dataclasses`
    imports `inspect` (with ast, dis and tokenize) and compiles each class's methods at start."""
    assert loads(("dataclasses", "inspect"), "lint", "--no-config", "examples/dra-inference/inference.yaml") == []


def test_lint_of_one_small_file_loads_neither_pathlib_nor_what_its_kinds_do_not_use():
    """The per-user cache and the shipped data name files with os.path (pathlib brings
    urllib.parse and ipaddress); the device plugin's config reader is for ConfigMaps and
    shared GPUs, the reader of a config's own checks for a config that has some."""
    assert loads(("pathlib", "draguard.model.plugin_config", "draguard.engine.user_checks"),
                 "lint", "--no-config", "examples/dra-inference/inference.yaml") == []


def test_what_a_config_map_and_a_config_with_checks_need_is_imported_then(tmp_path):
    (tmp_path / "plugin.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plugin, namespace: kube-system}\n"
        "data:\n  config.yaml: |\n    version: v1\n    sharing:\n      timeSlicing:\n        resources:\n"
        "        - {name: nvidia.com/gpu, replicas: 4}\n")
    (tmp_path / ".draguard.yaml").write_text(
        "checks:\n- id: team-label\n  kinds: [ConfigMap]\n  severity: warning\n  message: needs a team label\n"
        "  expression: \"has(object.metadata.labels) && 'team' in object.metadata.labels\"\n")
    assert loads(("draguard.model.plugin_config", "draguard.engine.user_checks"), "lint", str(tmp_path)) == \
        ["draguard.engine.user_checks", "draguard.model.plugin_config"]


def test_a_repeat_lint_of_one_small_file_loads_no_yaml_library(monkeypatch, tmp_path):
    """The block reader reads the example whole (its wrapped argument lists too) and resolves
    its scalars itself (sources.resolver); PyYAML, whose import compiles a pattern of all of
    Unicode's printable ranges, is for what it leaves to libyaml, a List, a kustomization and
    the shipped facts the per-user cache has not kept yet (the first run)."""
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path))
    assert "yaml" in loads(("yaml",), "lint", "--no-config", "examples/dra-inference/inference.yaml")
    assert loads(("yaml", "draguard.sources.libyaml"), "lint", "--no-config",
                 "examples/dra-inference/inference.yaml") == []


def test_yaml_is_imported_for_what_the_block_reader_leaves(tmp_path):
    flow = tmp_path / "flow.yaml"
    flow.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, labels: {a: b}}\n")
    assert loads(("yaml",), "lint", "--no-config", str(flow)) == ["yaml"]


def test_a_config_map_of_flow_mappings_loads_no_yaml_library(tmp_path):
    """`metadata: {name: settings, namespace: team}`: a flow mapping of scalars on one line is
    read by the block reader (startup.py's ConfigMap)."""
    flow = tmp_path / "flow.yaml"
    flow.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: team}\ndata: {mode: fast}\n")
    assert loads(("yaml", "draguard.sources.libyaml"), "lint", "--no-config", str(flow)) == []


def test_a_lint_of_valid_objects_loads_neither_the_schema_validator_nor_shutil_nor_textwrap(tmp_path):
    """The example's objects fit their schemas, which facts.schema_fit answers without
    jsonschema_rs (whose module imports email.utils, socket, calendar...); argparse's help
    width is read without shutil (cli._Parser); the rules' examples are indented without
    textwrap. An object that does not fit loads jsonschema_rs, to word the errors."""
    assert loads(("jsonschema_rs", "email.utils", "shutil", "textwrap"), "lint", "--no-config",
                 "examples/dra-inference/inference.yaml") == []
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labelz: {}\n")
    assert loads(("jsonschema_rs",), "lint", "--no-config", str(wrong)) == ["jsonschema_rs"]


@pytest.mark.parametrize("columns", [None, "50", "0", "wide"])
def test_help_is_as_wide_as_shutil_says(monkeypatch, columns):
    import shutil

    from draguard.cli import terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns



@pytest.mark.parametrize("columns", [None, "-5", "0", "1", "7", " 120 ", "1_00", "100000", "9" * 40, "wide", ""])
@pytest.mark.parametrize("stdout", ["captured", "none"])
def test_help_is_written_as_argparse_writes_it_whatever_columns_says(monkeypatch, columns, stdout):
    """`--help` (every command's parser) with $COLUMNS junk, zero, negative, tiny, huge, and no
    terminal (or no standard output at all): the text argparse's own formatter makes, no crash."""
    import argparse

    from draguard import cli

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    if stdout == "none":
        monkeypatch.setattr(sys, "__stdout__", None)
    def helps() -> list[str]:
        parser = cli._parser()
        commands = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
        return [parser.format_help(), *(each.format_help() for action in commands for each in action.choices.values())]

    ours = helps()
    monkeypatch.setattr(cli._Parser, "_get_formatter", argparse.ArgumentParser._get_formatter)
    assert len(ours) > 5 and ours == helps()


def test_a_repeat_lint_on_the_built_in_inventory_does_not_load_the_device_model(monkeypatch, tmp_path):
    """A slice's names published twice (rules.cel) and the claim the scheduler would make for
    a pod's served extended resources (rules.satisfiability, judged by its requests alone) are
    judged without dra.devices, whose dataclasses each part of a `lint --jobs` run imported
    again (6 ms of CPU). The first run computes the built-in inventory's answers (with the
    allocator, which reads the device model); a repeat reads them from the per-user cache."""
    from draguard.rules.cel import _TWICE_SLICE
    from tests.unit.rules.test_unsatisfiable_truth import EXTENDED

    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "slice.yaml").write_text(_TWICE_SLICE)
    (tmp_path / "pod.yaml").write_text(EXTENDED.format(count=64))
    for name in ("slice.yaml", "pod.yaml"):
        loads((), "lint", "--no-config", str(tmp_path / name))
        assert loads(("draguard.dra.devices",), "lint", "--no-config", str(tmp_path / name)) == []


def test_the_rule_catalog_a_run_in_parts_loads_before_forking_makes_no_dataclass():
    """engine.parallel.in_parts imports every rule module before it forks the parts; the
    live cluster's records (model.live, which the cluster rules import) are written by hand,
    so that serial start does not import `dataclasses` (with inspect, ast, dis and tokenize)."""
    probe = ("import sys\nfrom draguard.rules.registry import load_catalog\nload_catalog()\n"
             "print(sorted(m for m in ('dataclasses', 'inspect') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert ast.literal_eval(done.stdout) == []
