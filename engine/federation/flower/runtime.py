"""A local Flower federation on 127.0.0.1 (one SuperLink, one SuperNode per party) and run submission.

:class:`LocalFederation` starts ``flower-superlink --insecure`` on a free loopback port and one
``flower-supernode`` per party, each with its own ``--node-config "party=<i> data-dir='<its own dir>'
identity-key=... pinned-peers=..."`` (its identity key and the pins of its peers' identities, see
:mod:`engine.federation.identity`);
it is a context manager that always stops every process it started (also on failure), with a timeout on
every wait. As deployed, it can also run with TLS (``tls=True``: a fresh CA and a SuperLink certificate for its
address, :mod:`.credentials`) and SuperNode authentication (``supernode_auth=True``: one P-384 key per party,
registered with ``flwr supernode register`` before its SuperNode starts), with the SuperLink on another address
than loopback (``host``) and each process started through a command prefix of the caller's (``launcher``, e.g.
``ip netns exec <namespace>``: ``tests/test_flower_netns.py`` runs the coordinator and each party in a network
namespace of its own). Every process gets :func:`flower_env` (the interpreter's ``bin`` first on ``PATH``, telemetry
off). :func:`submit_run` submits a Flower app with ``flwr run <app-dir> <connection>`` (the
connection written to a private ``FLWR_HOME/config.toml``) and waits for the ServerApp's result file,
checking meanwhile that every process of the federation is alive: a SuperNode that dies mid-protocol is
a :class:`FederationError` naming its party, never a hang.

Progress: inside ``with watching(callback)``, the waits of this module call ``callback(status)`` about every
0.05 s with a dict: ``{"phase": "starting"}`` while a federation starts, ``{"phase": "submitting"}`` while
``flwr run`` submits a run, then ``{"phase": "running", ...}`` with the run's channel counts once its hub writes
them (``connected``, ``rounds``, a protocol's ``iteration``: :class:`~engine.federation.flower.channel.Hub`,
:func:`progress_file`). An exception the callback raises (a page's Cancel) ends the wait; the caller's
``with`` blocks then stop every process of the federation. The one hook a page needs; the estimators' signatures
do not change (a context variable, as ``ui.runtime.jobs.waiting`` does).

Written by hand: Flower ships the processes and the CLI but no launcher that starts a whole federation
on one machine for a test or a laptop run and tears it down (its simulation engine runs the apps in one
process, which is exactly what this transport must not do).
"""
from __future__ import annotations

import contextvars
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from engine.federation.identity import IDENTITY_FILE, PINS_FILE, create_identity, write_pins

__all__ = [
    "FLOWER_ENV",
    "HUB_ADDRESS_ENV",
    "FederationError",
    "LocalFederation",
    "flower_env",
    "flwr_cli",
    "free_port",
    "process_started",
    "progress_file",
    "run_id_of",
    "submit_run",
    "watching",
    "write_progress",
]

LOOPBACK = "127.0.0.1"
START_TIMEOUT = 30.0  # seconds for the SuperLink to answer and every SuperNode to register
STOP_TIMEOUT = 10.0  # seconds to wait for a killed process
SUPERNODE_KEY_FILE = "supernode-auth-key"  # a party's SuperNode authentication key (supernode_auth=True), in its dir
# seconds a Flower process gets after SIGTERM before SIGKILL: the local federation keeps no state worth a longer wait
# (an in-memory SuperLink; each party's files are written before its reply), and its stop is part of every fit
STOP_GRACE = 1.0
STATUS_INTERVAL = 15.0  # seconds between two questions to the SuperLink about a run's status
#: every Flower process the project starts: no telemetry (Flower's default POSTs platform facts from each process);
#: no update check (flwr 1.42's CLI, SuperLink, SuperNode and SuperExec each POST to api.flower.ai from a non-daemon
#: thread: nothing may phone home, and each process waited up to 3 s for it before exiting: `flwr run` took 11 s);
#: the SuperExec polls for the next ClientApp task every 0.1 s instead of 1 s (0.02 s raised the load on 2 cores)
#: where the run's channel (:class:`~engine.federation.flower.channel.Hub`, in the ServerApp) listens: ``host`` or
#: ``host:port``, read from the coordinator's environment (127.0.0.1 when unset); ``LocalFederation(host=...)`` sets it
HUB_ADDRESS_ENV = "PRIVALAB_HUB_ADDRESS"
FLOWER_ENV = {"FLWR_TELEMETRY_ENABLED": "0", "FLWR_DISABLE_UPDATE_CHECK": "1",
              "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": "0.1"}


def flower_env(base: dict | None = None, **extra) -> dict:
    """The environment of a Flower process started here: ``base`` (default ``os.environ``) with the running
    interpreter's ``bin`` directory first on ``PATH`` (Flower starts ``flower-superexec`` and ``flwr-clientapp``
    by name, so a shell that never activated the venv still finds them), telemetry off, and ``extra``."""
    env = dict(os.environ if base is None else base)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([bin_dir, *[d for d in env.get("PATH", "").split(os.pathsep) if d and d != bin_dir]])
    env.update(FLOWER_ENV)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def process_started() -> float:
    """When the running process started, as a ``time.time()`` stamp (Linux /proc; ``nan`` elsewhere)."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


_WATCH: contextvars.ContextVar = contextvars.ContextVar("privalab_flower_watch", default=None)


@contextmanager
def watching(callback):
    """``callback(status)`` for the waits inside the block (see the module docstring)."""
    token = _WATCH.set(callback)
    try:
        yield callback
    finally:
        _WATCH.reset(token)


def _report(status: dict) -> None:
    callback = _WATCH.get()
    if callback is not None:
        callback(status)


def progress_file(result_path) -> str:
    """Where a run's hub writes its progress: beside the run's result file (the driver knows both)."""
    return f"{result_path}.progress"


def write_progress(path, status: dict) -> None:
    """Rewrite a run's progress file with ``status`` (counts only, never a value of the protocol), atomically: the
    driver may read it at any time. Called by the run's central role (its hub, or a Flower-round loop)."""
    tmp = f"{path}.part"
    with open(tmp, "w") as fh:
        json.dump(status, fh)
    os.replace(tmp, path)


def _read_progress(path: Path) -> dict:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):  # not written yet, or replaced while read
        return {}


class FederationError(RuntimeError):
    """The federation could not start, a party's process died, or a run failed or timed out."""


def free_port() -> int:
    """A TCP port free on the loopback interface now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def _wait_port(host: str, port: int, timeout: float, alive) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive()
        _report({"phase": "starting"})
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise FederationError(f"nothing answered on {host}:{port} within {timeout:.0f} s")


def _stop(procs: list[subprocess.Popen]) -> None:
    """SIGTERM every process group at once (Flower's processes start children), wait, then SIGKILL the rest."""
    live = [p for p in procs if p.poll() is None]
    for proc in live:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_GRACE
    for proc in live:
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=STOP_TIMEOUT)


def write_connection(flwr_home: Path, address: str, name: str = "privalab", root_certificates=None) -> str:
    """Write ``FLWR_HOME/config.toml`` with one SuperLink connection (insecure, or TLS checked against the CA file
    ``root_certificates``); returns its name."""
    flwr_home.mkdir(parents=True, exist_ok=True)
    security = ("insecure = true" if root_certificates is None
                else f"root-certificates = {json.dumps(str(root_certificates))}")
    (flwr_home / "config.toml").write_text(
        f'[superlink]\ndefault = "{name}"\n\n[superlink.{name}]\naddress = "{address}"\n{security}\n')
    return name


class LocalFederation:
    """One SuperLink and one SuperNode per party (on 127.0.0.1 by default), stopped on exit.

    Parameters
    ----------
    parties : list of str
        Party ids (``party`` in each SuperNode's node config), e.g. ``["ta", "1", "2", "3"]``.
    workdir : str or None
        Where each party's data directory (``<workdir>/party-<id>``) and the logs go; a fresh temporary
        directory (removed on exit) when None.
    env : dict or None
        Extra environment for the processes (``PYTHONPATH`` is set so that they import this ``engine``).
    host : str
        The address the SuperLink listens on and the parties dial (default 127.0.0.1); the run's channel listens
        there too (``PRIVALAB_HUB_ADDRESS``, :mod:`.channel`). Every SuperNode's own Runtime API stays on its
        127.0.0.1.
    tls : bool
        TLS on the SuperLink's port: a fresh CA and a certificate for ``host`` (``<workdir>/tls``); the parties and
        ``flwr run`` check it against that CA. Default False (``--insecure``, loopback only).
    supernode_auth : bool
        SuperNode authentication: the SuperLink accepts only the SuperNodes whose public key was registered
        (``flwr supernode register``); each party's key is made in its own directory. Default False.
    launcher : callable or None
        ``launcher(name)`` -> the command prefix that starts the process ``name`` ("superlink", "party <id>"),
        e.g. ``["ip", "netns", "exec", "<namespace>"]`` (it must exec the command: the prefix's process is the one
        stopped); None starts every process directly.

    Attributes
    ----------
    address : str, the SuperLink's "host:port" (its one HTTP port: Fleet, Control and Runtime APIs).
    data_dirs : dict party id -> Path, each SuperNode's own data directory.
    processes : dict name -> subprocess.Popen ("superlink", "party <id>").
    """

    def __init__(self, parties, workdir: str | None = None, env: dict | None = None, *, host: str = LOOPBACK,
                 tls: bool = False, supernode_auth: bool = False, launcher=None):
        if str(host) != LOOPBACK and not tls:  # --insecure is for the loopback only
            raise ValueError(f"a federation on {host} needs tls=True: without TLS its SuperLink listens with "
                             "--insecure, which is for 127.0.0.1 only")
        self.parties = [str(p) for p in parties]
        self._own_dir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="privalab-flower-") if workdir is None else workdir)
        self.flwr_home = self.workdir / "flwr-home"
        self.data_dirs = {p: self.workdir / f"party-{p}" for p in self.parties}
        self.processes: dict[str, subprocess.Popen] = {}
        repo = str(Path(__file__).resolve().parents[3])
        self.env = flower_env(None, FLWR_HOME=str(self.flwr_home), PYTHONUNBUFFERED="1",
                              PYTHONPATH=os.pathsep.join([repo, *filter(None, [os.environ.get("PYTHONPATH")])]),
                              **{HUB_ADDRESS_ENV: host}, **(env or {}))  # always: never an inherited address
        self.host, self.tls, self.supernode_auth, self.launcher = str(host), bool(tls), bool(supernode_auth), launcher
        self.tls_files: dict[str, Path] = {}
        self.address = ""
        self.ports: list[int] = []

    # ------------------------------------------------------------------ processes
    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.workdir / f"{name.replace(' ', '-')}.log", "wb")  # noqa: SIM115 (closed with the process)
        prefix = [] if self.launcher is None else [str(a) for a in self.launcher(name)]
        proc = subprocess.Popen([*prefix, *args], stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=self.workdir,
                                start_new_session=True)
        log.close()
        self.processes[name] = proc
        return proc

    def check_alive(self) -> None:
        """``FederationError`` naming the first process of the federation that has exited."""
        for name, proc in self.processes.items():
            if proc.poll() is not None:
                raise FederationError(f"{name} of the Flower federation exited (code {proc.returncode}); "
                                      f"its log: {self.log_path(name)}")

    def log_path(self, name: str) -> Path:
        """The log file of the process ``name`` in the federation's work directory."""
        return self.workdir / f"{name.replace(' ', '-')}.log"

    def start(self) -> LocalFederation:
        """Start the SuperLink and one SuperNode per party (registering their keys first with
        ``supernode_auth``); returns self."""
        bin_dir = Path(sys.executable).parent
        port = free_port()  # free on this loopback: a launcher's fresh network namespace has every port free
        self.address = f"{self.host}:{port}"
        self.ports = [port]
        if self.tls:
            from engine.federation.flower.credentials import make_tls

            self.tls_files = make_tls(self.workdir / "tls", list(dict.fromkeys([self.host, LOOPBACK])))
        write_connection(self.flwr_home, self.address, root_certificates=self.tls_files.get("ca"))
        link_security = (["--ssl-ca-certfile", str(self.tls_files["ca"]), "--ssl-certfile", str(self.tls_files["cert"]),
                          "--ssl-keyfile", str(self.tls_files["key"])] if self.tls else ["--insecure"])
        self._spawn("superlink", [str(bin_dir / "flower-superlink"), *link_security,
                                  *(["--enable-supernode-auth"] if self.supernode_auth else []), "--host", self.host,
                                  "--port", str(port), "--disable-runtime-dependency-installation"])
        _wait_port(self.host, port, START_TIMEOUT, self.check_alive)
        pins = self._provision_identities()
        auth_keys = self._register_supernodes() if self.supernode_auth else {}
        node_security = ["--root-certificates", str(self.tls_files["ca"])] if self.tls else ["--insecure"]
        for p in self.parties:
            node_config = (f"party='{p}' data-dir='{self.data_dirs[p]}' "
                           f"identity-key='{self.data_dirs[p] / IDENTITY_FILE}' pinned-peers='{pins[p]}'")
            self.ports.append(free_port())
            auth = ["--auth-supernode-private-key", str(auth_keys[p])] if p in auth_keys else []
            self._spawn(f"party {p}", [str(bin_dir / "flower-supernode"), *node_security, *auth,
                                       "--superlink", self.address, "--host", LOOPBACK, "--port", str(self.ports[-1]),
                                       "--max-retries", "50", "--node-config", node_config])
        self._wait_registered()
        return self

    def _register_supernodes(self) -> dict:
        """Each party's SuperNode authentication key, made in its own directory, its public half registered with the
        SuperLink (``flwr supernode register``, as the coordinator does for each key a party sent it). Returns party
        id -> private key file."""
        from engine.federation.flower.credentials import make_supernode_key

        keys = {}
        for p in self.parties:
            keys[p] = self.data_dirs[p] / SUPERNODE_KEY_FILE
            public = make_supernode_key(keys[p])
            code, out = flwr_cli(["supernode", "register", str(public)], dict(self.env), timeout=START_TIMEOUT)
            if code != 0:
                raise FederationError(f"the SuperLink refused party {p}'s SuperNode key: {out.strip()[-500:]}")
            _report({"phase": "starting"})
        return keys

    def _provision_identities(self) -> dict:
        """Each party's identity key in its own directory and, beside it, the pins of every party's identity.

        On one machine the launcher plays every party's operator, so it can pin the identities itself; in a
        deployment each operator makes its own (``python -m engine.federation.identity <data-dir>``) and the
        operators exchange fingerprints out of band (docs: the threat model). Returns party id -> pins file."""
        publics = {}
        for p in self.parties:
            self.data_dirs[p].mkdir(parents=True, exist_ok=True)
            publics[p] = create_identity(self.data_dirs[p] / IDENTITY_FILE)
        out = {}
        for p in self.parties:
            out[p] = self.data_dirs[p] / PINS_FILE
            write_pins(out[p], {q: pub for q, pub in publics.items() if q != p})
        return out

    def _wait_registered(self) -> None:
        """Wait until the SuperLink has activated every SuperNode (a run sees only registered nodes)."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            self.check_alive()
            log = self.log_path("superlink").read_text(errors="replace")
            if log.count("Activated node_id") >= len(self.parties):
                return
            _report({"phase": "starting"})
            time.sleep(0.2)
        raise FederationError(f"not every SuperNode registered with the SuperLink within {START_TIMEOUT:.0f} s")

    def leftover_processes(self) -> list[int]:
        """Pids of processes still running whose command line names this federation's ports or directory."""
        hosts = dict.fromkeys([LOOPBACK, self.host])
        marks = [f"{h}:{p}" for p in self.ports for h in hosts] + [f" {p} " for p in self.ports] + [str(self.workdir)]
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                cmd = " " + (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace") + " "
                state = (entry / "stat").read_text().split(") ")[-1][:1]
            except OSError:
                continue
            if state != "Z" and ("flower" in cmd or "flwr" in cmd) and any(m in cmd for m in marks):
                pids.append(int(entry.name))
        return pids

    def _reap_leftovers(self) -> None:
        """App processes of this federation that outlived their parent's group (Flower may start them in a session
        of their own): ``STOP_GRACE`` seconds to exit, then SIGKILL by pid."""
        if not self.ports:
            return
        deadline = time.monotonic() + STOP_GRACE
        while (left := self.leftover_processes()) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def kill_party(self, party: str, sig: int = signal.SIGKILL) -> None:
        """Kill one party's SuperNode (and its children): a party that dies mid-protocol (tests)."""
        proc = self.processes[f"party {party}"]
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        proc.wait(timeout=STOP_TIMEOUT)

    def stop(self) -> None:
        """Stop every process, then remove the temporary directory if it made one."""
        _stop(list(self.processes.values()))  # all at once: none keeps state worth an ordered shutdown
        self._reap_leftovers()
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> LocalFederation:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


def run_id_of(cli_output: str) -> str | None:
    """The run id in ``flwr run``'s output (default or JSON format), or None."""
    match = re.search(r'(?:"run-id":\s*"|[Ss]tarted run )(\d+)', cli_output)
    return match.group(1) if match else None


_CLI_LOCK = threading.Lock()  # the in-process CLI runs with its environment in os.environ: one at a time


def flwr_cli(args: list[str], env: dict, timeout: float) -> tuple[int, str]:
    """``flwr <args>`` with environment ``env``: (exit code, its output).

    In this process when flwr's CLI (a typer app) imports here: its runner sets ``env`` for the call and captures
    the output, so a fit does not start one more Python process importing flwr (about 1.5 s CPU, 10-20 s of wall
    time on 2 loaded cores); otherwise the ``flwr`` program beside the interpreter."""
    try:
        from flwr.cli.app import app
        from typer.testing import CliRunner
    except ImportError:
        done = subprocess.run([str(Path(sys.executable).parent / "flwr"), *args], capture_output=True, text=True,
                              env=env, timeout=timeout)
        return done.returncode, done.stdout + done.stderr
    keep = {k: v for k, v in os.environ.items() if k not in env}
    with _CLI_LOCK:  # CliRunner's env patches os.environ; variables outside env are unset for the call
        result = CliRunner().invoke(app, args, env={**{k: None for k in keep}, **env}, catch_exceptions=True)
    text = result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        text += f"\n{type(result.exception).__name__}: {result.exception}"
    return int(result.exit_code), text


def submit_run(app_dir: Path, flwr_home: Path, run_config: dict, result_path: Path, *, timeout: float,
               check_alive=None, env: dict | None = None, submitted: dict | None = None) -> dict:
    """``flwr run app_dir`` with ``run_config``; wait for ``result_path`` (JSON) written by the ServerApp.

    ``check_alive()`` is called while waiting (it raises when a party's process died). Raises
    :class:`FederationError` when the run cannot start, the ServerApp reports an error, or ``timeout``
    seconds pass; returns the parsed result. ``submitted`` (a dict) gets
    ``flwr run``'s output ("stdout") and when it was issued and accepted (``time.time()``: "issued", "accepted").
    """
    overrides = " ".join(f"{k}={json.dumps(v)}" for k, v in run_config.items())
    run_env = flower_env({**os.environ, **(env or {})}, FLWR_HOME=str(flwr_home))
    flwr = str(Path(sys.executable).parent / "flwr")
    if submitted is not None:
        submitted["issued"] = time.time()
    _report({"phase": "submitting"})
    # the default output ("Successfully started run <id>"): flwr's JSON output bypasses any capture (sys.__stdout__)
    code, out = flwr_cli(["run", str(app_dir), "--run-config", overrides], run_env, timeout=min(timeout, 120))
    if submitted is not None:
        submitted["stdout"], submitted["accepted"] = out, time.time()
    if code != 0:
        raise FederationError(f"flwr run failed: {out.strip()[-2000:]}")
    run_id = run_id_of(out)
    deadline, next_status, status = time.monotonic() + timeout, time.monotonic() + STATUS_INTERVAL, None
    progress = Path(progress_file(result_path))
    try:
        while time.monotonic() < deadline:
            if result_path.exists():
                result = json.loads(result_path.read_text())
                if result.get("error"):
                    raise FederationError(result["error"])
                return result
            if check_alive is not None:
                check_alive()
            if _WATCH.get() is not None:
                _report({"phase": "running", **_read_progress(progress)})
            # a ServerApp that died writes no result: ask the SuperLink now and then, in the background (`flwr ls`
            # is a process of its own; waiting for it here held the result back by its start-up, seconds)
            if status is not None and status.poll() is not None:
                state = _status_of(status.communicate()[0])
                status = None
                if state.startswith("finished") and not result_path.exists():
                    time.sleep(1.0)
                    if not result_path.exists():
                        raise FederationError(f"Flower run {run_id} ended ({state}) without a result")
            if run_id and status is None and time.monotonic() > next_status:
                status = subprocess.Popen([flwr, "ls", "--run-id", str(run_id), "--format", "json"],
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=run_env)
                next_status = time.monotonic() + STATUS_INTERVAL
            time.sleep(0.05)
    finally:
        if status is not None and status.poll() is None:
            status.kill()
            status.wait(timeout=STOP_TIMEOUT)
    raise FederationError(f"the Flower run wrote no result within {timeout:.0f} s")


def _status_of(ls_output: str) -> str:
    """The run's status in ``flwr ls --format json`` output ("finished:completed", ...; "" if unknown)."""
    try:
        runs = json.loads(ls_output[ls_output.index("{"):]).get("runs", [])
    except ValueError:
        return ""
    return str(runs[0].get("status", "")) if runs else ""


def run_status(flwr: str, run_id: str, env: dict) -> str:
    """The SuperLink's status of a run ("running", "finished:completed", "finished:failed", ...; "" if unknown)."""
    try:
        done = subprocess.run([flwr, "ls", "--run-id", str(run_id), "--format", "json"], capture_output=True,
                              text=True, env=env, timeout=60)
    except subprocess.TimeoutExpired:
        return ""
    return _status_of(done.stdout)
