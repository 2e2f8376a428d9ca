"""P3LS and VAR-ADMM over Flower as deployed: the coordinator and each party in a Linux network namespace of its
own, with TLS and SuperNode authentication; the models equal the in-process fits (issue 32, item 4).

Layout (made here, removed at the end, also on failure): one bridge in a hub namespace the test made, and a veth
pair from it to each of the coordinator's and the parties' namespaces (``10.77.0.0/24``, an address range used
only inside these namespaces; none of them has a default route or any link but its own, and no veth end is in
the machine's own namespace, so nothing the federations send can leave them). Two drivers (P3LS: the TA and 3 data
holders; VAR-ADMM: 3 owners, in the holders' namespaces), each ``flwr run`` and its estimator, run at once in the
coordinator's namespace as child processes of this test (``python tests/test_flower_netns.py <config>``), one
federation each. Each SuperLink listens on the coordinator's address with a certificate for it; every SuperNode
runs in its own party's namespace through ``LocalFederation(launcher=...)`` (``ip netns exec``), dials the
SuperLink across the bridge, checks its certificate against the run's CA and signs in with a key registered before
it started; the run's channel listens on the coordinator's address (``PRIVALAB_HUB_ADDRESS``). Beside the P3LS
fit, a SuperNode with a key nobody registered knocks, and must be refused.

While they run, this test watches /proc: every process the drivers started is in one of the test's namespaces, and
every listening socket in them is on 127.0.0.1 or (in the coordinator's namespace only) the coordinator's address.

Oracles: the in-process fits (same parameters and random_state). P3LS: the same float operations on the same
inputs, except that over Flower the parties' masked values are summed and unmasked in their own processes; the
masks are orthogonal, so the two differ by a few ulps of the coefficients (2e-15 measured, coefficients of order
1); 1e-10 leaves five orders of margin, and a wrong mask or a lost message moves them at order 1. VAR-ADMM: both
converged at tol 1e-10; 1e-8 as tests/test_flower_var.py argues (measured 3e-14).

Skips when not root, or when ``ip netns add`` fails; ``PRIVALAB_REQUIRE_NETNS=1`` (``.ci/run``) turns that skip
into a failure, so CI cannot pass without running it.
"""
from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIRE_ENV = "PRIVALAB_REQUIRE_NETNS"
SUBNET = "10.77.0"  # /24, used only inside the test's namespaces
COORD_IP = f"{SUBNET}.1"
PARTIES = ["ta", "1", "2", "3"]  # P3LS: the trusted authority and 3 data holders, one SuperNode each
CHILD_TIMEOUT = 240.0  # seconds the driver in the coordinator's namespace may take (start, fit, stop)
IP_TIMEOUT = 10.0  # seconds for one `ip` command
IP = shutil.which("ip") or "/usr/sbin/ip"


def _required() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip() not in ("", "0", "false", "no")


def _unavailable(reason: str):
    """Skip, or fail where CI requires the test (PRIVALAB_REQUIRE_NETNS=1)."""
    if _required():
        pytest.fail(f"{REQUIRE_ENV}=1 but network namespaces cannot be made here: {reason}")
    pytest.skip(f"network namespaces cannot be made here: {reason}")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([IP, *args], capture_output=True, text=True, timeout=IP_TIMEOUT, check=check)


class Namespaces:
    """The test's namespaces: ``hub`` (the bridge), ``coord`` and one per party; :meth:`remove` kills every
    process left in them and deletes them (each step bounded by a timeout, errors collected, never raised)."""

    def __init__(self, parties):
        tag = f"plx{os.getpid()}"
        self.hub, self.coord = f"{tag}-hub", f"{tag}-coord"
        self.party = {p: f"{tag}-p{p}" for p in parties}
        self.address = {self.coord: COORD_IP, **{ns: f"{SUBNET}.{11 + i}" for i, ns in enumerate(self.party.values())}}
        self.made: list[str] = []

    def all(self) -> list[str]:
        return [self.hub, self.coord, *self.party.values()]

    def create(self) -> None:
        for ns in self.all():
            _ip("netns", "add", ns)
            self.made.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.hub, "link", "set", "br0", "up")
        for i, (ns, addr) in enumerate(self.address.items()):
            # both ends made inside the test's namespaces: no interface ever appears in the machine's own
            _ip("-n", self.hub, "link", "add", f"v{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("-n", self.hub, "link", "set", f"v{i}", "master", "br0", "up")
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")

    def inodes(self) -> dict[int, str]:
        """Network namespace inode -> name (what /proc/<pid>/ns/net points to)."""
        return {os.stat(f"/run/netns/{ns}").st_ino: ns for ns in self.made}

    def remove(self) -> list[str]:
        errors = []
        for ns in self.made:
            try:
                for pid in _ip("netns", "pids", ns, check=False).stdout.split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            except (subprocess.TimeoutExpired, OSError) as exc:
                errors.append(f"{ns}: {exc}")
        for ns in reversed(self.made):
            try:
                done = _ip("netns", "del", ns, check=False)
                if done.returncode:
                    errors.append(f"{ns}: {done.stderr.strip()}")
            except (subprocess.TimeoutExpired, OSError) as exc:
                errors.append(f"{ns}: {exc}")
        self.made = []
        return errors


def _remove_stale() -> None:
    """Namespaces of an earlier run of this test whose process is gone (killed before its teardown): deleted."""
    try:
        listed = _ip("netns", "list", check=False).stdout.split()
    except (subprocess.TimeoutExpired, OSError):
        return
    for ns in listed:
        match = re.fullmatch(r"plx(\d+)-\w+", ns)
        if match and not Path(f"/proc/{match.group(1)}").exists():
            stale = Namespaces([])
            stale.made = [ns]
            stale.remove()


@pytest.fixture(scope="module")
def namespaces():
    if not sys.platform.startswith("linux"):
        _unavailable("not Linux")
    if os.geteuid() != 0:
        _unavailable("not root (ip netns add needs CAP_SYS_ADMIN)")
    if not Path(IP).exists():
        _unavailable("iproute2's `ip` is not installed")
    _remove_stale()
    nss = Namespaces(PARTIES)
    try:
        try:
            nss.create()
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
            detail = getattr(exc, "stderr", "") or exc
            _unavailable(f"{' '.join(getattr(exc, 'cmd', []) or [])}: {str(detail).strip()}")
        yield nss
    finally:
        errors = nss.remove()
        assert not errors, f"namespaces not removed: {errors}"
        left = [ns for ns in _ip("netns", "list", check=False).stdout.split() if ns.startswith(f"plx{os.getpid()}-")]
        assert not left, f"namespaces left: {left}"


# ---------------------------------------------------------------------------------------------- watching /proc
def _listening(pid: int) -> set[tuple[str, int]]:
    """Listening TCP sockets of pid's network namespace: {(address, port)}."""
    out = set()
    for name in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] != "0A":  # TCP_LISTEN
                continue
            hex_addr, hex_port = fields[1].split(":")
            raw = bytes.fromhex(hex_addr)  # little-endian 32-bit words
            addr = ipaddress.ip_address(b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4)))
            if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
                addr = addr.ipv4_mapped  # an IPv6 socket bound to an IPv4 address (grpc does so)
            out.add((str(addr), int(hex_port, 16)))
    return out


class Watcher(threading.Thread):
    """Every 0.2 s: each descendant of the ``root_pids`` with its network namespace, and the listening sockets of each
    of the test's namespaces."""

    def __init__(self, root_pids, inodes: dict[int, str]):
        super().__init__(daemon=True)
        self.root_pids, self.inodes = set(root_pids), inodes
        self.stop_event = threading.Event()
        self.seen: dict[int, tuple[str, str]] = {}  # pid -> (namespace name or "OTHER:<inode>", command)
        self.parents: dict[int, int] = {}  # pid -> parent pid, of every process seen
        self.outside: dict[int, str] = {}  # pid -> command, of every sighting outside the test's namespaces
        self.launching: dict[int, str] = {}  # pid -> `ip netns exec` seen before its setns, not yet seen inside
        self.listening: dict[str, set] = {}

    def _scan(self) -> None:
        parent = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parent[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    pass
        ours = set(self.root_pids)
        changed = True  # descendants: a few passes (a child's pid may be lower than its parent's)
        while changed:
            changed = False
            for pid, ppid in parent.items():
                if ppid in ours and pid not in ours:
                    ours.add(pid)
                    changed = True
        one_pid = {}  # namespace -> a live process in it (a namespace's sockets are read once per scan)
        for pid in ours:
            try:
                inode = os.stat(f"/proc/{pid}/ns/net").st_ino
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if not cmd:  # exiting (a zombie's command line is empty): its last sighting stands
                continue
            # the latest sighting (a process is first seen between fork and exec, or before `ip netns exec` moves
            # it); any sighting outside the test's namespaces is kept, except `ip netns exec <one of ours>` itself
            # before its setns (CI run 10 saw the coordinator's launcher there): that one must then be seen inside
            # (the same pid after its exec), else it counts as outside at the end (``outside_at_end``)
            self.seen[pid] = (self.inodes.get(inode, f"OTHER:{inode}"), cmd)
            self.parents[pid] = parent.get(pid, 0)
            if inode in self.inodes:
                self.launching.pop(pid, None)
                one_pid.setdefault(self.inodes[inode], pid)
            elif Path(cmd.split(" ", 1)[0]).name == "ip" and any(f" netns exec {ns} " in cmd
                                                                  for ns in self.inodes.values()):
                self.launching.setdefault(pid, cmd)
            else:
                self.outside[pid] = cmd
        for ns, pid in one_pid.items():
            self.listening.setdefault(ns, set()).update(_listening(pid))

    def run(self) -> None:
        while not self.stop_event.is_set():
            self._scan()
            self.stop_event.wait(0.2)

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=10)


def _commands(pids_by_ns: dict) -> dict:
    out = {}
    for ns, pids in pids_by_ns.items():
        for pid in pids:
            try:
                out[f"{ns} {pid}"] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:300]
            except OSError:
                out[f"{ns} {pid}"] = "(exited)"
    return out


# ---------------------------------------------------------------------------------------------- the runs
def _series(seed: int = 3, T: int = 60) -> np.ndarray:
    """Three owners' series of a stable VAR(1) on very different scales (as tests/test_flower_var.py)."""
    rng = np.random.default_rng(seed)
    A = np.array([[0.5, 0.1, 0.0], [0.0, 0.4, 0.2], [0.1, 0.0, 0.3]])
    Y = np.zeros((T, 3))
    for t in range(1, T):
        Y[t] = Y[t - 1] @ A.T + rng.normal(size=3)
    return Y * np.array([1.0, 10.0, 0.1])


#: the accelerated VAR-ADMM fit (the default scheme) of tests/test_flower_var.py, converged to 1e-10
VAR_PARAMS = dict(lags=2, solver="admm", tol=1e-10, max_iter=500, random_state=5, penalty="ridge", alpha=0.05,
                  owner_names=["north", "south", "east"], flower_timeout=90.0)
VAR_OWNERS = {"0": "1", "1": "2", "2": "3"}  # owner -> the party whose namespace (machine) runs it


class Runs:
    """Both drivers (P3LS and VAR-ADMM, one federation each) started at once in the coordinator's namespace,
    watched until both end; their results, logs and what the watcher saw."""

    def __init__(self, namespaces: Namespaces, base: Path):
        self.nss, self.base = namespaces, base
        self.configs: dict[str, dict[str, Any]] = {
            "p3ls": {"parties": {p: namespaces.party[p] for p in PARTIES}},
            "var": {"parties": {o: namespaces.party[p] for o, p in VAR_OWNERS.items()}}}
        for method, config in self.configs.items():
            config.update(method=method, workdir=str(base / method), out=str(base / f"{method}.json"), host=COORD_IP,
                          ip=IP)
        self.children: dict[str, subprocess.Popen] = {}

    def run(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
        t0 = time.perf_counter()
        for method, config in self.configs.items():
            with open(self.base / f"{method}-driver.log", "wb") as log:
                self.children[method] = subprocess.Popen(
                    [IP, "netns", "exec", self.nss.coord, sys.executable, __file__, json.dumps(config)], stdout=log,
                    stderr=subprocess.STDOUT, cwd=ROOT, env=env, start_new_session=True)
        self.watcher = Watcher([c.pid for c in self.children.values()], self.nss.inodes())
        self.watcher.start()
        try:
            deadline = time.monotonic() + CHILD_TIMEOUT
            for child in self.children.values():
                try:
                    child.wait(timeout=max(deadline - time.monotonic(), 0.1))
                except subprocess.TimeoutExpired:
                    pass
        finally:
            self.watcher.stop()
            for child in self.children.values():
                if child.poll() is None:
                    os.killpg(child.pid, signal.SIGKILL)
                    child.wait(timeout=10)
        self.wall = time.perf_counter() - t0
        # what the runtime's stop left running in the namespaces (remove() kills it anyway)
        self.left = {ns: pids for ns in self.nss.made if (pids := _ip("netns", "pids", ns, check=False).stdout.split())}

    def result(self, method: str) -> dict:
        child = self.children[method]
        log = (self.base / f"{method}-driver.log").read_text(errors="replace")
        assert child.returncode == 0, f"{method} driver failed (code {child.returncode}):\n{log[-4000:]}"
        return json.loads(Path(self.configs[method]["out"]).read_text())

    def superlink_log(self, method: str) -> str:
        return (Path(self.configs[method]["workdir"]) / "superlink.log").read_text(errors="replace")


@pytest.fixture(scope="module")
def runs(namespaces, tmp_path_factory):
    for ns in namespaces.made:  # nothing may route anywhere but the bridge: no default route, no other link
        assert not _ip("-n", ns, "route", "show", "default").stdout.strip(), f"{ns} has a default route"
        links = {line.split(":")[1].strip().split("@")[0] for line in _ip("-n", ns, "-o", "link").stdout.splitlines()}
        expected = {"lo", "br0", *(f"v{i}" for i in range(len(namespaces.address)))} if ns == namespaces.hub else {
            "lo", "eth0"}
        assert links == expected, (ns, links)
    out = Runs(namespaces, tmp_path_factory.mktemp("netns"))
    out.run()
    phases = " ".join(f"{m}_{k}_s={v}" for m in out.configs if (out.base / f"{m}.json").exists()
                      for k, v in json.loads((out.base / f"{m}.json").read_text())["phases"].items())
    print(f"\nnetns_wall_s={out.wall:.1f} {phases} load={os.getloadavg()[0]:.1f}")
    return out


# ---------------------------------------------------------------------------------------------- the tests
def test_p3ls_across_namespaces_equals_in_process(runs):
    from engine.methods.p3ls.protocol import P3LS
    from tests.flower_helpers import p3ls_data

    result = runs.result("p3ls")
    blocks, Y, _ = p3ls_data()
    local = P3LS(2, random_state=7, secure_aggregation=True).fit(blocks, Y)
    assert np.abs(local.coef_).max() > 0.1  # a fit, not zeros
    np.testing.assert_allclose(np.asarray(result["coef"]), local.coef_, atol=1e-10, rtol=0)


def test_var_admm_across_namespaces_equals_in_process(runs):
    """The accelerated scheme converged at tol 1e-10 on both sides: 1e-8 as tests/test_flower_var.py argues (the
    rounding of the pooled normal equations of the Anderson weights, amplified by at most the stopping tolerance)."""
    from engine.methods.var_admm.estimator import CollaborativeVAR

    result = runs.result("var")
    local = CollaborativeVAR(transport="local", **VAR_PARAMS).fit(_series())
    assert result["converged"] and local.converged_
    np.testing.assert_allclose(np.asarray(result["coef"]), local.coef_owner_major_, atol=1e-8, rtol=0)
    np.testing.assert_allclose(np.asarray(result["intercept"]), local.intercept_, atol=1e-8, rtol=0)


@pytest.mark.parametrize("method", ["p3ls", "var"])
def test_tls_and_supernode_authentication_as_deployed(runs, method):
    result, link_log = runs.result(method), runs.superlink_log(method)
    parties = runs.configs[method]["parties"]
    link_args, node_args = result["args"]["superlink"], [result["args"][f"party {p}"] for p in parties]
    assert "--insecure" not in link_args and "--enable-supernode-auth" in link_args and "--ssl-certfile" in link_args
    for args in node_args:
        assert "--insecure" not in args and "--root-certificates" in args and "--auth-supernode-private-key" in args
    assert result["tls_checked"] == f"verified for {COORD_IP}"
    assert result["plain_http_refused"], "the SuperLink answered plain HTTP"
    # the SuperLink activated exactly the registered keys' nodes, each dialling from its own party's address
    registered = set(re.findall(r"RegisterNode\] Created node_id=(\d+)", link_log))
    activated = set(re.findall(r"Activated node_id=(\d+)", link_log))
    assert len(registered) == len(parties) and activated == registered, (registered, activated)
    dialled = set(re.findall(r"(10\.77\.0\.\d+):\d+ - \"POST /v1/fleet/activate-node HTTP/1.1\" 200", link_log))
    assert dialled == {runs.nss.address[ns] for ns in parties.values()}
    if method == "p3ls":  # and refused a SuperNode whose key was never registered
        assert result["rogue"]["exit"] is not None and result["rogue"]["exit"] != 0, result["rogue"]
        assert re.search(r"activate-node HTTP/1.1\" 4\d\d", link_log), "no refused activation in the SuperLink's log"


def test_every_process_ran_and_listened_only_inside_the_namespaces(runs):
    nss, watcher = runs.nss, runs.watcher
    results = {m: runs.result(m) for m in runs.configs}
    assert not runs.left, f"processes left in the namespaces after the federations stopped: {_commands(runs.left)}"
    outside = {**watcher.outside, **watcher.launching}  # a launcher never seen inside its namespace counts
    assert not outside, f"processes outside the test's namespaces: {outside}"
    where: dict[str, list[str]] = {}
    for ns, cmd in watcher.seen.values():
        where.setdefault(ns, []).append(cmd)
    # one SuperLink per run. A child the SuperLink forks has its command line until it execs: seen in that window and
    # gone before the next scan, it is the same SuperLink, not another (CI run 17 counted such a child as a third)
    links = [pid for pid, (ns, cmd) in watcher.seen.items() if ns == nss.coord and "flower-superlink" in cmd
             and watcher.seen.get(watcher.parents.get(pid, 0), ("", ""))[1] != cmd]
    assert len(links) == 2, {pid: (watcher.parents.get(pid), watcher.seen[pid][1][:200]) for pid in links}
    for config in runs.configs.values():  # each party's SuperNode in that party's namespace
        for party, ns in config["parties"].items():
            assert any("flower-supernode" in c and f"party='{party}'" in c for c in where.get(ns, [])), (party, ns)
    # nothing listened beyond 127.0.0.1, except the SuperLinks and the runs' channels on the coordinator's address
    for ns, sockets in watcher.listening.items():
        allowed = {"127.0.0.1", "::1"} | ({COORD_IP} if ns == nss.coord else set())
        assert {a for a, _ in sockets} <= allowed, (ns, sockets)
    on_coord = {port for a, port in watcher.listening.get(nss.coord, set()) if a == COORD_IP}
    links = {r["superlink_port"] for r in results.values()}
    assert links <= on_coord
    assert on_coord - links, "no run's channel listened on the coordinator's address"


# ---------------------------------------------------------------------------------------------- the driver
def _check_tls(host: str, port: int, ca: Path) -> str:
    """A TLS handshake with the SuperLink, its certificate checked for ``host`` against the run's CA."""
    import socket
    import ssl

    ctx = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection((host, port), timeout=10) as raw, ctx.wrap_socket(raw, server_hostname=host):
        return f"verified for {host}"


def _plain_http_refused(host: str, port: int) -> bool:
    """A plain-text HTTP request gets no HTTP answer from a TLS port."""
    import socket

    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        s.settimeout(5)
        try:
            answer = s.recv(64)
        except OSError:
            return True
    return not answer.startswith(b"HTTP/")


def _start_unregistered_node(fed, launcher, workdir: Path) -> tuple[subprocess.Popen, int, int]:
    """A SuperNode with a key the coordinator never registered, in party 1's namespace: (process, its own port, the
    inode of that namespace)."""
    from engine.federation.flower.credentials import make_supernode_key
    from engine.federation.flower.runtime import LOOPBACK, free_port

    key = workdir / "rogue" / "key"
    make_supernode_key(key)
    port = free_port()
    log = open(workdir / "rogue.log", "wb")  # noqa: SIM115 (closed below)
    args = [*launcher("party 1"), str(Path(sys.executable).parent / "flower-supernode"), "--root-certificates",
            str(fed.tls_files["ca"]), "--auth-supernode-private-key", str(key), "--superlink", fed.address,
            "--host", LOOPBACK, "--port", str(port), "--max-retries", "0", "--node-config", "party='rogue'"]
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=fed.env, start_new_session=True)
    log.close()
    namespace = launcher("party 1")[-1]  # ip netns exec <name>
    return proc, port, os.stat(f"/run/netns/{namespace}").st_ino


def _end_unregistered_node(proc: subprocess.Popen, port: int, namespace: int, workdir: Path) -> dict:
    """How the unregistered SuperNode ended (``exit`` None: it was still running after 60 s); its SuperExec (a
    session of its own, which outlives a refused SuperNode for a while) is killed: the process of that port in
    party 1's namespace only (the port was picked outside it, so a process elsewhere may hold the same number)."""
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        code = None
    mark = f"--runtime-api-address 127.0.0.1:{port} "
    for entry in Path("/proc").iterdir():
        try:
            if (entry.name.isdigit() and os.stat(entry / "ns" / "net").st_ino == namespace
                    and mark in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()):
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, UnicodeDecodeError):
            pass
    return {"exit": code, "log": (workdir / "rogue.log").read_text(errors="replace")[-2000:]}


def _fit(method: str, fed, launcher, workdir: Path) -> dict:
    """The method's fit over ``fed`` (P3LS: with an unregistered SuperNode knocking beside it); what it returns."""
    if method == "var":
        from engine.methods.var_admm.estimator import CollaborativeVAR

        est = CollaborativeVAR(transport="flower", superlink=fed.address, **VAR_PARAMS).fit(_series())
        return {"coef": est.coef_owner_major_.tolist(), "intercept": est.intercept_.tolist(),
                "converged": bool(est.converged_), "n_iter": int(est.n_iter_)}
    from engine.methods.p3ls.protocol import P3LS
    from tests.flower_helpers import p3ls_data

    blocks, Y, _ = p3ls_data()
    # refused at once, so it runs beside the fit (were it let in, the fit would fail on its node)
    rogue = _start_unregistered_node(fed, launcher, workdir)
    try:
        est = P3LS(2, random_state=7, secure_aggregation=True, transport="flower", superlink=fed.address)
        est.fit(blocks, Y)
    finally:
        ended = _end_unregistered_node(*rogue, workdir)
    return {"coef": est.coef_.tolist(), "rogue": ended}


def _driver(config: dict) -> None:
    """Runs in the coordinator's namespace: the federation (SuperNodes through ``ip netns exec``), the fit, checks.
    Writes the result and the seconds since this process started at each phase's end."""
    from engine.federation.flower.driver import register, unregister
    from engine.federation.flower.runtime import LocalFederation, process_started

    born = process_started()
    phases = {}

    def stamp(name: str) -> None:
        phases[name] = round(time.time() - born, 1)

    parties = config["parties"]

    def launcher(name: str) -> list[str]:
        return [] if name == "superlink" else [config["ip"], "netns", "exec", parties[name.split(" ", 1)[1]]]

    stamp("imports")
    fed = LocalFederation(list(parties), workdir=config["workdir"], host=config["host"], tls=True,
                          supernode_auth=True, launcher=launcher)
    with fed:
        register(fed)
        stamp("federation_up")
        try:
            result = _fit(config["method"], fed, launcher, Path(config["workdir"]))
            stamp("fit")
            port = int(fed.address.rsplit(":", 1)[1])
            result.update(superlink_port=port,
                          args={name: [str(a) for a in cast(list, proc.args)] for name, proc in fed.processes.items()},
                          tls_checked=_check_tls(config["host"], port, fed.tls_files["ca"]),
                          plain_http_refused=_plain_http_refused(config["host"], port))
        finally:
            unregister(fed)
    stamp("stopped")
    Path(config["out"]).write_text(json.dumps({**result, "phases": phases}))


if __name__ == "__main__":
    _driver(json.loads(sys.argv[1]))
