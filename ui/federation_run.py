"""The "Run over Flower (one process per party)" section shared by the P3LS and VAR-ADMM pages.

One button runs the page's fit twice: in this process (the local transport) and over a local Flower
federation (a SuperLink and one SuperNode process per party on 127.0.0.1, started by the session's first run,
reused by its next runs and stopped after ``IDLE_SECONDS`` unused: :mod:`engine.federation.flower.session`),
and shows both side by side: wall time, messages, the log's values × 8 bytes and the bytes
measured on the wire, the largest result difference and the message log rebuilt from the real messages.
The result stays in ``st.session_state[key]`` so other widgets do not lose it; an error (a party that
dies, a timeout, a setting the Flower transport does not run) is shown and the page keeps its state.

Progress and Cancel: the run goes behind the progress bar and Cancel button every page's sweep uses
(:class:`ui.progress.Sweep`). The engine reports its phases and the run's channel rounds
(:func:`engine.federation.flower.runtime.watching`); :class:`FlowerProgress` turns them into the bar's text:
starting the processes, submitting the run, waiting for the parties, then "iteration k of about K" (VAR-ADMM: K
from the in-process run of the same fit, just before) or "channel round r of R" (P3LS), with the time left
counted from the first round. Cancel stops the script at the next report (every 0.05 s); the session's
federation is then stopped whole, every process of it (:func:`engine.federation.flower.session.shared_federation`
stops a federation whose use raised), and the next run starts a fresh one.

The runners (``var_flower_runs``, ``p3ls_flower_runs``) call the estimators only; no math here.
"""
from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from engine.federation.flower.session import IDLE_SECONDS
from engine.methods.var_admm import CollaborativeVAR
from ui.jobs_view import stop_check
from ui.progress import Sweep
from ui.tables import human_headers

__all__ = ["federation_section", "var_flower_runs", "p3ls_flower_runs", "p3ls_has_flower", "SECTION_TITLE",
           "FlowerProgress", "log_comparison", "progress_text"]

SECTION_TITLE = "Run over Flower (one process per party)"
LOG_COLUMNS = ["phase", "sender", "receiver", "message", "shape", "values sent"]
#: P3LS fit over the run's channel: hello, the key round, training, recovery (engine/methods/p3ls/flower_roles._fit)
P3LS_FIT_ROUNDS = 4
#: P3LS: the masks cancel, so the two fits differ by rounding only (the largest seen: 4e-13 on the sample data)
P3LS_TOLERANCE = 1e-9

PHASES = {
    "local": "Fitting in this process (the in-process run)",
    "starting": "Starting the federation: a SuperLink and one SuperNode per party on 127.0.0.1 (the session's first "
                "run only)",
    "submitting": "Submitting the Flower run (flwr run)",
    "running": "Waiting for each party's ClientApp to start and connect to the run's channel",
}


def progress_text(status: dict, iterations: int | None = None, rounds: int | None = None) -> tuple[float, str]:
    """The bar's (fraction, text) for one engine report (``status``: see
    :mod:`engine.federation.flower.runtime`). ``iterations``: the iterations the in-process run took (VAR-ADMM);
    ``rounds``: the protocol's channel rounds (P3LS). The fraction counts the channel's rounds only (0 before)."""
    phase = str(status.get("phase", "running"))
    if phase != "running" or not status.get("connected"):
        return 0.0, PHASES.get(phase, PHASES["running"])
    if iterations and status.get("iteration") is not None:
        k = int(status["iteration"])
        return min(k / max(iterations, 1), 0.99), f"Over Flower: iteration {k} of about {iterations}"
    done = int(status.get("rounds", 0))
    if rounds:
        return min(done / rounds, 0.99), f"Over Flower: channel round {done} of {rounds}"
    return 0.0, f"Over Flower: {done} channel rounds done"


class FlowerProgress:
    """The engine's ``watching`` callback for a page: the stop check (Cancel), then the bar's text when it changes
    (:func:`progress_text`); the remaining time counts from the parties' connection (``bar.restart``), since
    starting the processes costs far more than a round and says nothing about the rounds left."""

    def __init__(self, bar, iterations: int | None = None, rounds: int | None = None):
        self.bar, self.iterations, self.rounds = bar, iterations, rounds
        self.shown: tuple | None = None
        self.connected = False

    def __call__(self, status: dict) -> None:
        stop_check()
        if status.get("connected") and not self.connected:
            self.connected = True
            if hasattr(self.bar, "restart"):
                self.bar.restart()
        shown = progress_text(status, self.iterations, self.rounds)
        if shown != self.shown:
            self.shown = shown
            self.bar.progress(*shown)


@contextmanager
def _watched(progress, **expected):
    """The engine's progress reports go to ``progress`` (a bar, or None: not watched)."""
    if progress is None:
        yield
        return
    from engine.federation.flower.runtime import watching

    with watching(FlowerProgress(progress, **expected)):
        yield


def _summary(est, wall: float, log: pd.DataFrame, flower: bool) -> dict:
    info = getattr(est, "flower_", None)
    wire = None
    if flower:  # VAR: flower_ (down + up); P3LS: wire_bytes_
        wire = info["wire_bytes_down"] + info["wire_bytes_up"] if info else getattr(est, "wire_bytes_", None)
    return {"wall_s": wall, "messages": int(len(log)), "log_bytes": 8 * int(log["values sent"].sum()),
            "wire_bytes": wire, "log": log}


def var_flower_runs(Y: pd.DataFrame, lags: tuple, settings: dict, solar: bool = False, timeout: float = 120.0,
                    progress=None) -> dict:
    """The page's VAR-ADMM fit on its training rows, local and over Flower: the same parameters as the page's
    fit (``ui.var_admm.tasks.fit_and_forecast``: scheme, stopping rule, iterations, penalty, variant, random
    start). Y (T, n): the owners' series as the page holds them. ``progress``: a bar (``ui.progress``)."""
    from ui.var_admm.runs import panel_of
    from ui.var_admm.tasks import model_kw

    panel = panel_of(Y, solar, lags)
    train, mask = panel.Y[:panel.train_end], panel.fit_mask[:panel.train_end]
    sites = [str(c) for c in getattr(panel, "sites", Y.columns)]
    params = dict(lags=lags, solver="admm", max_iter=settings["max_iter"], tol=settings["tol"],
                  scheme=settings["scheme"], random_state=settings["init_seed"], owner_names=sites,
                  flower_timeout=timeout, **model_kw(settings))
    out: dict[str, Any] = {}
    iterations = None
    for transport in ("local", "flower"):
        if progress is not None and transport == "local":
            progress.progress(0.0, PHASES["local"])
        t0 = time.perf_counter()
        with _watched(progress if transport == "flower" else None, iterations=iterations), \
                _session_federation([str(i) for i in range(len(sites))], transport) as address:
            est = CollaborativeVAR(transport=transport, superlink=address, **params).fit(train, row_mask=mask)
        wall = time.perf_counter() - t0
        iterations = est.n_iter_
        out[transport] = _summary(est, wall, est.trace_.log.to_frame(), transport == "flower")
        out[transport]["coef"] = est.coef_owner_major_
        out[transport]["n_iter"] = est.n_iter_
    out["max_difference"] = float(np.max(np.abs(out["flower"]["coef"] - out["local"]["coef"])))
    out["tolerance"] = _var_tolerance(settings, out["local"]["coef"])
    out["verdict"] = _verdict(_var_verdict, panel, lags, params, est, out["flower"])
    out["what"] = (f"The page's VAR-ADMM fit on the training rows ({est.scheme_} scheme, {est.n_iter_} iterations "
                   f"over Flower, {out['local']['n_iter']} in process, {len(sites)} owners, the page's "
                   "initialisation seed) in both runs")
    return out


def _var_tolerance(settings: dict, coef: np.ndarray) -> float:
    """How far two runs of the same VAR-ADMM fit may differ: with a stopping rule (tolerance ``tol``), each run stops
    once its next step moves no coefficient by more than ``tol`` of the largest, and the two runs sum their owners'
    terms in a different order, so they may stop an iteration apart: ``tol`` × the largest coefficient. A fixed
    number of iterations (paper mode): the same iterations in both, so rounding only (1e-9 of the largest)."""
    scale = max(float(np.max(np.abs(coef))), 1.0)
    tol = settings.get("tol")
    return (1e-9 if tol is None else 10 * float(tol)) * scale


@contextmanager
def _session_federation(parties: list, transport: str):
    """``superlink`` for the estimator: None in process; over Flower, the address of this browser session's local
    federation of ``parties`` (started by its first run, reused by the next ones, stopped after
    ``IDLE_SECONDS`` unused: starting the processes costs more than the fit)."""
    if transport != "flower":
        yield None
        return
    from engine.federation.flower.session import shared_federation

    owner = st.session_state.setdefault("_federation_owner", uuid.uuid4().hex)
    with shared_federation(parties, owner=owner) as fed:
        yield fed.address


def _verdict(make: Callable, *args) -> dict | None:
    """``make(*args)``, or None when the comparison behind it cannot run on these data (the runs stay shown)."""
    try:
        return make(*args)
    except (ValueError, np.linalg.LinAlgError):
        return None


def _cost(flower: dict, rounds: str) -> str:
    wire = "bytes not measured" if flower["wire_bytes"] is None else f"{flower['wire_bytes']:,} bytes on the wire"
    return f"{rounds}, {flower['messages']} messages, {wire}, {flower['wall_s']:.1f} s over Flower on this machine."


def _var_verdict(panel, lags: tuple, params: dict, est, flower: dict) -> dict:
    """Gain (each owner's one-step MAE, the federated VAR against its own AR, on the page's test rows), risk, cost."""
    from engine.methods.var_admm import evaluate_forecasts

    local = {k: v for k, v in params.items() if k != "flower_timeout"}
    ev = evaluate_forecasts(panel.Y, lags, panel.train_end, model=CollaborativeVAR(**local),
                            test_rows=panel.test_rows, score_mask=panel.score_mask, fit_mask=panel.fit_mask,
                            owner_names=local["owner_names"])
    gains = ", ".join(f"{o} {g:+.0f}%" for o, g in zip(ev.table["owner"], ev.table["mae_gain_pct"], strict=False))
    return {"gain": f"One-step forecast MAE of the federated VAR against each owner's own AR (test rows): {gains}.",
            "risk": "The central node (and whoever runs the SuperLink) sees every owner's contribution Z_i B_i at "
                    "every iteration: no ADMM variant is private (see the attack tab). Nothing else crosses: no "
                    "series, no coefficients; the iterations run over a mutually authenticated TLS channel.",
            "cost": _cost(flower, f"{est.n_iter_} iterations")}


def _p3ls_verdict(blocks: list, Y, label_holder: int, party_names: list, flower: dict) -> dict:
    """Gain (test R² of the label holder alone against P3LS, one 60/20/20 split), risk, cost."""
    from engine.methods.p3ls import compare_models

    overall = compare_models(blocks, Y, label_holder=label_holder, party_names=party_names,
                             random_state=0).overall.set_index("model")["r2_pooled"]
    return {"gain": f"Test R² of the label holder's own PLS {overall['local']:.3f}, of P3LS {overall['P3LS']:.3f} "
                    "(one 60/20/20 split of the rows, each model's components chosen on the validation rows).",
            "risk": "The server (CSP) and the trusted authority must not collude: together they unmask every block. "
                    "The hub relays sealed keys it cannot read or swap (pinned identities); it sees the masked "
                    "blocks and the model's masked results.",
            "cost": _cost(flower, "one Flower round and the protocol's 4 channel rounds")}


def p3ls_has_flower() -> bool:
    """Whether this build's P3LS has the Flower transport (``transport`` parameter)."""
    from engine.methods.p3ls.protocol import P3LS

    return "transport" in P3LS().get_params()


def p3ls_flower_runs(blocks: list, Y: np.ndarray, n_components: int, party_names: list, label_holder: int = -1,
                     timeout: float = 120.0, progress=None) -> dict:
    """P3LS fitted on the parties' blocks, local and over Flower (fresh masks in each run: the masks cancel, so
    the coefficients agree to rounding). ``progress``: a bar (``ui.progress``)."""
    from engine.methods.p3ls.protocol import P3LS

    out: dict[str, Any] = {}
    parties = ["ta"] + [str(i + 1) for i in range(len(blocks))]
    for transport in ("local", "flower"):
        if progress is not None and transport == "local":
            progress.progress(0.0, PHASES["local"])
        t0 = time.perf_counter()
        with _watched(progress if transport == "flower" else None, rounds=P3LS_FIT_ROUNDS), \
                _session_federation(parties, transport) as address:
            kw = {} if transport == "local" else {"transport": "flower", "superlink": address}
            fed = P3LS(n_components, label_holder=label_holder, party_names=party_names, **kw).fit(blocks, Y)
        wall = time.perf_counter() - t0
        out[transport] = _summary(fed, wall, fed.log_.to_frame(), transport == "flower")
        out[transport]["coef"] = np.column_stack([fed.coef_, fed.intercept_])
    out["max_difference"] = float(np.max(np.abs(out["flower"]["coef"] - out["local"]["coef"])))
    out["tolerance"] = P3LS_TOLERANCE * max(float(np.max(np.abs(out["local"]["coef"]))), 1.0)
    out["verdict"] = _verdict(_p3ls_verdict, blocks, Y, label_holder, party_names, out["flower"])
    out["what"] = f"P3LS, {n_components} components, {len(blocks)} data holders"
    return out


def log_comparison(local: pd.DataFrame, flower: pd.DataFrame, max_difference: float | None = None,
                   tolerance: float | None = None) -> str:
    """Whether the two runs are the same: the model (largest difference within ``tolerance``) and the messages
    (the same rows in both logs, the order of arrival aside; or the same number of messages). "Same" only when
    both hold; otherwise what differs, and why where it is known."""
    rows = [sorted(map(tuple, df[LOG_COLUMNS].astype(str).to_numpy())) for df in (local, flower)]
    checked = max_difference is not None and tolerance is not None
    agree = checked and max_difference <= tolerance
    model = "" if not checked else (f"the two models agree within {tolerance:.0e} (largest difference "
                                    f"{max_difference:.1e})" if agree else
                                    f"**the models differ by {max_difference:.1e}** (more than {tolerance:.0e})")
    if rows[0] == rows[1] and (agree or not checked):
        return "Same: the same messages in both logs (steps, senders, receivers, shapes)" + (
            f", and {model}." if model else ".")
    if len(local) == len(flower) and agree:
        return (f"Same: {len(local)} messages in each log, and {model}. Some messages carry other names or shapes "
                "over Flower.")
    messages = ("the same messages in both logs" if rows[0] == rows[1] else
                f"{len(local)} messages in process, {len(flower)} over Flower: VAR-ADMM's accelerated scheme over "
                "Flower has its own messages (each owner sends the Gram pieces of its Anderson history and its own "
                "residual and step terms, where the in-process run's central node reads them itself)")
    if agree:
        return f"Same model: {model}. **The message logs differ**: {messages}; see the tables."
    return f"**The runs differ**: {model or 'the models were not compared'}; {messages}."


def federation_section(key: str, run: Callable[..., dict], *, available: bool = True, note: str = "") -> None:
    """The section: a button, a progress bar with the time left and Cancel, then in-process and Flower runs side by
    side.

    ``run(progress)`` (``progress``: the bar, for the runners' ``progress``) returns ``{"local": {...},
    "flower": {...}, "max_difference": float, "tolerance": float, "what": str}`` with per
    transport ``wall_s``, ``messages``, ``log_bytes``, ``wire_bytes`` (None for local) and ``log`` (a frame).
    """
    st.subheader(SECTION_TITLE)
    st.markdown("The same fit, once with every party as an object in this process and once as a real federation: "
                "a Flower SuperLink and **one SuperNode process per party** on this machine (127.0.0.1 only, "
                "insecure loopback), each party reading only its own data, the central role in the ServerApp. "
                "The message log below is rebuilt from the messages that actually crossed. " + note)
    if not available:
        st.info("The Flower transport of this method is not in this build yet.")
        return
    # Cancel (the bar's button, key f"{key}_run_cancel") stops every process of the session's federation
    sweep = Sweep(f"{key}_run", "run over Flower")
    if st.button("Run over Flower", key=f"{key}_button"):
        try:
            with sweep.running(PHASES["local"]) as bar:
                st.session_state[key] = run(bar)
        except Exception as err:  # a dead party, a timeout, a refused setting: said, and the page keeps its state
            st.error(f"The Flower run failed: {err}")
    result = st.session_state.get(key)
    if result:
        _show(result)


def _show(result: dict) -> None:
    loc, fl = result["local"], result["flower"]
    st.caption(result["what"])
    left, right = st.columns(2)
    left.metric("In-process wall time", f"{loc['wall_s']:.3g} s")
    right.metric("Flower wall time", f"{fl['wall_s']:.3g} s",
                 help="The first run of this session includes starting the SuperLink and the SuperNodes; later runs "
                      f"reuse them (they stop after {IDLE_SECONDS / 60:.0f} minutes unused, or when the app stops).")
    left.metric("Messages (log)", loc["messages"])
    right.metric("Messages (log from the wire)", fl["messages"])
    left.metric("Values sent × 8 bytes", f"{loc['log_bytes']:,}")
    right.metric("Bytes measured on the wire", "not measured" if fl["wire_bytes"] is None else f"{fl['wire_bytes']:,}",
                 help="Bytes Flower serialised for every message pushed either way (arrays, records, metadata; "
                      "HTTP headers not counted). A broadcast crosses once per receiving party.")
    st.metric("Largest difference between the two runs", f"{result['max_difference']:.1e}")
    verdict = result.get("verdict")
    if verdict:
        with st.container(border=True):
            st.markdown("**A data owner's verdict: should I join?**")
            st.markdown(f"- **Gain.** {verdict['gain']}\n- **Risk.** {verdict['risk']}\n- **Cost.** {verdict['cost']}")
    st.markdown(log_comparison(loc["log"], fl["log"], result["max_difference"], result.get("tolerance")))
    st.dataframe(human_headers(fl["log"]), hide_index=True, width="stretch")
