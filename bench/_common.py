"""Shared helpers for the benchmark and reproduction scripts in ``bench/``.

- ``parse_args(doc)``: argparse with ``--quick`` (a run well under two minutes) and ``--seed N``.
- ``emit(key, value)`` / ``emit_many(prefix, mapping)``: one ``key=value`` line per figure.
- ``Claims``: record checked claims (``check``) and reported-only findings (``report``); ``exit_code()``
  is 1 when any checked claim failed, so ``sys.exit(claims.exit_code())`` makes the script fail.
- ``load_corn()``: the corn NIR data (m5 spectra, moisture), or None when it is not next to the checkout.
- ``load_corn_instruments()``: the corn spectra of both instruments (m5, mp5) and all four properties.
- ``Timer``: a perf_counter context manager; ``CpuTimer``: process CPU seconds (and wall) of a block.
- ``TreeRss(pid=None)``: RSS of a process and all its descendants (a server and its job workers; this process and
  a LocalCluster's workers), sampled by a thread; ``peak``, ``now()``, ``reset()``, ``cpu_seconds()``.
- ``load_module(name, path)``: import a helper module from its file (e.g. the browser suite's harness in
  ``tests/browser``, which is not a package) without editing ``sys.path``.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: The corn data next to the checkout; PRIVALAB_CORN_DIR points elsewhere (e.g. from a git worktree).
CORN_DIR = Path(os.environ.get("PRIVALAB_CORN_DIR", ROOT.parent / "shared" / "data" / "corn"))


def parse_args(doc: str | None, argv=None, extra=None) -> argparse.Namespace:
    """Common options. ``extra(parser)`` may add script-specific ones."""
    first = (doc or "").strip().splitlines()[0] if doc else None
    ap = argparse.ArgumentParser(description=first)
    ap.add_argument("--quick", action="store_true", help="smaller workload (well under two minutes)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (claims must hold for any seed)")
    if extra is not None:
        extra(ap)
    return ap.parse_args(argv)


def fmt(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.6g}"
    return str(value).replace("\n", " ")


def emit(key: str, value) -> None:
    print(f"{key}={fmt(value)}", flush=True)


def emit_many(prefix: str, mapping: dict) -> None:
    for k, v in mapping.items():
        emit(f"{prefix}{k}", v)


class Claims:
    """Checked claims (fail the script) and reported findings (never fail)."""

    def __init__(self):
        self.failed: list[str] = []
        self.n_checked = 0

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.n_checked += 1
        ok = bool(ok)
        emit(f"claim_{name}", "PASS" if ok else "FAIL")
        if detail:
            emit(f"claim_{name}_detail", detail)
        if not ok:
            self.failed.append(name)
        return ok

    def report(self, name: str, holds: bool, detail: str = "") -> None:
        emit(f"finding_{name}", "holds" if holds else "does_not_hold")
        if detail:
            emit(f"finding_{name}_detail", detail)

    def exit_code(self) -> int:
        emit("claims_checked", self.n_checked)
        emit("claims_failed", len(self.failed))
        if self.failed:
            emit("failed_claims", ",".join(self.failed))
        return 1 if self.failed else 0


def load_corn():
    """(X (80, 700), y moisture (80,), wavelengths (700,)) or None when the data are absent."""
    spec, props = CORN_DIR / "corn_m5spec.csv", CORN_DIR / "corn_propvals.csv"
    if not (spec.exists() and props.exists()):
        return None
    import pandas as pd

    Xdf = pd.read_csv(spec)
    y = pd.read_csv(props)["Moisture"].to_numpy(dtype=float)
    return Xdf.to_numpy(dtype=float), y, Xdf.columns.to_numpy(dtype=float)


def load_corn_instruments():
    """{"m5": X (80, 700), "mp5": X (80, 700), "props": DataFrame (80, 4), "wavelengths": (700,)} or None.

    The same 80 corn samples measured on two instruments (m5, mp5) and their four reference properties
    (Moisture, Oil, Protein, Starch).
    """
    files = {"m5": CORN_DIR / "corn_m5spec.csv", "mp5": CORN_DIR / "corn_mp5spec.csv"}
    props = CORN_DIR / "corn_propvals.csv"
    if not (props.exists() and all(f.exists() for f in files.values())):
        return None
    import pandas as pd

    out = {name: pd.read_csv(f) for name, f in files.items()}
    wl = out["m5"].columns.to_numpy(dtype=float)
    return {"m5": out["m5"].to_numpy(dtype=float), "mp5": out["mp5"].to_numpy(dtype=float),
            "props": pd.read_csv(props), "wavelengths": wl}


class Timer:
    """Wall-clock seconds of a block (``seconds``): for what is not a ratio claim (a write, a server's start)."""

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        return False


class CpuTimer:
    """CPU seconds of a block (``seconds``: user + system of every thread of this process, ``time.process_time``)
    and its wall-clock (``wall``). Ratio claims compare CPU seconds measured in the same process, which other
    processes on the shared cores do not inflate the way they inflate wall-clock."""

    def __enter__(self):
        self.c0, self.t0 = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.process_time() - self.c0
        self.wall = time.perf_counter() - self.t0
        return False


class TreeRss:
    """The RSS of a process and its descendants, sampled by a thread every ``interval`` seconds; ``peak`` in bytes
    since the start or the last ``reset``. ``pid``: None for this process. psutil comes with dask.distributed."""

    def __init__(self, pid: int | None = None, interval: float = 0.1):
        self.pid, self.interval, self.peak = os.getpid() if pid is None else pid, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _tree(self) -> list:
        import psutil

        try:
            root = psutil.Process(self.pid)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def now(self) -> int:
        import psutil

        total = 0
        for p in self._tree():
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass  # a worker that ended between the listing and the read
        return total

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the process and its live descendants so far."""
        import psutil

        procs = self._tree()
        if not procs:
            return math.nan
        total = 0.0
        for p in procs:
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
        return total

    def reset(self) -> None:
        self.peak = self.now()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.now())
            self._stop.wait(self.interval)

    def __enter__(self) -> "TreeRss":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

def load_module(name: str, path: Path):
    """The module in file ``path``, imported under ``name`` (registered in ``sys.modules``)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def one_blas_thread_for_the_run() -> str:
    """Limit every BLAS loaded so far (numpy's, scipy's OpenBLAS) to one thread for the rest of the process, check
    it with ``threadpool_info`` and emit ``blas_threads`` and the load average. Import every module that brings
    a BLAS (numpy, scipy, sklearn, the peers) BEFORE calling: threadpoolctl limits only the libraries it sees.
    Ratio claims then compare CPU time (``cpu_best``) of the work itself, robust to other processes."""
    from threadpoolctl import threadpool_info, threadpool_limits

    limits = threadpool_limits(limits=1, user_api="blas")
    _KEEP.append(limits)
    blas = [(i.get("internal_api"), int(i.get("num_threads") or 0)) for i in threadpool_info()
            if i.get("user_api") == "blas"]
    shown = ",".join(f"{api}:{n}" for api, n in blas)
    emit("blas_threads", shown)
    if not blas or any(n != 1 for _, n in blas):
        raise RuntimeError(f"BLAS not limited to one thread: {shown}")
    emit_load()
    return shown


_KEEP: list = []


def emit_load(key: str = "load_avg") -> None:
    """The 1, 5 and 15 minute load averages (other processes share the cores: read the figures with them)."""
    emit(key, " ".join(f"{v:.2f}" for v in os.getloadavg()))


def cpu_best(fits: dict, repeats: int) -> dict:
    """Best process CPU time (user + system, ``time.process_time``) of each callable over ``repeats`` interleaved
    rounds, in the same process: {name: seconds}. Also the best wall-clock under ``name + '_wall'``."""
    import gc

    cpu = {name: math.inf for name in fits}
    wall = {name: math.inf for name in fits}
    for _ in range(repeats):
        for name, f in fits.items():
            gc.collect()
            c0, w0 = time.process_time(), time.perf_counter()
            f()
            cpu[name] = min(cpu[name], time.process_time() - c0)
            wall[name] = min(wall[name], time.perf_counter() - w0)
    return {**cpu, **{f"{name}_wall": v for name, v in wall.items()}}
