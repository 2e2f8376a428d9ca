"""The federated methods over Flower (one process per party) against the in-process protocol: time to a converged
fit, the steady-state round, and bytes on the wire against the protocol's own count.

Transport (see ``engine/federation/flower/channel.py``): Flower keeps enrolment, start and finish; the protocol's
rounds run over the run's channel (one gRPC bidirectional stream per party, mutual TLS), because flwr 1.42 starts a
new ``flwr-clientapp`` process for every message and polls in 3 s steps (a round over Flower messages measured
5-24 s; performance review 2026-11-27, part 1).

Figures (targets of issue 32; each also a checked claim):
- ``var_3_flower_converged_s``, ``var_10_flower_converged_s``: seconds of a VAR-ADMM fit over Flower
  (``CollaborativeVAR(solver="admm", transport="flower", tol=1e-10)``: the accelerated scheme with the distributed
  stopping rule; the default tol 1e-6 stops a few milliseconds-long rounds earlier), from starting the
  federation's processes to the coefficients, for 3 and 10 owners; its gap
  ``var_<n>_gap`` = max |B_flower - B_pooled| / max |B_pooled| against the pooled least-squares fit
  (``solver="central"``, the exact optimum) must be <= 1e-6. Targets 20 s and 45 s.
- ``p3ls_3_flower_s``: seconds of a P3LS fit over Flower (3 holders + the trusted authority, processes started
  and stopped included). Target 20 s. ``p3ls_3_flower_warm_s``: the same fit again on the running federation.
- ``flower_round_s``: the steady-state round of the 3-owner VAR fit: the median of its channel rounds (the
  central node's request to every owner and every reply; two per iteration). Target 0.5 s.
- ``var_<n>_flower_cpu_s``: CPU seconds of the federation's life (start, the cold and the warm fit, stop), every
  Flower process included (those whose parents reaped them: the SuperLink, SuperNodes, SuperExecs and app
  processes), the machine-independent cost; on an idle machine with a core per process the wall time approaches
  the start-up chain's share of it.
- ``var_<n>_flower_warm_s``: the same fit again on the running federation (a session's next fit, its processes
  kept by :func:`engine.federation.flower.session.shared_federation`); the cold figure above is the federation's
  start, the first fit and the stop, timed apart.
- ``var_<n>_flower_start_s`` (the federation up), ``var_<n>_flower_run_s`` (``flwr run`` to the result file:
  the CLI, the ServerApp's start, the Flower round, the iterations, the owners' replies),
  ``var_<n>_flower_connect_s`` (inside it: the ServerApp's "connect" round until every owner's stream is open),
  ``var_<n>_flower_loop_s`` (the iterations), ``var_<n>_flower_stop_s`` (stopping every process, after the warm
  fit),
  ``var_<n>_iterations``; the timeline ``var_<n>_t_*_s`` (``SPANS``: the federation's start, the ``flwr run``
  CLI, the ServerApp's spawn and imports, the slowest ClientApp's spawn and imports, the channel, the loop, the
  owners' Flower replies, the result seen by the driver, the stop).
- Bytes: ``var_<n>_wire_bytes`` (the channel's messages as sent, both ways) against ``var_<n>_log_bytes``
  (the protocol's count: the values its log lists times 8 bytes), ``wire_bytes_vs_log`` (3 owners) >= 1: fewer
  bytes than values would mean values did not cross; the surplus is the broadcast sent to each owner (the log
  counts it once) and the ``.npz`` framing. ``p3ls_3_wire_bytes`` / ``p3ls_3_log_bytes`` likewise (envelopes).
Claims (checked): coefficients equal the in-process runs (VAR: the in-process accelerated fit, 1e-8 at
tol 1e-10; P3LS 1e-10); no Flower process left behind; the targets above (a loaded machine may miss the time
targets: the load average is printed). --quick: 3 and 10 owners, P3LS with 3 holders (measured about 1.5 min);
full: also P3LS with 10 holders.

Usage: python bench/bench_federation.py [--quick] [--seed N]
"""
from __future__ import annotations

import os
import resource
import sys
import time

import numpy as np

from _common import Claims, emit, parse_args
from engine.federation.flower.session import shared_federation, stop_all
from engine.methods.var_admm.estimator import CollaborativeVAR
from engine.methods.var_admm.flower_roles import processes_in_groups

TOL = 1e-10  # the fits' stopping tolerance: tight enough for both claims (gap <= 1e-6, equal to local to 1e-8)
TARGETS = {"var_3_flower_converged_s": 20.0, "var_10_flower_converged_s": 45.0, "p3ls_3_flower_s": 20.0,
           "flower_round_s": 0.5}


def series(n: int, T: int, seed: int) -> np.ndarray:
    """A stable VAR(1) of n series (T rows) with different units per series."""
    rng = np.random.default_rng(seed)
    A = 0.3 * np.eye(n) + 0.1 * rng.uniform(-1, 1, (n, n)) / np.sqrt(n)
    Y = np.zeros((T, n))
    for t in range(1, T):
        Y[t] = Y[t - 1] @ A.T + rng.normal(size=n)
    return Y * 2.0 ** rng.integers(-3, 4, n)


def _cpu() -> float:
    """CPU seconds of this process and of every finished descendant (the federation's processes, once stopped)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


#: the fit's timeline (``flower_["stamps"]``, wall-clock stamps from the driver, the ServerApp and the slowest owner's
#: ClientApp): figure -> (from, to)
SPANS = {"t_federation_up_s": ("fit_start", "federation_up"),
         "t_flwr_run_cli_s": ("flwr_run_issued", "flwr_run_accepted"),
         "t_serverapp_spawn_s": ("flwr_run_issued", "serverapp_process"),
         "t_serverapp_import_s": ("serverapp_process", "serverapp_main"),
         "t_clientapp_spawn_s": ("connect_pushed", "clientapp_process"),
         "t_clientapp_import_s": ("clientapp_process", "clientapp_entry"),
         "t_channel_up_s": ("clientapp_entry", "connected"),
         "t_loop_s": ("connected", "loop_end"),
         "t_flower_replies_s": ("loop_end", "replies"),
         "t_result_seen_s": ("replies", "result"),
         "t_stop_s": ("result", "stopped")}


def timeline(stamps: dict) -> dict:
    """Seconds of each span of ``SPANS`` present in ``stamps``."""
    return {key: stamps[b] - stamps[a] for key, (a, b) in SPANS.items() if stamps.get(a) and stamps.get(b)}


def run_var(n: int, seed: int, claims: Claims) -> dict:
    Y = series(n, 40 + 4 * n, seed)
    pooled = CollaborativeVAR(lags=1, solver="central").fit(Y).coef_owner_major_
    params = dict(lags=1, solver="admm", random_state=seed, flower_timeout=120.0, tol=TOL, max_iter=500)
    # cold: the federation's start, the fit and the stop (as a fit with superlink=None runs them); warm: the same fit
    # again on the running federation (a session's next fit: shared_federation)
    t0, cpu0 = time.perf_counter(), _cpu()
    with shared_federation([str(i) for i in range(n)], owner="bench") as fed:
        pgids = [proc.pid for proc in fed.processes.values()]
        start_s = time.perf_counter() - t0
        fl = CollaborativeVAR(transport="flower", superlink=fed.address, **params).fit(Y)
        fit_s = time.perf_counter() - t0 - start_s
        t1 = time.perf_counter()
        warm = CollaborativeVAR(transport="flower", superlink=fed.address, **params).fit(Y)
        warm_s = time.perf_counter() - t1
    t2 = time.perf_counter()
    stop_all()
    stop_s = time.perf_counter() - t2
    converged_s, cpu_s = start_s + fit_s + stop_s, _cpu() - cpu0
    warm_diff = float(np.max(np.abs(warm.coef_owner_major_ - fl.coef_owner_major_)))
    gap = float(np.max(np.abs(fl.coef_owner_major_ - pooled)) / np.max(np.abs(pooled)))
    loc = CollaborativeVAR(transport="local", **params).fit(Y)
    diff = float(np.max(np.abs(fl.coef_owner_major_ - loc.coef_owner_major_)))
    info = fl.flower_
    wire = info["wire_bytes_down"] + info["wire_bytes_up"]
    log_bytes = 8 * int(fl.trace_.log.to_frame()["values sent"].sum())
    out = {"flower_converged_s": converged_s, "flower_warm_s": warm_s, "flower_cpu_s": cpu_s, "gap": gap,
           "iterations": fl.n_iter_, "flower_start_s": start_s, "flower_run_s": info["run_seconds"],
           "flower_stop_s": stop_s,
           "flower_connect_s": info["hello_seconds"], "flower_loop_s": info["loop_seconds"],
           "round_median_s": float(np.median(info["round_seconds"])),
           "max_coef_diff_vs_local": diff, "wire_bytes": wire, "log_bytes": log_bytes}
    out.update(timeline(info.get("stamps", {})))
    for key, value in out.items():
        emit(f"var_{n}_{key}", value)
    claims.check(f"var_{n}_converged_gap_1e-6", fl.converged_ and gap <= 1e-6, f"gap {gap:.3g}")
    claims.check(f"var_{n}_equals_local_1e-8", diff <= 1e-8, f"max |B_flower - B_local| = {diff:.3g}")
    claims.check(f"var_{n}_warm_equals_cold_1e-8", warm_diff <= 1e-8, f"max |B_warm - B_cold| = {warm_diff:.3g}")
    left = processes_in_groups(pgids)
    claims.check(f"var_{n}_no_process_left", left == [], f"left: {left}")
    return out


def run_p3ls(g: int, seed: int, claims: Claims) -> dict:
    """P3LS on g data holders (4 columns each, 40 rows), local and over Flower, the same random_state."""
    from engine.methods.p3ls.protocol import P3LS

    rng = np.random.default_rng(seed)
    blocks = [rng.normal(size=(40, 4)) for _ in range(g)]
    Y = sum(b @ rng.normal(size=(4, 2)) for b in blocks) + 0.1 * rng.normal(size=(40, 2))
    t0 = time.perf_counter()
    loc = P3LS(2, random_state=seed).fit(blocks, Y)
    local_wall = time.perf_counter() - t0
    t0 = time.perf_counter()  # cold and warm as for the VAR (run_var)
    with shared_federation(["ta"] + [str(i + 1) for i in range(g)], owner="bench") as fed:
        start_s = time.perf_counter() - t0
        fl = P3LS(2, random_state=seed, transport="flower", superlink=fed.address).fit(blocks, Y)
        fit_s = time.perf_counter() - t0 - start_s
        t1 = time.perf_counter()
        warm = P3LS(2, random_state=seed, transport="flower", superlink=fed.address).fit(blocks, Y)
        warm_s = time.perf_counter() - t1
    t2 = time.perf_counter()
    stop_all()
    flower_wall = start_s + fit_s + time.perf_counter() - t2
    diff = float(np.max(np.abs(fl.coef_ - loc.coef_)))
    warm_diff = float(np.max(np.abs(warm.coef_ - loc.coef_)))
    claims.check(f"p3ls_{g}_warm_equals_local_1e-10", warm_diff <= 1e-10, f"{warm_diff:.3g}")
    log_bytes = 8 * int(loc.log_.to_frame()["values sent"].sum())
    out = {"local_wall_s": local_wall, "flower_s": flower_wall, "flower_warm_s": warm_s, "max_coef_diff": diff,
           "wire_bytes": int(fl.wire_bytes_), "channel_bytes": int(fl.channel_bytes_), "log_bytes": log_bytes,
           "flower_rounds": fl.flower_rounds_, "channel_rounds": len(fl.channel_round_seconds_)}
    for key, value in out.items():
        emit(f"p3ls_{g}_{key}", value)
    claims.check(f"p3ls_{g}_coefficients_equal_1e-10", diff <= 1e-10, f"max |coef_flower - coef_local| = {diff:.3g}")
    return out


def main(argv=None) -> int:
    args = parse_args(__doc__, argv)
    claims = Claims()
    emit("load_average_1min", os.getloadavg()[0])
    t_all = time.perf_counter()
    res = {n: run_var(n, args.seed + n, claims) for n in (3, 10)}
    p3 = {g: run_p3ls(g, args.seed + g, claims) for g in ((3,) if args.quick else (3, 10))}
    figures = {"var_3_flower_converged_s": res[3]["flower_converged_s"],
               "var_10_flower_converged_s": res[10]["flower_converged_s"],
               "p3ls_3_flower_s": p3[3]["flower_s"], "flower_round_s": res[3]["round_median_s"]}
    for key, value in figures.items():
        emit(key, value)
        claims.check(f"{key}_at_most_{TARGETS[key]:g}", value <= TARGETS[key], f"{value:.3g} s")
    ratio = res[3]["wire_bytes"] / res[3]["log_bytes"]
    emit("wire_bytes_vs_log", ratio)
    emit("wire_bytes_vs_log_10_parties", res[10]["wire_bytes"] / res[10]["log_bytes"])
    emit("p3ls_wire_bytes_vs_log", p3[3]["wire_bytes"] / p3[3]["log_bytes"])
    claims.check("wire_bytes_at_least_8_per_value", ratio >= 1.0, f"{ratio:.3g}")
    emit("load_average_1min_end", os.getloadavg()[0])
    emit("bench_wall_s", time.perf_counter() - t_all)
    return claims.exit_code()


if __name__ == "__main__":
    sys.exit(main())
