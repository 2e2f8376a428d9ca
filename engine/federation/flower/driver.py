"""The driver side of a Flower transport: which federation to use, and one job submitted and awaited.

:func:`federation` yields a :class:`~engine.federation.flower.runtime.LocalFederation`: a new one on
127.0.0.1 (stopped when the block ends, also on failure) when ``superlink`` is None, or the running one
started in this process at ``superlink="host:port"`` (its parties' data directories are known here).
:func:`run_job` writes a job file (parameters only, never data), submits the app with ``flwr run`` and
returns the ServerApp's result; on failure it stops the run (``flwr stop``) and raises
:class:`~engine.federation.flower.runtime.FederationError` naming the party.
"""
from __future__ import annotations

import json
import subprocess
import uuid
from contextlib import contextmanager
from pathlib import Path

from engine.federation.flower.runtime import FederationError, LocalFederation, flwr_cli, run_id_of, submit_run

__all__ = ["APP_DIR", "federation", "register", "run_job", "unregister"]

APP_DIR = Path(__file__).resolve().parents[1] / "flower_app"
_RUNNING: dict[str, LocalFederation] = {}


def register(fed: LocalFederation) -> LocalFederation:
    """Make a started local federation usable as ``superlink=fed.address`` (until it stops)."""
    _RUNNING[fed.address] = fed
    return fed


def unregister(fed: LocalFederation) -> None:
    """Forget a federation that is stopping (``superlink=fed.address`` is refused from now on)."""
    _RUNNING.pop(fed.address, None)


@contextmanager
def federation(parties: list[str], superlink: str | None = None, workdir: str | None = None):
    """The federation of a fit or predict call (see the module docstring)."""
    if superlink is not None:
        fed = _RUNNING.get(str(superlink))
        if fed is None or fed.processes.get("superlink") is None or fed.processes["superlink"].poll() is not None:
            raise ValueError(f"no running federation started here at {superlink!r}: a remote federation's parties "
                             "place their own data files and the coordinator runs `flwr run` (docs/federation.md, "
                             "'Deploying a federation')")
        missing = [p for p in parties if f"party {p}" not in fed.processes]
        if missing:
            raise ValueError(f"the federation at {superlink} has no SuperNode for party {', '.join(missing)}")
        yield fed
        return
    with LocalFederation(parties, workdir=workdir) as fed:
        register(fed)
        try:
            yield fed
        finally:
            _RUNNING.pop(fed.address, None)


def _stop_run(fed: LocalFederation, out: str) -> None:
    """Ask the SuperLink to stop the failed run (best effort: the error the caller raises is the one to report, and
    stopping the federation ends the run anyway; a ``flwr stop`` that hangs on a loaded machine must not replace
    that error)."""
    run_id = run_id_of(out)
    if run_id:
        try:
            flwr_cli(["stop", run_id], dict(fed.env), timeout=30)
        except (subprocess.TimeoutExpired, OSError):
            pass


def run_job(fed: LocalFederation, job: dict, *, timeout: float) -> dict:
    """Submit ``job`` (JSON-able parameters) to ``fed`` and return the ServerApp's result (see module docstring)."""
    state_dir = fed.workdir / "server" / str(job["model"])
    state_dir.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex[:8]
    result_path = state_dir / f"result-{job['task']}-{token}.json"
    job_path = state_dir / f"job-{job['task']}-{token}.json"
    job_path.write_text(json.dumps({**job, "result": str(result_path)}))
    submitted: dict[str, str] = {}
    try:
        return submit_run(APP_DIR, fed.flwr_home, {"job-path": str(job_path)}, result_path, timeout=timeout,
                          check_alive=fed.check_alive, env=fed.env, submitted=submitted)
    except FederationError:
        _stop_run(fed, submitted.get("stdout", ""))
        raise
