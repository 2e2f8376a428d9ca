"""Several app processes behind nginx (ui.runtime.proxy): the configuration's text, nginx's own check of it, and
a real team (nginx + 2 ``streamlit run app.py`` on 127.0.0.1) whose sessions stay on their process.

Oracles: nginx itself (``nginx -t`` parses the generated file; the access log names the process that served each
request, ``$upstream_addr``), not the generator's own reading. The nginx tests skip when nginx is not installed
(``apt-get install nginx``; the CI script does not install it); the team is always stopped.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import shutil
import subprocess
import urllib.request

import pytest

from ui.runtime.proxy import COOKIE, Team, nginx_config

NGINX = shutil.which("nginx") or (shutil.which("/usr/sbin/nginx"))
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx)")


def test_the_config_listens_on_loopback_and_keeps_a_session_on_its_process(tmp_path):
    text = nginx_config(8501, [8601, 8602, 8603], tmp_path)
    assert "listen 127.0.0.1:8501;" in text and "daemon off;" in text
    assert f"pid {tmp_path / 'nginx.pid'};" in text and "user " not in text
    # new sessions: the three in turn (round robin, the default); a cookie: that process, the others as backups
    any_pool = text[text.index("upstream privalab_any {"):]
    any_pool = any_pool[:any_pool.index("}")]
    assert "least_conn" not in any_pool and "hash" not in any_pool
    assert all(f"server 127.0.0.1:{p};" in any_pool for p in (8601, 8602, 8603))
    one = text[text.index("upstream privalab_1 {"):]
    one = one[:one.index("}")]
    assert "server 127.0.0.1:8602;" in one and "server 127.0.0.1:8601 backup;" in one
    assert "server 127.0.0.1:8603 backup;" in one and "8602 backup" not in one
    assert f'map $cookie_{COOKIE} $privalab_pool' in text and '"2" privalab_2;' in text
    assert f'"127.0.0.1:8603" "{COOKIE}=2; Path=/; HttpOnly; SameSite=Strict";' in text
    for line in ("proxy_set_header Upgrade $http_upgrade;", "proxy_set_header Connection $connection_upgrade;",
                 "proxy_set_header Host $http_host;", "proxy_http_version 1.1;",
                 "add_header Set-Cookie $privalab_set_cookie;"):
        assert line in text
    from engine.data.readers import MAX_UPLOAD_MB

    assert f"client_max_body_size {MAX_UPLOAD_MB + 1}m;" in text  # the app's limit and the multipart envelope
    assert "listen 0.0.0.0:80;" in nginx_config(80, [8601], tmp_path, address="0.0.0.0", user="privalab")
    with pytest.raises(ValueError, match="at least one"):
        nginx_config(8501, [], tmp_path)


@needs_nginx
def test_nginx_accepts_the_generated_config(tmp_path):
    conf = tmp_path / "nginx.conf"
    conf.write_text(nginx_config(18501, [18601, 18602], tmp_path, user="root"))
    out = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "error.log")],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "syntax is ok" in out.stderr


def _served_by(team: Team, path: str) -> list[str]:
    """The app process addresses the access log gives for the requests to ``path``, in order."""
    return [line.rsplit(" ", 1)[1] for line in team.log_text("access.log", 100_000).splitlines()
            if f'"GET {path} ' in line]


@needs_nginx
@pytest.mark.slow
@pytest.mark.app  # starts the real app, twice
def test_a_team_of_two_spreads_new_sessions_and_keeps_each_on_its_process():
    import websockets

    with Team(2, start_timeout=180) as team:
        procs = [team.proxy, *team.apps]
        addresses = [f"127.0.0.1:{p}" for p in team.backends]
        cookies = []
        for _ in range(4):
            with urllib.request.urlopen(f"{team.url}/", timeout=30) as r:
                assert r.status == 200 and b"<html" in r.read().lower()
                cookies.append(r.headers["Set-Cookie"])
        assert sorted(c.split(";")[0] for c in cookies) == [f"{COOKIE}=0"] * 2 + [f"{COOKIE}=1"] * 2
        assert all("HttpOnly" in c and "SameSite=Strict" in c for c in cookies)
        for i in (1, 0, 1):  # every request with the cookie goes to its process
            req = urllib.request.Request(f"{team.url}/_stcore/health", headers={"Cookie": f"{COOKIE}={i}"})
            with urllib.request.urlopen(req, timeout=30) as r:
                assert r.status == 200

        async def stream(i: int) -> None:  # a browser's websocket: same origin, upgrade through the proxy
            async with websockets.connect(f"ws://127.0.0.1:{team.port}/_stcore/stream", subprotocols=["streamlit"],
                                          origin=team.url, additional_headers={"Cookie": f"{COOKIE}={i}"},
                                          open_timeout=30):
                pass

        # each in a thread of its own: an earlier test of this xdist worker may leave an event loop running in the
        # main thread, where asyncio.run refuses to start ("cannot be called from a running event loop")
        for i in (1, 0):
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(asyncio.run, stream(i)).result(timeout=60)
        health = [a for a in _served_by(team, "/_stcore/health") if a in addresses]  # the start-up's check first
        assert health[-3:] == [addresses[1], addresses[0], addresses[1]]
        assert _served_by(team, "/_stcore/stream") == [addresses[1], addresses[0]]
    assert all(p.poll() is not None for p in procs)  # stopped: nginx and both app processes
