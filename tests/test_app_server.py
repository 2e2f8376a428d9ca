"""The real app as a server (issue 28, item 5): ``streamlit run app.py`` with the shipped
``.streamlit/config.toml`` listens on 127.0.0.1 only and makes no outside request at a headless start.

The child runs under ``tests/socket_guard/sitecustomize.py``: every connect, datagram or name lookup towards a
non-loopback address is logged and refused, so the check also holds on a machine without a network. Nothing
on the command line sets the address or the watcher: the shipped config must.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUARD = Path(__file__).resolve().parent / "socket_guard"
START_TIMEOUT = 90.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listeners(port: int) -> list[str]:
    """Local addresses in LISTEN state on ``port``, from /proc/net/tcp and tcp6 (hex, as the kernel shows)."""
    found = []
    for name in ("tcp", "tcp6"):
        path = Path("/proc/net") / name
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            addr, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: TCP_LISTEN
                found.append(f"{name}:{addr}")
    return found


def _wait_healthy(proc: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"streamlit did not answer on {url} within {START_TIMEOUT:.0f} s:\n{log.read_text()}")


def test_shipped_config_is_closed_by_default():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["address"] == "127.0.0.1"
    assert cfg["server"]["fileWatcherType"] == "none"
    assert cfg["server"]["headless"] is True and cfg["browser"]["gatherUsageStats"] is False


def test_guard_refuses_and_logs_an_outbound_connect(tmp_path):
    """The guard itself can fail: a child that tries an outside address is refused and logged."""
    log = tmp_path / "guard.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(GUARD), str(ROOT)]),
           "PRIVALAB_SOCKET_GUARD_LOG": str(log)}
    code = ("import socket\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "try:\n    s.connect(('8.8.8.8', 1))\nexcept OSError as e:\n    print('refused', e)\n"
            "try:\n    socket.getaddrinfo('checkip.amazonaws.com', 80)\nexcept OSError as e:\n    print('refused', e)\n"
            "socket.getaddrinfo('localhost', 80)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert [line.split()[0] for line in out.stdout.splitlines()] == ["refused", "refused"], out
    assert log.read_text().splitlines() == ["connect ('8.8.8.8', 1)", "lookup 'checkip.amazonaws.com'"]


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
@pytest.mark.app
def test_headless_start_listens_on_loopback_only_and_makes_no_outside_request(tmp_path):
    port = _free_port()
    guard_log, server_log = tmp_path / "guard.log", tmp_path / "server.log"
    guard_log.touch()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(GUARD), str(ROOT)]),
           "PRIVALAB_SOCKET_GUARD_LOG": str(guard_log)}
    for key in [k for k in env if k.startswith("STREAMLIT_")]:  # only the shipped config decides
        del env[key]
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    with open(server_log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_healthy(proc, f"http://127.0.0.1:{port}", server_log)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
            assert r.status == 200
        listeners = _listeners(port)
        time.sleep(2.0)  # the start-up messages (and any IP lookup behind them) come after the port opens
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
    text = server_log.read_text()
    assert listeners == ["tcp:0100007F"], (listeners, text)  # 127.0.0.1 only, no IPv6 wildcard
    assert guard_log.read_text() == "", guard_log.read_text()
    assert f"URL: http://127.0.0.1:{port}" in text and "Network URL" not in text and "External URL" not in text, text
