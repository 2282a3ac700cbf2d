"""`draguard fix` on legacy manifests written in many YAML styles: block and flow, indented
and indentless sequences, indents of 2 and 4, every scalar double- or single-quoted, sorted
keys, comments at line ends and between lines, document markers, CRLF, no final line break.
Each fixed text parses, keeps every line no edit touched, is left as it is by a second run,
and no fix is refused for want of a text form (a YAML stream of JSON-written documents was
refused its added ResourceClaimTemplates: 98 of 300 variants, before)."""

from __future__ import annotations

import random

import pytest
import yaml

from draguard.core.config import Config
from draguard.fix.run import Choice, FileText, fix_texts

from support.byteminimal import untouched_lines_lost

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "llm", "namespace": "serving", "labels": {"app": "llm"}},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "llm"}},
             "template": {"metadata": {"labels": {"app": "llm"}},
                          "spec": {"hostIPC": True,
                                   "containers": [{"name": "server", "image": "vllm/vllm-openai:v0.18.0",
                                                   "args": ["--model", "m"],
                                                   "env": [{"name": "A", "value": "1"},
                                                           {"name": "CUDA_VISIBLE_DEVICES", "value": "0"},
                                                           {"name": "B", "value": "2"}],
                                                   "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "2"},
                                                                 "requests": {"nvidia.com/gpu": 1}},
                                                   "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}]}],
                                   "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}]}}}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "llm", "namespace": "serving"},
           "spec": {"ports": [{"port": 80}]}}
OTHERS = [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "serving"},
     "spec": {"initContainers": [{"name": "init", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
              "containers": [{"name": "a", "image": "x", "resources": {"limits": {"nvidia.com/mig-1g.10gb": 2}}},
                             {"name": "b", "image": "y", "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}]}},
    {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "serving"},
     "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
              "template": {"metadata": {"labels": {"app": "db"}},
                           "spec": {"containers": [{"name": "c", "image": "sglang",
                                                    "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}}},
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "serving"},
     "spec": {"template": {"spec": {"restartPolicy": "Never", "hostIPC": True,
                                    "containers": [{"name": "t", "image": "pytorch",
                                                    "resources": {"limits": {"amd.com/gpu": 1}}}]}}}},
]


class _Indented(yaml.SafeDumper):
    """Block sequences indented under their key."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def styled(seed: int) -> str:
    """The documents in the style `seed` draws."""
    rng = random.Random(seed)
    documents = [DEPLOYMENT, SERVICE] + rng.sample(OTHERS, rng.randint(0, len(OTHERS)))
    rng.shuffle(documents)
    written = [yaml.dump(d, Dumper=rng.choice([yaml.SafeDumper, _Indented]), sort_keys=rng.random() < 0.3,
                         indent=rng.choice([2, 4]), default_flow_style=rng.choice([False, None, True]),
                         width=rng.choice([80, 1000]), default_style=rng.choice([None, None, None, '"', "'"]))
               for d in documents]
    text = rng.choice(["", "---\n", "# head\n---\n"]) + rng.choice(["---\n", "---\n# doc\n", "\n---\n"]).join(written)
    lines = []
    for line in text.splitlines(keepends=True):
        if rng.random() < 0.15 and line.strip() and not line.rstrip().endswith(("|", ">")) \
                and not line.startswith("---") and not {'"', "'"} & set(line):
            line = line.rstrip("\n") + "  # c\n"
        if rng.random() < 0.1:
            lines.append(" " * rng.choice([0, 2, 4]) + "# between\n")
        lines.append(line)
    text = "".join(lines)
    if rng.random() < 0.2:
        text = text.replace("\n", "\r\n")
    return text.rstrip("\r\n") if rng.random() < 0.1 else text


def fixed(text: str) -> tuple[FileText, list]:
    target = FileText("styled.yaml", text)
    run = fix_texts([target], Config(kube_version="1.37"), Choice(unsafe=True))
    return target, run.left


@pytest.mark.parametrize("seed", range(120))
def test_every_style_is_fixed_exactly(seed):
    text = styled(seed)
    target, left = fixed(text)
    assert target.changed
    list(yaml.safe_load_all(target.text))  # it parses
    assert not untouched_lines_lost(text, target.text, target.changes.original_regions())
    assert not [item.reason for item in left if "could not be applied exactly" in item.reason]
    again, _ = fixed(target.text)
    assert again.text == target.text
