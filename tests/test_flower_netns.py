"""P3LS over Flower as deployed: the coordinator and each party in a Linux network namespace of its own, with TLS
and SuperNode authentication; the model equals the in-process fit.

Layout (made here, removed at the end, also on failure): one bridge in a hub namespace the test made, and a veth
pair from it to each of the coordinator's and the parties' namespaces (``10.77.0.0/24``, an address range used
only inside these namespaces; none of them has a default route, and no veth end is in the machine's own
namespace, so nothing the federation sends can leave them). The driver (``flwr run`` and the estimator) runs in
the coordinator's namespace, a child process of this test (``python tests/test_flower_netns.py <config>``); the
SuperLink listens on the coordinator's address with a certificate for it, and every SuperNode runs in its own
party's namespace through ``LocalFederation(launcher=...)`` (``ip netns exec``), dials the SuperLink across the
bridge, checks its certificate against the run's CA and authenticates with a key registered before it started;
the run's channel listens on the coordinator's address (``PRIVALAB_HUB_ADDRESS``).

While it runs, this test watches /proc: every process the driver started is in one of the test's namespaces, and
every listening socket in them is on 127.0.0.1 or (in the coordinator's namespace only) the coordinator's address.

Oracle: the in-process fit (same random_state). The transport only carries the values: every party runs the same
float operations on the same inputs in either case, so the models agree to the last bits; 1e-10 of coefficients of
order 1 leaves room for a different BLAS thread split, far below any protocol error (a wrong mask or a missed
message changes them at order 1).

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

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIRE_ENV = "PRIVALAB_REQUIRE_NETNS"
SUBNET = "10.77.0"  # /24, used only inside the test's namespaces
COORD_IP = f"{SUBNET}.1"
PARTIES = ["ta", "1", "2", "3"]  # P3LS: the trusted authority and 3 data holders, one SuperNode each
CHILD_TIMEOUT = 240.0  # seconds the driver in the coordinator's namespace may take (start, fit, stop)
IP_TIMEOUT = 10.0


def _required() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip() not in ("", "0", "false", "no")


def _unavailable(reason: str):
    """Skip, or fail where CI requires the test (PRIVALAB_REQUIRE_NETNS=1)."""
    if _required():
        pytest.fail(f"{REQUIRE_ENV}=1 but network namespaces cannot be made here: {reason}")
    pytest.skip(f"network namespaces cannot be made here: {reason}")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([IP, *args], capture_output=True, text=True, timeout=IP_TIMEOUT, check=check)


IP = shutil.which("ip") or "/usr/sbin/ip"


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


@pytest.fixture(scope="module")
def namespaces():
    if not sys.platform.startswith("linux"):
        _unavailable("not Linux")
    if os.geteuid() != 0:
        _unavailable("not root (ip netns add needs CAP_SYS_ADMIN)")
    if not Path(IP).exists():
        _unavailable("iproute2's `ip` is not installed")
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
    """Every 0.2 s: each descendant of ``root_pid`` with its network namespace, and the listening sockets of each
    of the test's namespaces."""

    def __init__(self, root_pid: int, inodes: dict[int, str]):
        super().__init__(daemon=True)
        self.root_pid, self.inodes = root_pid, inodes
        self.stop_event = threading.Event()
        self.seen: dict[int, tuple[str, str]] = {}  # pid -> (namespace name or "OTHER:<inode>", command)
        self.listening: dict[str, set] = {}

    def _scan(self) -> None:
        parent = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parent[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    pass
        ours = {self.root_pid}
        changed = True  # descendants: a few passes (a child's pid may be lower than its parent's)
        while changed:
            changed = False
            for pid, ppid in parent.items():
                if ppid in ours and pid not in ours:
                    ours.add(pid)
                    changed = True
        for pid in ours:
            try:
                inode = os.stat(f"/proc/{pid}/ns/net").st_ino
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            ns = self.inodes.get(inode, f"OTHER:{inode}")
            self.seen.setdefault(pid, (ns, cmd))
            if ns in self.inodes.values():
                self.listening.setdefault(ns, set()).update(_listening(pid))

    def run(self) -> None:
        while not self.stop_event.is_set():
            self._scan()
            self.stop_event.wait(0.2)

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=10)


# ---------------------------------------------------------------------------------------------- the test
def test_p3ls_across_namespaces_with_tls_and_supernode_auth_equals_in_process(namespaces, tmp_path):
    from engine.methods.p3ls.protocol import P3LS
    from tests.flower_helpers import p3ls_data

    for ns in namespaces.made:  # nothing may route anywhere but the bridge
        assert not _ip("-n", ns, "route", "show", "default").stdout.strip(), f"{ns} has a default route"
    config = {"workdir": str(tmp_path / "federation"), "out": str(tmp_path / "result.json"), "host": COORD_IP,
              "parties": {p: namespaces.party[p] for p in PARTIES}, "ip": IP}
    log = open(tmp_path / "driver.log", "wb")  # noqa: SIM115 (closed below)
    t0 = time.perf_counter()
    child = subprocess.Popen([IP, "netns", "exec", namespaces.coord, sys.executable, __file__, json.dumps(config)],
                             stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                 [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])})
    log.close()
    watcher = Watcher(child.pid, namespaces.inodes())
    watcher.start()
    try:
        child.wait(timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        pass
    finally:
        watcher.stop()
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=10)
    wall = time.perf_counter() - t0
    driver_log = (tmp_path / "driver.log").read_text(errors="replace")
    assert child.returncode == 0, f"driver failed (code {child.returncode}) after {wall:.0f} s:\n{driver_log[-4000:]}"
    result = json.loads(Path(config["out"]).read_text())
    link_log = (Path(config["workdir"]) / "superlink.log").read_text(errors="replace")

    # as deployed: TLS on the SuperLink, SuperNode authentication on, every SuperNode with its own key
    link_args, node_args = result["args"]["superlink"], [result["args"][f"party {p}"] for p in PARTIES]
    assert "--insecure" not in link_args and "--enable-supernode-auth" in link_args and "--ssl-certfile" in link_args
    for args in node_args:
        assert "--insecure" not in args and "--root-certificates" in args and "--auth-supernode-private-key" in args
    assert result["tls_checked"] == f"verified for {COORD_IP}"
    assert result["plain_http_refused"], "the SuperLink answered plain HTTP"
    # the SuperLink activated exactly the registered keys' nodes, each dialling from its own party's address ...
    registered = set(re.findall(r"RegisterNode\] Created node_id=(\d+)", link_log))
    activated = set(re.findall(r"Activated node_id=(\d+)", link_log))
    assert len(registered) == len(PARTIES) and activated == registered, (registered, activated)
    dialled = set(re.findall(r"(10\.77\.0\.\d+):\d+ - \"POST /v1/fleet/activate-node HTTP/1.1\" 200", link_log))
    assert dialled == {namespaces.address[namespaces.party[p]] for p in PARTIES}
    # ... and refused a SuperNode whose key was never registered
    assert result["rogue"]["exit"] is not None and result["rogue"]["exit"] != 0, result["rogue"]
    assert re.search(r"activate-node HTTP/1.1\" 4\d\d", link_log), "no refused activation in the SuperLink's log"

    # every process the driver started ran in one of the test's namespaces: the SuperLink in the coordinator's,
    # each party's SuperNode (and its app processes) in that party's
    outside = {pid: v for pid, v in watcher.seen.items() if v[0].startswith("OTHER")}
    assert not outside, f"processes outside the test's namespaces: {outside}"
    where = {}
    for ns, cmd in watcher.seen.values():
        where.setdefault(ns, []).append(cmd)
    assert any("flower-superlink" in c for c in where.get(namespaces.coord, []))
    for p in PARTIES:
        cmds = where.get(namespaces.party[p], [])
        assert any("flower-supernode" in c and f"party='{p}'" in c for c in cmds), (p, where)
    # nothing listened beyond 127.0.0.1, except the SuperLink and the run's channel on the coordinator's address
    for ns, sockets in watcher.listening.items():
        allowed = {"127.0.0.1", "::1"} | (
            {COORD_IP} if ns == namespaces.coord else set())
        assert {a for a, _ in sockets} <= allowed, (ns, sockets)
    on_coord = {port for a, port in watcher.listening.get(namespaces.coord, set()) if a == COORD_IP}
    assert result["superlink_port"] in on_coord
    assert on_coord - {result["superlink_port"]}, "the run's channel never listened on the coordinator's address"

    # the model equals the in-process fit
    blocks, Y, _ = p3ls_data()
    local = P3LS(2, random_state=7, secure_aggregation=True).fit(blocks, Y)
    np.testing.assert_allclose(np.asarray(result["coef"]), local.coef_, atol=1e-10, rtol=0)
    assert np.abs(local.coef_).max() > 0.1  # a fit, not zeros
    print(f"netns_p3ls_wall_s={wall:.1f} driver_fit_s={result['fit_s']:.1f} load={os.getloadavg()[0]:.1f}")


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


def _unregistered_node(fed, launcher, workdir: Path) -> dict:
    """A SuperNode with a key the coordinator never registered, in party 1's namespace: how it ends."""
    from engine.federation.flower.credentials import make_supernode_key
    from engine.federation.flower.runtime import LOOPBACK, free_port

    key = workdir / "rogue" / "key"
    make_supernode_key(key)
    log = open(workdir / "rogue.log", "wb")  # noqa: SIM115 (closed below)
    args = [*launcher("party 1"), str(Path(sys.executable).parent / "flower-supernode"), "--root-certificates",
            str(fed.tls_files["ca"]), "--auth-supernode-private-key", str(key), "--superlink", fed.address,
            "--host", LOOPBACK, "--port", str(free_port()), "--max-retries", "0", "--node-config", "party='rogue'"]
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=fed.env, start_new_session=True)
    log.close()
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        code = None
    return {"exit": code, "log": (workdir / "rogue.log").read_text(errors="replace")[-2000:]}


def _driver(config: dict) -> None:
    """Runs in the coordinator's namespace: the federation (SuperNodes through ``ip netns exec``), the fit, checks."""
    from engine.federation.flower.driver import register, unregister
    from engine.federation.flower.runtime import LocalFederation
    from engine.methods.p3ls.protocol import P3LS
    from tests.flower_helpers import p3ls_data

    parties = config["parties"]

    def launcher(name: str) -> list[str]:
        return [] if name == "superlink" else [config["ip"], "netns", "exec", parties[name.split(" ", 1)[1]]]

    fed = LocalFederation(list(parties), workdir=config["workdir"], host=config["host"], tls=True,
                          supernode_auth=True, launcher=launcher)
    with fed:
        register(fed)
        try:
            blocks, Y, _ = p3ls_data()
            t0 = time.perf_counter()
            est = P3LS(2, random_state=7, secure_aggregation=True, transport="flower", superlink=fed.address)
            est.fit(blocks, Y)
            fit_s = time.perf_counter() - t0
            port = int(fed.address.rsplit(":", 1)[1])
            result = {"coef": est.coef_.tolist(), "fit_s": fit_s, "superlink_port": port,
                      "args": {name: [str(a) for a in proc.args] for name, proc in fed.processes.items()},
                      "tls_checked": _check_tls(config["host"], port, fed.tls_files["ca"]),
                      "plain_http_refused": _plain_http_refused(config["host"], port),
                      "rogue": _unregistered_node(fed, launcher, Path(config["workdir"]))}
        finally:
            unregister(fed)
    Path(config["out"]).write_text(json.dumps(result))


if __name__ == "__main__":
    _driver(json.loads(sys.argv[1]))
