"""The accelerated VAR ADMM over Flower: enrolment and start by Flower, the iterations over the run's channel.

One Flower run: the ServerApp (the central node) sends each owner's SuperNode ONE "connect" message with the
run's channel credentials (:mod:`engine.federation.flower.channel`: a TLS gRPC stream per owner, mutually
authenticated).
Each owner's ClientApp, in the process Flower started for that message, holds an
:class:`~.anderson_distributed.Owner` (its block, its Gram, its coefficients: read from its own file, never
sent) and answers the central node's requests until the fit has converged; its Flower reply then ends the run.
The central node is :class:`~.anderson_distributed.Central`: the distributed stopping rule and the pooled
Anderson weights, from the owners' contributions, scalars and small Gram pieces (see that module).

Why not one Flower round per iteration: flwr 1.42 starts a new ``flwr-clientapp`` process for every message
(about 2 s CPU of imports per owner) and polls in 3 s steps; a round over the channel costs milliseconds.

Written by hand (grpcio and Flower carry the messages; the protocol is :mod:`.anderson_distributed`'s).
No streamlit here.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from engine.federation.flower.channel import ChannelError, Hub, pack, serve_party, unpack
from engine.federation.flower.runtime import FederationError, progress_file

from .anderson_distributed import Central, Owner

__all__ = ["ANDERSON_FILE", "central_anderson", "owner_anderson"]

ANDERSON_FILE = "var-owner-anderson.npz"
MESSAGE_TYPE = "query.anderson"
UP = ("Z_Ai P_Ai^k", "owner i's contribution at the current point (T x n)")


def _message(RecordDict, ConfigRecord, Message, node: int, cfg: dict):
    return Message(RecordDict({"cfg": ConfigRecord({"json": json.dumps(cfg)})}), dst_node_id=node,
                   message_type=MESSAGE_TYPE)


def central_anderson(grid, cfg, nodes: list, ConfigRecord, Message, RecordDict) -> dict:
    """The central node's run: connect (one Flower round), then hello, the iterations and the owners' finish over
    the channel."""
    timeout = float(cfg["timeout"])
    central_file = np.load(str(cfg["central"]))
    n, p, T = int(cfg["n-owners"]), int(cfg["lags"]), int(central_file["Y"].shape[0])
    t0 = time.perf_counter()
    stamps = {"hub_start": time.time()}
    hub = Hub([str(i) for i in range(n)], timeout=timeout, progress=progress_file(str(cfg["out"])))
    try:
        connect = [_message(RecordDict, ConfigRecord, Message, node, {"op": "connect",
                                                                       "channel": hub.credentials(f"node-{node}")})
                   for node in nodes]
        connect_ids = set(grid.push_messages(connect))
        stamps["connect_pushed"] = time.time()
        hub.wait_connected()
        t_connected = time.perf_counter()
        stamps["connected"] = time.time()
        hello = [unpack(r)[0] for r in hub.round({str(i): pack({"op": "hello"}) for i in range(n)}).values()]
        names = {int(h["index"]): h["name"] for h in hello}
        for key in ("clientapp_process", "clientapp_entry"):  # the slowest owner's
            stamps[key] = max(h[key] for h in hello)
        out = _iterate(hub, central_file, cfg, n, p, T, names)
        stamps["loop_end"] = time.time()
        out["hello_s"], out["connect_s"] = t_connected - t0, out.pop("_t_end") - t_connected
    finally:
        hub.close()
    deadline = time.monotonic() + timeout
    while connect_ids and time.monotonic() < deadline:
        for r in grid.pull_messages(connect_ids):
            connect_ids.discard(r.metadata.reply_to_message_id)
            if r.has_error():
                raise FederationError(f"owner on node {r.metadata.src_node_id} failed: {r.error.reason}")
        time.sleep(0.05)
    stamps["replies"] = time.time()
    out["stamps"] = stamps
    out["wire_down"], out["wire_up"] = hub.bytes_down, hub.bytes_up
    return out


def _iterate(hub: Hub, central_file, cfg, n: int, p: int, T: int, names: dict) -> dict:
    central = Central(central_file["Y"], n=n, p=p, T=T, tol=None if cfg["tol"] < 0 else float(cfg["tol"]),
                      atol=float(cfg["atol"]), max_iter=int(cfg["max-iter"]), y_free=bool(cfg["y-free"]))
    owners = [str(i) for i in range(n)]
    records, rounds = [], []

    def ask(header: dict, arrays: dict | None = None) -> list:
        t = time.perf_counter()
        replies = hub.round({o: pack(header, arrays) for o in owners})
        rounds.append(time.perf_counter() - t)
        return [unpack(replies[o]) for o in owners]

    def log_up(k, message, shape, what):
        records.extend((names[i], "central", message, list(shape), what, "iteration", k) for i in range(n))

    def log_down(k, message, shape, what):
        records.append(("central", "all owners", message, list(shape), what, "iteration", k))

    got = ask({"op": "u"})
    log_up(0, *UP[:1], (T, n), UP[1])
    while True:
        m = central.broadcast([a["u"] for _, a in got])
        k = central.k + 1
        hub.status["iteration"] = k  # the page's progress (counts only, see the channel's docstring)
        log_down(k, "m^k = R^k / n", m.shape, "broadcast: the residual of everyone's fitted values over n")
        reports = [{**h, "M": a.get("M"), "b": a.get("b")} for h, a in ask({"op": "eval"}, {"m": m})]
        log_up(k, "q_i, pen_i, pq_i", (3,), "own dual-residual, penalty and size terms (only their sums are used)")
        if reports[0]["M"] is not None:
            w = reports[0]["M"].shape[0]
            log_up(k, "ΔF_iᵀΔF_i, ΔF_iᵀf_i", (w, w + n), "Gram pieces of its last updates (for the Anderson weights)")
        decision, gamma = central.decide(reports)
        if decision == "stop":
            ask({"op": "keep"})
            break
        if decision == "reject":
            log_down(k, "reject", (1,), "the mixed step raised the objective: take the plain step")
            got = ask({"op": "reject"})
            log_up(k, *UP[:1], (T, n), UP[1])
            continue
        if gamma is not None:
            log_down(k, "Γ^k", gamma.shape, "Anderson mixing weights")
        got = ask({"op": "accept"}, {} if gamma is None else {"gamma": gamma})
        log_up(k, "Z_Ai P_Ai^(k+1), step_i, size_i", (T * n + 2,), "next contribution and the step test's maxima")
        if central.converged_after([h for h, _ in got]):
            break
    t_end = time.perf_counter()
    finals = ask({"op": "finish", "intercepts": bool(cfg["intercepts"])})
    if bool(cfg["intercepts"]):
        records.extend((names[i], "central", "zbar_Ai B_Ai", [1, n], "owner i's lag means times its coefficients, "
                        "for the intercepts", "final", central.k) for i, _ in enumerate(finals))
    return {"records": records, "n_iter": central.k, "converged": central.converged, "rejected": central.rejected,
            "dual": central.dual, "eps_dual": central.eps_dual, "eps_primal": central.eps_primal,
            "round_s": rounds, "_t_end": t_end}


# ============================================================================================= owner side
def owner_anderson(msg, context, ConfigRecord, Message, RecordDict):
    """Owner i's ClientApp: "connect" (serve the run's requests over the channel, then reply)."""
    from engine.federation.flower.runtime import process_started

    stamps = {"clientapp_process": process_started(), "clientapp_entry": time.time()}
    own_dir = Path(str(context.node_config["data-dir"]))
    cfg = json.loads(msg.content["cfg"]["json"])
    with np.load(own_dir / ANDERSON_FILE) as z:  # this owner's own file only
        data = {k: z[k] for k in z.files}
    index, name = int(data["index"]), str(data["name"])
    reply = {"index": index, "name": name}
    if cfg["op"] == "connect":
        reply["served"] = serve_party(cfg["channel"], str(index), _handler(data, own_dir, stamps))
    return Message(RecordDict({"cfg": ConfigRecord({"json": json.dumps(reply)})}), reply_to=msg)


def _handler(data: dict, own_dir: Path, stamps: dict):
    n = int(data["n"])
    owner = Owner(int(data["index"]), data["Z"], data["G"], data["y"], data["B1"], n=n, penalty=str(data["penalty"]),
                  lasso_w_i=data["lasso_w"] if data["lasso_w"].size else None,
                  ridge_w_i=float(data["ridge_w"]) if data["ridge_w"].size else None,
                  inner_tol=float(data["inner_tol"]), memory=int(data["memory"]), y_free=bool(data["y_free"]))

    def handle(request: bytes) -> bytes:
        header, arrays = unpack(request)
        op = header["op"]
        if op == "hello":
            return pack({"index": int(data["index"]), "name": str(data["name"]), **stamps})
        if op in ("u", "reject"):
            return pack({}, {"u": owner.contribution() if op == "u" else owner.reject()})
        if op == "eval":
            rep = owner.evaluate(arrays["m"])
            pieces = {} if rep["M"] is None else {"M": rep["M"], "b": rep["b"]}
            return pack({k: rep[k] for k in ("q", "pen", "pq")}, pieces)
        if op == "accept":
            rep = owner.accept(arrays.get("gamma"))
            return pack({"step": rep["step"], "size": rep["size"]}, {"u": rep["u"]})
        if op == "keep":
            owner.keep()
            return pack({})
        if op == "finish":
            B = owner.result()
            np.save(own_dir / "var-B.part.npy", B)
            (own_dir / "var-B.part.npy").replace(own_dir / "var-B.npy")  # the owner's own result (its workbook)
            return pack({}, {"final": data["z_mean"] @ B} if header.get("intercepts") else {})
        raise ChannelError(f"unknown operation {op!r}")

    return handle
