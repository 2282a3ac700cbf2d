"""How each inference server drains, as data: what asks it to stop taking work, how long it
then keeps serving, and which flag sets that. The helper's `drain --server NAME` and the lint
rules on the time budget both read this table; `draguard-teardown servers` prints it.

A value is only stated where its project documents or its maintainers said it (`source`);
where nobody did, `drain_seconds` is None and callers say that they assumed a value."""

from __future__ import annotations

import math
import re

from .value import Value


class Server(Value):
    """An inference server draguard knows: how to recognise it, and how it drains on SIGTERM."""

    __slots__ = ("name", "title", "detect", "process", "signal", "drain_flag", "drain_seconds", "flag_required",
                 "source", "note")

    def __init__(self, name: str, title: str, detect: str, process: str, signal: str, drain_flag: str | None,
                 drain_seconds: float | None, flag_required: bool, source: str, note: str = ""):
        self.name = name
        self.title = title
        self.detect = detect  # regex over the container's image, command and args, joined by spaces
        self.process = process  # regex over a serving process's command line (/proc/PID/cmdline)
        self.signal = signal  # what starts its drain
        self.drain_flag = drain_flag  # the flag that bounds its drain, when it has one
        self.drain_seconds = drain_seconds  # the drain without the flag (None: not documented)
        self.flag_required = flag_required  # without the flag it aborts in-flight work instead of draining
        self.source = source
        self.note = note

    def matches(self, text: str) -> bool:
        return re.search(self.detect, text) is not None

    def drain_budget(self, args: list[str]) -> tuple[float | None, str]:
        """(seconds it may keep draining after the signal, where that figure comes from)."""
        value = flag_value(args, self.drain_flag) if self.drain_flag else None
        if value is not None:
            return value, f"{self.drain_flag} {value:g}"
        if self.drain_seconds is None:
            return None, "not documented"
        return self.drain_seconds, "its default"


SERVERS = (
    Server("vllm", "vLLM", r"vllm|vllm\.entrypoints|\bvllm serve\b", r"vllm|vllm\.entrypoints", "SIGTERM",
           "--shutdown-timeout", 0, True,
           "https://github.com/vllm-project/vllm/pull/36666",
           "without --shutdown-timeout (default 0) SIGTERM aborts every in-flight request; with N it "
           "rejects new requests and waits up to N s. Sleep mode (--enable-sleep-mode, POST /sleep) "
           "frees GPU memory without exiting: it is not a drain."),
    Server("triton", "NVIDIA Triton Inference Server", r"tritonserver|tritonserver:|triton-inference-server",
           r"tritonserver", "SIGTERM", "--exit-timeout-secs", 30, False,
           "https://docs.nvidia.com/deeplearning/triton-inference-server/archives/triton_inference_server_1140/"
           "user-guide/docs/cpp_api/function_tritonserver_8h_1aba81d755274b320a8a482d8743b3324b.html",
           "waits for in-flight inferences up to --exit-timeout-secs (default 30, `tritonserver --help`) before exiting"),
    Server("tgi", "Hugging Face Text Generation Inference", r"text-generation-inference|text-generation-launcher",
           r"text-generation-launcher|text-generation-router|text-generation-server", "SIGTERM", None, 90, False,
           "https://github.com/huggingface/text-generation-inference/issues/2035",
           "on SIGTERM it stops taking requests and finishes its queue, up to a fixed 90 s"),
    Server("sglang", "SGLang", r"sglang|sglang\.launch_server", r"sglang", "SIGTERM", None, None, False,
           "https://github.com/sgl-project/sglang",
           "no documented drain bound: the time budget assumes the configured default"),
    Server("kserve", "KServe model server", r"kserve/|kserve\.|huggingfaceserver", r"kserve|huggingfaceserver|python",
           "SIGTERM", None, None, False,
           "https://github.com/kserve/kserve/pull/5496",
           "KServe's LLM templates run vLLM with --shutdown-timeout = grace - 15 and a 15 s preStop sleep; "
           "the Python model server documents no drain bound"),
)

BY_NAME = {server.name: server for server in SERVERS}


def detect(text: str) -> Server | None:
    """The first server whose pattern matches a container's image, command and args."""
    return next((server for server in SERVERS if server.matches(text)), None)


def flag_value(args: list[str], flag: str) -> float | None:
    """The number given to `flag` as `--flag N` or `--flag=N` (the last one wins, as argparse
    reads it); None when absent or not a number."""
    value = None
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            value = _number(args[i + 1])
        elif arg.startswith(flag + "="):
            value = _number(arg[len(flag) + 1:])
    return value


def flag_text(words: list[object], index: int, flag: str) -> str | None:
    """The text `words[index]` gives `flag` (`--flag=N`, or the N after `--flag`), else None."""
    word = words[index]
    if not isinstance(word, str):
        return None
    if word.startswith(flag + "="):
        return word[len(flag) + 1:]
    following = words[index + 1] if index + 1 < len(words) else None
    return following if word == flag and isinstance(following, str) else None


def _number(text: str) -> float | None:
    """A finite number of seconds; 'nan', 'inf' and '1e400' are none (no server takes them as a
    timeout, and the budget arithmetic cannot)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
