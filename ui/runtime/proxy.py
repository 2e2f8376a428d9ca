"""Several app processes behind nginx with sticky sessions: the proxy's configuration and a launcher (issue #33).

Why: Streamlit runs every session's script in a thread of one process, so pure-Python work is serialised by one
GIL and N sessions wait about N times one session's server CPU. A team adds capacity by running several app
processes behind a reverse proxy; a session must stay on the process that holds it (its websocket
``/_stcore/stream``, its uploads ``/_stcore/upload_file/...``, its media and downloads ``/media/...`` live in that
process's memory), so the proxy is sticky.

What nginx (Debian's package, open-source edition) offers and what is used: the ``sticky`` directive is NGINX Plus
only; ``ip_hash``/``hash $remote_addr`` sends every client behind one address (a NAT, a VPN, the loopback of the
bench) to the same process. Here a new session is placed round robin (the upstream's default: the processes take
new sessions in turn, so 32 arriving at once split 16/16) and kept by a cookie naming its process. Not
``least_conn``: a session's websocket goes through the upstream of its own process, so the placing upstream would
count only the short page requests, not the open sessions, and place by noise.

- the first response to a browser (the page, ``/``) sets ``privalab_backend=<i>`` from ``$upstream_addr``, the
  process nginx actually used (a ``map``); ``HttpOnly``, ``SameSite=Strict``, no address in it;
- a request carrying the cookie goes to the upstream of that one process (``map $cookie_privalab_backend`` to an
  upstream group's name, ``proxy_pass http://$privalab_pool``), with the others as ``backup`` so a stopped
  process's sessions land elsewhere (they start afresh there: a Streamlit session cannot move) and are re-marked;
- websocket upgrade headers (``Upgrade``, ``Connection``), ``Host: $http_host`` (Streamlit accepts a websocket
  whose ``Origin`` equals its ``Host``), a day of idle time on the websocket, request bodies up to the app's upload
  limit (``engine.data.readers.MAX_UPLOAD_MB``; Streamlit refuses a larger file itself, with its message).

The launcher (:class:`Team`, ``python -m ui.runtime.proxy``) starts N ``streamlit run app.py`` processes on free
127.0.0.1 ports and nginx as a non-daemon child with a configuration, pid, logs and temporary files in a
temporary folder; it waits for each to answer ``/_stcore/health`` (with a time-out) and always stops all of them,
also when one fails to start. The app processes always bind to 127.0.0.1; the proxy too unless ``--address``
opens it on purpose. Written by hand: the configuration text and the process supervision (nginx does the proxying).

Examples
--------
>>> text = nginx_config(8501, [8601, 8602], "/tmp/privalab-team")
>>> "listen 127.0.0.1:8501;" in text and "upstream privalab_any {" in text
True
"""
from __future__ import annotations

import argparse
import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

__all__ = ["COOKIE", "Team", "TeamError", "free_port", "main", "nginx_config"]

COOKIE = "privalab_backend"  # the sticky cookie: the index of the session's app process
ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 120.0  # for an app process to answer its health check (imports on a loaded machine)
STOP_SECONDS = 10.0  # between terminate and kill
UPLOAD_SLACK_MB = 1  # above the app's upload limit: the multipart envelope around the file



def _worker_user(workdir: Path) -> str | None:
    """The user nginx's workers run as: started as root, an unprivileged one (``nobody``; the workers face the network
    when ``--address`` opens the proxy), with ``workdir`` made traversable for them (nginx's master, still root,
    creates its temporary folders inside and hands them to that user; the logs are opened by the master); otherwise
    None (the workers stay the caller's user)."""
    if os.geteuid() != 0:
        return None
    import grp
    import pwd

    try:
        group = grp.getgrgid(pwd.getpwnam("nobody").pw_gid).gr_name  # Debian: nogroup (nginx assumes "nobody")
    except KeyError:
        return getpass.getuser()  # no unprivileged user on this machine: as before
    workdir.chmod(0o711)  # traverse only: nothing in it is listed or readable to others
    return f"nobody {group}"

class TeamError(RuntimeError):
    """A process of the team did not start; the message names it and ends with its log."""


def free_port(address: str = "127.0.0.1") -> int:
    """A TCP port free on ``address`` now (the kernel's choice)."""
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def nginx_config(port: int, backends: list[int], workdir: str | os.PathLike, address: str = "127.0.0.1",
                 user: str | None = None) -> str:
    """The nginx configuration text: listen on ``address:port``, proxy to the app processes on 127.0.0.1
    ``backends`` with sticky sessions (module docstring); pid, logs and temporary files under ``workdir``; nginx
    in the foreground (``daemon off``). ``user``: the user nginx's workers run as when it is started as root (the
    owner of ``workdir``), else left out."""
    if not backends:
        raise ValueError("nginx_config needs at least one app process port")
    work = Path(workdir)
    servers = [f"127.0.0.1:{p}" for p in backends]
    lines = ["daemon off;", "worker_processes 1;", f"pid {work / 'nginx.pid'};",
             f"error_log {work / 'error.log'} warn;"]
    if user:
        lines.append(f"user {user};")
    lines += ["events { worker_connections 4096; }", "http {",
              # which process served each request (the tests read the stickiness off it)
              "    log_format privalab '$remote_addr [$time_local] \"$request\" $status $upstream_addr';",
              f"    access_log {work / 'access.log'} privalab;"]
    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        lines.append(f"    {kind}_temp_path {work / ('temp_' + kind)};")
    from engine.data.readers import MAX_UPLOAD_MB  # the app's upload limit (.streamlit/config.toml's maxUploadSize)

    lines += [f"    client_max_body_size {MAX_UPLOAD_MB + UPLOAD_SLACK_MB}m;",
              "    map $http_upgrade $connection_upgrade { default upgrade; '' close; }",
              # the cookie names a process by its index; no cookie (or an unknown one): the processes in turn
              f"    map $cookie_{COOKIE} $privalab_pool {{",
              "        default privalab_any;",
              *(f'        "{i}" privalab_{i};' for i in range(len(servers))),
              "    }",
              # the process nginx used for this request, as the cookie to set (none when it retried elsewhere)
              "    map $upstream_addr $privalab_set_cookie {",
              '        default "";',
              *(f'        "{s}" "{COOKIE}={i}; Path=/; HttpOnly; SameSite=Strict";' for i, s in enumerate(servers)),
              "    }",
              "    upstream privalab_any {",  # round robin: new sessions in turn
              *(f"        server {s};" for s in servers),
              "    }"]
    for i, s in enumerate(servers):
        others = [f"        server {o} backup;" for o in servers if o != s]
        lines += [f"    upstream privalab_{i} {{", f"        server {s};", *others, "    }"]
    lines += ["    server {",
              f"        listen {address}:{port};",
              "        location / {",
              "            proxy_pass http://$privalab_pool;",
              "            proxy_http_version 1.1;",
              "            proxy_set_header Upgrade $http_upgrade;",
              "            proxy_set_header Connection $connection_upgrade;",
              "            proxy_set_header Host $http_host;",
              "            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
              "            proxy_read_timeout 1d;",
              "            proxy_send_timeout 1d;",
              "            proxy_buffering off;",
              "            add_header Set-Cookie $privalab_set_cookie;",
              "        }",
              "    }",
              "}", ""]
    return "\n".join(lines)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _stop(proc: subprocess.Popen | None, sig: int = signal.SIGTERM) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_SECONDS)


class Team:
    """``processes`` app processes on 127.0.0.1 behind nginx on ``address:port``; a context manager that always
    stops them. ``port``: None for a free one. ``nginx``: the nginx program (default: the one on PATH or
    /usr/sbin/nginx). ``extra_env``: added to the app processes' environment (e.g. ``PRIVALAB_JOBS``)."""

    def __init__(self, processes: int = 2, port: int | None = None, address: str = "127.0.0.1",
                 root: Path = ROOT, nginx: str | None = None, start_timeout: float = START_SECONDS,
                 extra_env: dict | None = None, workdir: str | os.PathLike | None = None):
        self.processes, self.address, self.root = max(1, int(processes)), address, Path(root)
        self.port = port or free_port(address)
        self.nginx = nginx or shutil.which("nginx") or "/usr/sbin/nginx"
        self.start_timeout, self.extra_env = start_timeout, dict(extra_env or {})
        self._own_dir = workdir is None
        self.workdir = Path(workdir) if workdir else None
        self.backends: list[int] = []
        self.apps: list[subprocess.Popen] = []
        self.proxy: subprocess.Popen | None = None
        self._logs: list = []

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"

    def backend_url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.backends[i]}"

    def log_text(self, name: str, tail: int = 3000) -> str:
        if self.workdir is None:
            return ""
        try:
            return (self.workdir / name).read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def start(self) -> "Team":
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _open_log(self, name: str):
        assert self.workdir is not None  # made in _start before any log
        fh = open(self.workdir / name, "w")
        self._logs.append(fh)
        return fh

    def _start(self) -> None:
        if not Path(self.nginx).exists() and shutil.which(self.nginx) is None:
            raise TeamError(f"nginx not found ({self.nginx}): install Debian's package (apt-get install nginx)")
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="privalab-team-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, PYTHONUNBUFFERED="1", **self.extra_env)
        for i in range(self.processes):
            port = free_port()
            self.backends.append(port)
            cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                   "--server.address", "127.0.0.1", "--server.headless", "true",
                   "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
            self.apps.append(subprocess.Popen(cmd, cwd=self.root, stdout=self._open_log(f"app{i}.log"),
                                              stderr=subprocess.STDOUT, env=env))
        deadline = time.monotonic() + self.start_timeout
        for i, proc in enumerate(self.apps):
            self._wait(proc, self.backend_url(i), deadline, f"app process {i}", f"app{i}.log")
        user = _worker_user(self.workdir)
        conf = self.workdir / "nginx.conf"
        conf.write_text(nginx_config(self.port, self.backends, self.workdir, self.address, user))
        self.proxy = subprocess.Popen([self.nginx, "-p", str(self.workdir), "-c", str(conf), "-e",
                                       str(self.workdir / "error.log")], cwd=self.workdir,
                                      stdout=self._open_log("nginx.out"), stderr=subprocess.STDOUT)
        self._wait(self.proxy, self.url, time.monotonic() + 30, "nginx", "error.log")

    def _wait(self, proc, url: str, deadline: float, what: str, log: str) -> None:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise TeamError(f"{what} exited with code {proc.returncode}:\n{self.log_text(log)}"
                                f"{self.log_text('nginx.out') if what == 'nginx' else ''}")
            if _healthy(url):
                return
            time.sleep(0.25)
        raise TeamError(f"{what} did not answer on {url} in time:\n{self.log_text(log)}")

    def stop(self) -> None:
        """nginx first (fast shutdown: open websockets are closed), then the app processes; then the logs and,
        when this object made it, the temporary folder."""
        try:
            _stop(self.proxy)
            for proc in self.apps:
                if proc.poll() is None:
                    proc.terminate()
            for proc in self.apps:
                _stop(proc)
        finally:
            for fh in self._logs:
                fh.close()
            self._logs.clear()
            if self._own_dir and self.workdir is not None and not os.environ.get("PRIVALAB_KEEP_TEAM_LOGS"):
                shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "Team":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _interrupt(*_) -> None:
    raise KeyboardInterrupt


def main(argv=None) -> int:
    """``python -m ui.runtime.proxy --processes N --port P``: run the team until Ctrl-C (or SIGTERM)."""
    ap = argparse.ArgumentParser(description="Several PrivaLab app processes behind nginx with sticky sessions.")
    ap.add_argument("--processes", type=int, default=2, help="app processes (default 2; about one per core)")
    ap.add_argument("--port", type=int, default=8501, help="the proxy's port (default 8501)")
    ap.add_argument("--address", default="127.0.0.1", help="the proxy's address (default 127.0.0.1: this machine "
                                                          "only; another address opens it to a network)")
    ap.add_argument("--nginx", default=None, help="the nginx program (default: nginx on PATH, /usr/sbin/nginx)")
    a = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop ends the team as Ctrl-C does
    try:
        with Team(a.processes, a.port, a.address, nginx=a.nginx) as team:
            print(f"PrivaLab: {a.processes} app processes behind nginx at {team.url} (Ctrl-C stops them)",
                  flush=True)
            while all(p.poll() is None for p in (team.proxy, *team.apps) if p is not None):
                time.sleep(1)
            print("PrivaLab: a process of the team ended; stopping the others", file=sys.stderr)
            return 1
    except TeamError as err:
        print(f"PrivaLab: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
