"""The serving key of `draguard webhook --self-signed`: private from the moment it exists, and
gone with its folder when the webhook stops (SIGTERM included)."""

from __future__ import annotations

import builtins
import os
import re
import signal
import stat
import subprocess
import sys
import time

from support.webhook import free_port


def test_the_self_signed_key_is_never_readable_by_others(tmp_path, monkeypatch):
    """Created 0600 (not created with the umask's mode and narrowed after), whatever the umask."""
    from draguard.admission.certs import self_signed

    modes: dict[str, int] = {}  # file name -> its mode the moment it was opened
    real_open, real_os_open = builtins.open, os.open

    def note(path, fd) -> None:
        if str(path).startswith(str(tmp_path)):
            modes.setdefault(os.path.basename(path), stat.S_IMODE(os.fstat(fd).st_mode))

    def spy_open(file, *args, **kwargs):
        handle = real_open(file, *args, **kwargs)
        note(file, handle.fileno())
        return handle

    def spy_os_open(path, flags, mode=0o777, *args, **kwargs):
        fd = real_os_open(path, flags, mode, *args, **kwargs)
        note(path, fd)
        return fd

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    umask = os.umask(0)
    try:
        cert, key = self_signed(str(tmp_path), ["localhost"])
    finally:
        os.umask(umask)
        monkeypatch.undo()
    private = [name for name in modes if "key" in name]
    assert private and all(modes[name] == 0o600 for name in private), modes
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["tls.crt", "tls.key"]  # no temporary file left
    assert open(key).read().startswith("-----BEGIN PRIVATE KEY-----")


def test_sigterm_removes_the_self_signed_folder_and_its_key(tmp_path):
    port = free_port()
    log = tmp_path / "log"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    with open(log, "w") as err:
        process = subprocess.Popen([sys.executable, "-m", "draguard", "webhook", "--offline", "--self-signed",
                                    "--host", "127.0.0.1", "--port", str(port)], stderr=err, env=env)
    try:
        deadline = time.monotonic() + 30
        while '"event":"serving"' not in log.read_text() and time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()
            time.sleep(0.1)
        folders = [p for p in tmp_path.iterdir() if re.match(r"draguard-webhook-", p.name)]
        assert len(folders) == 1 and stat.S_IMODE(os.stat(folders[0] / "tls.key").st_mode) == 0o600
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert not folders[0].exists(), "the key outlived the webhook"
    assert '"event":"stopped"' in log.read_text()
