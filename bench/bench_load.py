"""N concurrent sessions against one Streamlit server: time to each session's first fit result (issue #20).

The bench starts ``streamlit run app.py`` (the browser suite's ``StreamlitServer``: 127.0.0.1, a free port,
headless, a start-up timeout, always stopped) and drives it with a protocol-level client, so the measuring client
does not starve the server: every session is a websocket to ``ws://127.0.0.1:PORT/_stcore/stream`` (the
``websockets`` package, a Streamlit dependency), all sessions in one asyncio loop in this process. Like
Streamlit's own frontend, a session opens the websocket and sends one ``BackMsg.rerun_script`` whose client state
names the page (``page_name`` = the page's URL path, ``page_script_hash`` empty: the server resolves it, as for a
bookmark) with no widget states, so the page runs with its defaults: for edPLS its default sample data set and its
default (strict, recommended) fit. The session then reads ``ForwardMsg`` protobufs until the first plotly chart
element (the page's first chart is the fit's coefficients) and then until the run's ``script_finished``
(a ``FINISHED_EARLY_FOR_RERUN`` is followed by the rerun, which is waited for).

Figures printed (``key=value``; seconds are wall time measured in this process):
- ``cold_first_result_s``: one session on the fresh server (module imports, empty caches); not in the rounds.
- ``p50_first_result_s_N``, ``p95_first_result_s_N``: over the sessions of the round with N concurrent sessions,
  seconds from opening the websocket to the first chart (N = 1 is run ``--singles`` times one after another, so its
  p50 is a median); ``p50_finished_s_N``: to the end of the run.
- ``errors_N``: sessions of that round with an exception element, a disconnect, a page-not-found, a run that
  finished without a chart, or no chart within ``--timeout`` seconds (``error_kinds_N`` names them).
- ``server_rss_idle_gb`` (after the cold session) and ``server_peak_rss_gb``: the RSS of the server's process
  tree (the server and its children, e.g. ``ui.runtime.jobs``' forkserver workers) sampled every 0.1 s by a thread;
  children's RSS is added, so pages they share with the server count twice (an upper bound).
- ``server_cpu_s_per_session_N``: the CPU seconds the server's process tree used during that round, per session
  (what one session costs the server; unlike wall times, the machine's other load hardly changes it).
- ``client_cpu_s``: this process's CPU time during the rounds (the client's share of the 2 cores).
- ``load_avg_1min``: the machine's load when the bench ended (the machine is shared; every time stretches with it).
- ``p95_8_vs_p50_1``: ``p95_first_result_s_8 / p50_first_result_s_1``.

Checked claims (exit 1 when one fails):
- ``no_errors_at_<N>`` for the largest N run (16; with ``--quick`` too when it fits).
- ``p95_8_within_2_5x_p50_1``: ``p95_8_vs_p50_1 <= 2.5``. The one-session *median* is the yardstick (stricter than
  its p95).
- ``server_memory_bounded``: ``server_peak_rss_gb < 4``. Why 4 GB: the server idles at ~0.3 GB; what a session adds
  on the page is its session state, its own cached fit (``st.cache_data`` keeps at most 32 entries per function, so
  the cache cannot grow with the number of sessions) and its messages; fits on uploads run in workers with their own
  budget (``ui.runtime.jobs``: 2 GB each, a bounded number at once), none on a sample set. 16 sessions must not come
  near it; a leak per session or an unbounded cache would.
``--seed`` draws the order of the rounds' sizes after N = 1 (the claims hold for any order).

Several processes (``--processes N``, N > 1; issue #33): beside the one-process server, ``ui.runtime.proxy.Team``
starts N app processes on 127.0.0.1 and nginx (Debian's package) in front of them on a free 127.0.0.1 port, with
sticky sessions (new sessions in turn, a cookie naming the process); each is warmed by one session opened on its
own port (all at once, after the one-process server's cold session). Then, ``--repeats`` times (default 3, 2 with
``--quick``) in an order drawn from ``--seed``: 16 sessions at once on the one process, and 16 x N at once through
the proxy, each first GETting ``/`` (for the sticky cookie behind the proxy) and then opening its websocket (with
the cookie), as a browser does, on both sides and within the session's time. Interleaved, so both see the
same machine load; the idle side costs next to nothing. Default sizes on the one process: 1,16. Everything is
always stopped. Figures: ``team_p50_first_result_s_<16N>``,
``team_p95_first_result_s_<16N>``, ``team_sessions_per_process_<16N>`` (from the cookies), ``team_errors_<16N>``,
``team_server_cpu_s_per_session_<16N>``, ``team_peak_rss_gb_per_process``, the cores each side got during its
rounds (``cores_used_one_process_16``, ``cores_used_<N>_processes_<16N>``: server CPU seconds over wall seconds)
and, for N = 2,
``p95_32_two_processes_vs_p95_16_one`` = ``team_p95_first_result_s_32 / p95_first_result_s_16``. Checked:
``no_errors_at_<16N>_through_the_proxy``, ``p95_<16N>_on_<N>_processes_within_p95_16_on_one`` (the ratio <= 1)
and ``team_memory_bounded`` (< 4 GB per process). The team gains only as much as a second core is free for it: on a
shared machine the load average (printed) bounds what the second process adds.

Why ``p95_8_within_2_5x_p50_1`` fails on this machine, and what was cut. Streamlit runs every session's script in
a thread of one process, so pure-Python work (pandas, plotly, the page's widgets) is serialised by the GIL: 8
sessions opened at once each wait for the others' work before their first chart, and ``p95_8`` cannot fall below
about ``8 x server_cpu_s_per_session / p50_1`` of one session's time, i.e. about 8x when a session's time is its
server CPU, whatever that CPU is (a second core helps only with the little that runs outside the GIL). The ratio
printed is therefore ~6-8 (``p95_8_vs_serial_cpu_8`` puts ``p95_8`` against that serial floor, ``8 x
server_cpu_s_per_session_8``). What could be cut was the server's own waste, measured as ``server_cpu_s_per_session``
(wall times on the shared machine varied 5x between runs; CPU per session hardly): 0.28-0.36 s before, 0.09-0.11 s
after (``--quick`` on the machine at load 13-29, Nov 2026): Streamlit's post-run ``gc.collect(2)`` walked the ~220k
objects of the imported libraries after every run, 0.15-0.24 s under the GIL (``ui/gc_freeze.py`` freezes them);
column-type lists read per column (``engine.data.columns.numeric_columns``, now off ``df.dtypes``); the two
noise-free reference fits, now kept across sessions (``pages/edpls.py``: ``references_recommended``; the private
fit stays per session); the report's coefficient figure, now built on download. The claim stays checked as the
issue states it; it could hold only with several server processes behind a balancer (sticky sessions), which is
outside this bench's single-server setup: ``--processes`` measures that setup.
"""
from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import ROOT, Claims, TreeRss, emit, load_module, parse_args
from ui.runtime.proxy import Team

PAGE = "edpls"  # the URL path of the method page (st.navigation derives it from pages/edpls.py)
FINISHED_SUCCESSFULLY, FINISHED_EARLY_FOR_RERUN = 0, 2


@dataclass
class Outcome:
    """One session: seconds from connect to the first chart and to the run's end; ``error`` empty when none."""

    first_chart_s: float = math.nan
    finished_s: float = math.nan
    error: str = ""
    process: str = ""  # behind the proxy: the index of the app process the sticky cookie names


def _messages():
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    return BackMsg, ForwardMsg


def rerun_message(page: str) -> bytes:
    """The first ``BackMsg`` a browser sends on opening ``/<page>``: rerun the script with that page's client state."""
    BackMsg, _ = _messages()
    msg = BackMsg()
    state = msg.rerun_script
    state.query_string = ""
    state.page_script_hash = ""  # the server resolves the page from its name, as for a bookmarked URL
    state.page_name = page
    state.context_info.timezone = "UTC"
    state.context_info.locale = "en-US"
    return msg.SerializeToString()


def _on_page(navigation, page: str) -> bool:
    """Whether a ``Navigation`` ForwardMsg says the run is on the page whose URL path is ``page``."""
    paths = {p.page_script_hash: p.url_pathname for p in navigation.app_pages}
    return paths.get(navigation.page_script_hash) == page


def _sticky_cookie(port: int) -> tuple[str, str]:
    """Behind the proxy, what a browser does first: GET ``/`` (the page) and keep the sticky cookie it sets;
    (the ``Cookie`` header value, the process index)."""
    import urllib.request

    from ui.runtime.proxy import COOKIE

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) as r:
        r.read()
        for header in r.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            if name.strip() == COOKIE:
                value = rest.split(";", 1)[0]
                return f"{COOKIE}={value}", value
    return "", ""


async def session(port: int, page: str, timeout: float, proxy: bool = False) -> Outcome:
    """Open one session on ``page`` and read its messages until its run ends; never raises. ``proxy``: first GET
    the page ``/``, as a browser does, then open the websocket with the sticky cookie it set when the port is the
    proxy's (both inside the session's time; used on both sides of the comparison, so each does the same work)."""
    import websockets

    _, ForwardMsg = _messages()
    out = Outcome()
    t0 = time.perf_counter()
    headers = {}
    try:
        async with asyncio.timeout(timeout):
            if proxy:
                cookie, out.process = await asyncio.to_thread(_sticky_cookie, port)
                headers = {"Origin": f"http://127.0.0.1:{port}", **({"Cookie": cookie} if cookie else {})}
            async with websockets.connect(f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=["streamlit"],
                                          max_size=None, open_timeout=timeout, ping_interval=None,
                                          additional_headers=headers) as ws:
                await ws.send(rerun_message(page))
                async for raw in ws:
                    msg = ForwardMsg()
                    msg.ParseFromString(raw)
                    kind = msg.WhichOneof("type")
                    if kind == "page_not_found":
                        out.error = "page_not_found"
                        break
                    if kind == "navigation" and not _on_page(msg.navigation, page):
                        out.error = "wrong_page"  # e.g. the home page: its charts would not be the fit's
                        break
                    if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                        element = msg.delta.new_element.WhichOneof("type")
                        if element == "exception":
                            out.error = "exception"
                            break
                        if element == "plotly_chart" and math.isnan(out.first_chart_s):
                            out.first_chart_s = time.perf_counter() - t0
                    if kind == "script_finished" and msg.script_finished != FINISHED_EARLY_FOR_RERUN:
                        out.finished_s = time.perf_counter() - t0
                        if msg.script_finished != FINISHED_SUCCESSFULLY:
                            out.error = "script_failed"
                        elif math.isnan(out.first_chart_s):
                            out.error = "no_chart"
                        break
                else:
                    out.error = "disconnect"
    except TimeoutError:
        out.error = out.error or "timeout"
    except (OSError, websockets.exceptions.WebSocketException):
        out.error = out.error or "disconnect"
    return out


async def round_of(port: int, n: int, timeout: float, proxy: bool = False) -> list[Outcome]:
    """``n`` sessions opened at once, in this loop."""
    return list(await asyncio.gather(*(session(port, PAGE, timeout, proxy) for _ in range(n))))


def quantile(values: list[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default) of the finite values; nan when none."""
    import numpy as np

    v = [x for x in values if math.isfinite(x)]
    return float(np.quantile(v, q)) if v else math.nan


def _extra(ap) -> None:
    ap.add_argument("--sizes", default=None, help="comma-separated session counts (default 1,4,8,16)")
    ap.add_argument("--singles", type=int, default=None, help="single sessions one after another for N = 1 "
                                                              "(default 5; 3 with --quick)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a session may take to finish its run")
    ap.add_argument("--page", default=PAGE, help="URL path of the page to open (default edpls)")
    ap.add_argument("--repeats", type=int, default=None, help="with --processes: rounds of 16 on one process and of "
                                                              "16 x N through the proxy, interleaved (default 3; "
                                                              "2 with --quick)")
    ap.add_argument("--processes", type=int, default=1, help="N > 1: after the one-process rounds (default sizes "
                                                             "1,16), 16 x N sessions through nginx in front of N "
                                                             "app processes (ui.runtime.proxy.Team)")


def run(port: int, server_pid: int, sizes: list[int], singles: int, timeout: float, team=None, repeats: int = 1,
        seed: int = 0) -> dict:
    """The rounds against a running server; returns {N: [Outcome]} and the memory figures. With a ``team``
    (``ui.runtime.proxy.Team``), its processes are warmed after the server's cold session, and the N = 16 round
    is run ``repeats`` times interleaved with the team's round (:func:`side_by_side`); the team's figures in
    ``"team"``."""
    results: dict[int, list[Outcome]] = {}
    server_cpu: dict[int, float] = {}
    with TreeRss(server_pid) as rss, contextlib.ExitStack() as stack:
        team_rss = [stack.enter_context(TreeRss(p.pid)) for p in team.apps] if team is not None else []
        cold = asyncio.run(round_of(port, 1, timeout))[0]
        idle = rss.now()
        team_cold = asyncio.run(_warm(team.backends, timeout)) if team is not None else []
        cpu0 = time.process_time()
        for n in sizes:
            if team is not None and n == 16:
                continue  # below, beside the team's rounds
            s0 = rss.cpu_seconds()
            if n == 1:
                results[1] = [asyncio.run(round_of(port, 1, timeout))[0] for _ in range(singles)]
            else:
                results[n] = asyncio.run(round_of(port, n, timeout))
            server_cpu[n] = (rss.cpu_seconds() - s0) / len(results[n])
        got_team = None
        if team is not None:
            results[16], server_cpu[16], got_team = side_by_side(port, rss, team, team_rss, repeats, timeout, seed)
            got_team.update(cold=team_cold, peak=max(r.peak for r in team_rss))
        cpu = time.process_time() - cpu0
    return {"cold": cold, "idle": idle, "peak": rss.peak, "results": results, "client_cpu": cpu,
            "server_cpu": server_cpu, "team": got_team}


async def _warm(ports: list[int], timeout: float) -> list[Outcome]:
    """One session on each app process's own port, all at once (each process's imports and caches)."""
    return list(await asyncio.gather(*(session(port, PAGE, timeout) for port in ports)))


def side_by_side(port: int, rss, team, team_rss, repeats: int, timeout: float, seed: int):
    """``repeats`` times, in an order drawn from ``seed``: 16 sessions at once on the one-process server and
    16 x N at once through the proxy in front of the team's N processes (all started and warm, the idle ones
    costing next to nothing), so both see the same machine load; (the one-process outcomes, its server CPU per
    session, the team's figures)."""
    n_team = 16 * team.processes
    one, many, cpu_one, cpu_many, wall_one, wall_many = [], [], 0.0, 0.0, 0.0, 0.0
    rng = random.Random(seed)
    for _ in range(repeats):
        for which in rng.sample(["one", "team"], 2):
            t0 = time.perf_counter()
            if which == "one":
                s0 = rss.cpu_seconds()
                one += asyncio.run(round_of(port, 16, timeout, proxy=True))  # GET / as well: the same work
                cpu_one += rss.cpu_seconds() - s0
                wall_one += time.perf_counter() - t0
            else:
                s0 = sum(r.cpu_seconds() for r in team_rss)
                many += asyncio.run(round_of(team.port, n_team, timeout, proxy=True))
                cpu_many += sum(r.cpu_seconds() for r in team_rss) - s0
                wall_many += time.perf_counter() - t0
    logs = "".join(team.log_text(f"app{i}.log", 1500) for i in range(team.processes)) + team.log_text("error.log")
    return one, cpu_one / len(one), {"results": many, "server_cpu": cpu_many / len(many), "logs": logs,
                                     "rounds": repeats, "cores_one": cpu_one / wall_one,
                                     "cores_team": cpu_many / wall_many}


def _report_team(claims: Claims, processes: int, got: dict, p95_16_one: float) -> None:
    """The figures and claims of the run behind the proxy."""
    outs, n = got["results"], 16 * processes
    first = [o.first_chart_s for o in outs]
    for i, cold in enumerate(got["cold"]):
        emit(f"team_cold_first_result_s_process_{i}", cold.first_chart_s)
    emit(f"team_p50_first_result_s_{n}", quantile(first, 0.5))
    p95 = quantile(first, 0.95)
    emit(f"team_p95_first_result_s_{n}", p95)
    emit(f"team_p50_finished_s_{n}", quantile([o.finished_s for o in outs], 0.5))
    emit(f"team_server_cpu_s_per_session_{n}", got["server_cpu"])
    emit(f"team_sessions_per_process_{n}", ",".join(str(sum(o.process == str(i) for o in outs))
                                                    for i in range(processes)))
    errors = [o.error for o in outs if o.error] + [c.error for c in got["cold"] if c.error]
    emit(f"team_errors_{n}", len(errors))
    if errors:
        emit(f"team_error_kinds_{n}", ",".join(sorted(set(errors))))
        print(got["logs"][-3000:], file=sys.stderr)
    emit("team_rounds", got["rounds"])
    # the cores the machine gave each side during its rounds (server CPU seconds / wall seconds): the team can only
    # beat one process by the share of a second core it gets
    emit("cores_used_one_process_16", got["cores_one"])
    emit(f"cores_used_{processes}_processes_{n}", got["cores_team"])
    emit("team_peak_rss_gb_per_process", got["peak"] / 2**30)
    ratio = p95 / p95_16_one
    key = ("p95_32_two_processes_vs_p95_16_one" if processes == 2
           else f"p95_{n}_{processes}_processes_vs_p95_16_one")
    emit(key, ratio)
    claims.check(f"no_errors_at_{n}_through_the_proxy", not errors, ",".join(errors))
    claims.check(f"p95_{n}_on_{processes}_processes_within_p95_16_on_one", ratio <= 1.0, f"{ratio:.2f}")
    claims.check("team_memory_bounded", got["peak"] / 2**30 < 4.0, f"{got['peak'] / 2**30:.2f} GB per process")


def main(argv=None) -> int:
    global PAGE
    args = parse_args(__doc__, argv, extra=_extra)
    PAGE = args.page
    claims = Claims()
    default = [1, 16] if args.processes > 1 else [1, 4, 8, 16]
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else default
    if args.processes > 1 and 16 not in sizes:
        sizes.append(16)  # the yardstick of the run behind the proxy
    singles = args.singles or (3 if args.quick else 5)
    rest = [n for n in sizes if n != 1]
    random.Random(args.seed).shuffle(rest)
    order = ([1] if 1 in sizes else []) + rest
    harness = load_module("browser_harness", ROOT / "tests" / "browser" / "browser_harness.py")
    t_start = time.perf_counter()
    repeats = args.repeats or (2 if args.quick else 3)
    with tempfile.TemporaryDirectory() as tmp, harness.StreamlitServer(log_path=Path(tmp) / "server.log") as server, \
            (Team(args.processes) if args.processes > 1 else contextlib.nullcontext()) as team:
        got = run(server.port, server.proc.pid, order, singles, args.timeout, team, repeats, args.seed)
        log_tail = server.log_text()
    team = got["team"]
    emit("page", PAGE)
    emit("cold_first_result_s", got["cold"].first_chart_s)
    if got["cold"].error:
        emit("cold_error", got["cold"].error)
    results = got["results"]
    for n in sorted(results):
        outs = results[n]
        first = [o.first_chart_s for o in outs]
        emit(f"p50_first_result_s_{n}", quantile(first, 0.5))
        emit(f"p95_first_result_s_{n}", quantile(first, 0.95))
        emit(f"p50_finished_s_{n}", quantile([o.finished_s for o in outs], 0.5))
        emit(f"server_cpu_s_per_session_{n}", got["server_cpu"][n])
        errors = [o.error for o in outs if o.error]
        emit(f"errors_{n}", len(errors))
        if errors:
            emit(f"error_kinds_{n}", ",".join(sorted(set(errors))))
    emit("server_rss_idle_gb", got["idle"] / 2**30)
    emit("server_peak_rss_gb", got["peak"] / 2**30)
    emit("client_cpu_s", got["client_cpu"])
    if team is not None:
        _report_team(claims, args.processes, team, quantile([o.first_chart_s for o in results[16]], 0.95))
    emit("bench_seconds", time.perf_counter() - t_start)
    emit("load_avg_1min", os.getloadavg()[0])
    if any(o.error for outs in results.values() for o in outs) or got["cold"].error:
        print(log_tail[-3000:], file=sys.stderr)
    biggest = max(results)
    claims.check(f"no_errors_at_{biggest}", not any(o.error for o in results[biggest]),
                 ",".join(o.error for o in results[biggest] if o.error))
    if 1 in results and 8 in results:
        p50_1 = quantile([o.first_chart_s for o in results[1]], 0.5)
        ratio = quantile([o.first_chart_s for o in results[8]], 0.95) / p50_1
        emit("p95_8_vs_p50_1", ratio)
        emit("p95_8_vs_serial_cpu_8", quantile([o.first_chart_s for o in results[8]], 0.95)
             / (8 * got["server_cpu"][8]))
        claims.check("p95_8_within_2_5x_p50_1", ratio <= 2.5, f"{ratio:.2f}")
    peak_gb = got["peak"] / 2**30
    claims.check("server_memory_bounded", peak_gb < 4.0, f"{peak_gb:.2f} GB")
    return claims.exit_code()


if __name__ == "__main__":
    sys.exit(main())
