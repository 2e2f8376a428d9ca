"""A local Flower federation on 127.0.0.1: one SuperLink and one SuperNode per party, each its own process.

Flower ships the processes (``flower-superlink``, ``flower-supernode``, ``flwr run``); it has no Python
call that starts a whole deployment and stops it again, so this module starts them as the README's
deployment commands do (insecure mode, loopback only), waits for them, submits a Flower App with
``flwr run`` and always stops every process it started (``stop``; a context manager), also when a
party fails. Each process gets its own session (process group), so stopping a group also ends the
``flower-superexec``, ``flwr-serverapp`` and ``flwr-clientapp`` processes Flower starts below it.

Written by hand (Flower has no such runner); a stop-gap until the shared runner of the "flower" task
lands in ``engine.federation``. No streamlit here.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["LocalFederation", "FederationError", "free_port", "processes_in_groups"]

#: the console scripts Flower installs beside the interpreter
_BIN = Path(sys.executable).parent


class FederationError(RuntimeError):
    """A federation process failed or did not answer in time (the message names the party)."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _script(name: str) -> str:
    found = _BIN / name
    return str(found) if found.exists() else (shutil.which(name) or name)


def processes_in_groups(pgids) -> list[int]:
    """Process ids still alive (not zombies) in the given process groups (read from /proc)."""
    pgids = set(int(g) for g in pgids)
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if fields[0] != "Z" and int(fields[2]) in pgids:
            alive.append(int(entry.name))
    return alive


class LocalFederation:
    """SuperLink plus one SuperNode per party on 127.0.0.1 (insecure, loopback), always stopped.

    Parameters
    ----------
    node_configs : list of dict, one per party: its ``--node-config`` (e.g. its own data path).
    names : list of str, the parties' names (for error messages).
    start_timeout : seconds to wait for the SuperLink's port.
    workdir : where logs and the Flower home go (a temporary directory when None).

    Use as a context manager; ``run_app(app_dir, run_config)`` submits a Flower App with ``flwr run``.
    """

    def __init__(self, node_configs: list[dict], names: list[str], *, start_timeout: float = 60.0,
                 workdir: str | None = None):
        self.node_configs, self.names = list(node_configs), list(names)
        self.start_timeout = float(start_timeout)
        self._own_dir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="privalab-flower-"))
        self.procs: dict[str, subprocess.Popen] = {}
        self.port = None
        self.pgids: list[int] = []

    # ------------------------------------------------------------------ processes
    def _env(self) -> dict:
        env = dict(os.environ)
        env["FLWR_HOME"] = str(self.workdir / "flwr-home")
        root = str(Path(__file__).resolve().parents[3])  # the project root: engine/ importable by the apps
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("FLWR_SUPEREXEC_TASK_POLL_INTERVAL", "0.1")  # Flower's default 1 s per message
        return env

    def _spawn(self, label: str, args: list[str]) -> None:
        log = open(self.workdir / f"{label.replace(' ', '_')}.log", "wb")
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=self._env(), cwd=self.workdir,
                                start_new_session=True)
        log.close()
        self.procs[label] = proc
        self.pgids.append(proc.pid)

    def start(self) -> "LocalFederation":
        """Start the SuperLink, wait for its port, then one SuperNode per party."""
        try:
            self.port = free_port()
            home = self.workdir / "flwr-home"
            home.mkdir(parents=True, exist_ok=True)
            (home / "config.toml").write_text(
                f'[superlink]\ndefault = "local"\n\n[superlink.local]\naddress = "127.0.0.1:{self.port}"\n'
                "insecure = true\n")
            self._spawn("superlink", [_script("flower-superlink"), "--insecure", "--host", "127.0.0.1", "--port",
                                      str(self.port), "--disable-runtime-dependency-installation"])
            self._wait_port(self.port, "the SuperLink")
            for name, cfg in zip(self.names, self.node_configs):
                node_cfg = " ".join(f"{k}={_toml_value(v)}" for k, v in cfg.items())
                self._spawn(name, [_script("flower-supernode"), "--insecure", "--superlink",
                                   f"127.0.0.1:{self.port}", "--host", "127.0.0.1", "--port", str(free_port()),
                                   "--node-config", node_cfg, "--max-wait-time", str(int(self.start_timeout))])
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_port(self, port: int, what: str) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            self.check_alive()
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.settimeout(0.5)
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.2)
        raise FederationError(f"{what} did not open 127.0.0.1:{port} within {self.start_timeout:g} s")

    def check_alive(self) -> None:
        """Raise :class:`FederationError` naming the first process that has exited."""
        for label, proc in self.procs.items():
            if proc.poll() is not None:
                tail = self.log_tail(label)
                raise FederationError(f"{label} (Flower process {proc.pid}) exited with code {proc.returncode}"
                                      + (f"; its log ends: {tail}" if tail else ""))

    def log_tail(self, label: str, chars: int = 400) -> str:
        path = self.workdir / f"{label.replace(' ', '_')}.log"
        try:
            return path.read_text(errors="replace")[-chars:].strip()
        except OSError:
            return ""

    def kill_party(self, label: str) -> None:
        """Stop one party's SuperNode (its whole process group): for tests of a party dying mid-protocol."""
        _kill_group(self.procs[label])

    def stop(self) -> None:
        """Stop every process group started here (SIGTERM, then SIGKILL after 5 s); idempotent."""
        for proc in reversed(list(self.procs.values())):
            _kill_group(proc)
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "LocalFederation":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ apps
    def run_app(self, app_dir: Path, run_config: dict, timeout: float = 60.0) -> str:
        """``flwr run app_dir local --run-config ...``: submit the app; returns flwr's output."""
        args = [_script("flwr"), "run", str(app_dir), "local"]
        for k, v in run_config.items():
            args += ["--run-config", f"{k}={_toml_value(v)}"]
        done = subprocess.run(args, env=self._env(), cwd=self.workdir, capture_output=True, text=True,
                              timeout=timeout)
        if done.returncode != 0 or "Successfully started run" not in done.stdout:
            raise FederationError(f"flwr run failed (code {done.returncode}): {(done.stdout + done.stderr)[-600:]}")
        return done.stdout


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _kill_group(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        if not processes_in_groups([proc.pid]):
            break
    if proc.poll() is None:  # pragma: no cover - SIGKILL always ends it
        proc.kill()
