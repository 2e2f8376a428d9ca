"""The collaborative VAR's ADMM (47)/(71) as a Flower App: the central node a ServerApp, each owner a ClientApp.

Roles and messages are the local protocol's (:mod:`engine.methods.var_admm.solver`): iteration k is one
Flower round. The ServerApp sends every owner the broadcast m^(k-1) (none at k = 1); each owner, on its
own SuperNode, reads only its own file (its lag block Z_i, its target column, its B_i^1), updates
B_i with :func:`~engine.methods.var_admm.solver.owner_update` and answers with
:func:`~engine.methods.var_admm.solver.owner_message`; the central node runs
:func:`~engine.methods.var_admm.solver._central_step`. After the last iteration one more round carries
m^K: each owner takes its last step, keeps its coefficients in its own output file (its workbook) and
sends zbar_Ai B_Ai for the intercepts (the local log's "final" phase).

The message log is rebuilt from the messages actually received and sent (sender from the replying
owner's own reply, shape of the array that crossed), and the wire bytes are measured: the
sizes of the objects Flower serialises and pushes for each message (``deflate`` of the message's
object tree: arrays, records, metadata; HTTP headers not counted).

Scope (checked by the estimator): here the paper's scheme with fixed K (``tol=None``), one Flower round per
iteration, no noise inside ADMM, no kept values: no observer sees every owner's Gram, so Boyd's dual residual
(which needs them) is not computed; the central node's primal residual r^k = sqrt(n) ||w^k|| is. The default
fit (the accelerated scheme with the distributed stopping rule) runs over the run's channel instead:
:func:`run_anderson_flower` and :mod:`.flower_anderson`, whose apps are this module's (query ``anderson``).

The federation (a SuperLink and one SuperNode per owner on 127.0.0.1, always stopped; a dead party is
a :class:`FederationError` naming it) is the shared runner of :mod:`engine.federation.flower`. This App
is separate from the P3LS App (its own ``pyproject.toml``, written per run by :func:`write_app`).

Written by hand (Flower's Message API carries the messages; the protocol is the paper's).
No streamlit here.
"""
from __future__ import annotations

import contextlib
import json
import math
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.federation.flower.driver import federation as flower_federation
from engine.federation.flower.runtime import FederationError, progress_file, submit_run, write_progress

from .lasso import _owner_solver

# .solver and .trace (pandas, scikit-learn through the noise draws) are imported where the paper's scheme and the
# log need them: the accelerated scheme's party and central processes never do (each import costs them ~2 s CPU)

#: ``server_app`` and ``client_app`` (the Flower apps) are module attributes built on first use (``__getattr__``);
#: flwr's App check finds them here, in ``__all__`` (it reads the module's syntax, without importing it)
__all__ = [  # noqa: F822
    "FederationError",
    "client_app",
    "processes_in_groups",
    "records_to_log",
    "run_anderson_flower",
    "run_paper_flower",
    "server_app",
    "write_app",
]

APP_NAME = "privalab-var-admm"
BROADCAST = ("m^k = Hbar^k - ZBbar^k - U^k",
             "broadcast: everyone's fitted values, the consensus and the scaled dual mixed")
FINAL = ("zbar_Ai B_Ai", "owner i's lag means times its coefficients, for the intercepts")
#: each owner's files in its SuperNode's own data directory (``data-dir`` of its node config)
OWNER_FILE, OWNER_RESULT = "var-owner.npz", "var-B.npy"


# =============================================================================================
# Flower roles (imported by flwr-serverapp / flwr-clientapp from the App's pyproject components)
# =============================================================================================
def _wire_bytes(message) -> int:
    """Bytes Flower serialises for one message: every object of its tree (``deflate``), as pushed."""
    from flwr.supercore.inflatable.inflatable_object import get_all_nested_objects

    return int(sum(len(obj.deflate()) for obj in get_all_nested_objects(message).values()))


def _array(rec, key: str) -> np.ndarray:
    return rec[key].numpy()


def _make_server_app():
    from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Message, RecordDict
    from flwr.serverapp import Grid, ServerApp

    app = ServerApp()

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        from engine.federation.flower.runtime import process_started

        stamps = {"serverapp_process": process_started(), "serverapp_main": time.time()}
        cfg = context.run_config
        out = Path(str(cfg["out"]))
        try:
            if str(cfg["scheme"]) == "anderson":
                from .flower_anderson import central_anderson

                nodes = _owner_nodes(grid, int(cfg["n-owners"]), float(cfg["timeout"]))
                stamps["owners_listed"] = time.time()
                result = central_anderson(grid, cfg, nodes, ConfigRecord, Message, RecordDict)
                result["stamps"] = {**stamps, **result.get("stamps", {})}
            else:
                result = _central_node(grid, cfg, Array, ArrayRecord, ConfigRecord, Message, RecordDict)
        except Exception as exc:  # reported to the estimator, which raises it
            result = {"error": f"{type(exc).__name__}: {exc}"}
        tmp = out.with_suffix(".part")
        tmp.write_text(json.dumps(result))
        tmp.replace(out)

    return app


def _owner_nodes(grid, n: int, timeout: float) -> list[int]:
    """The node ids of the n owners' SuperNodes, once all joined."""
    deadline = time.monotonic() + timeout
    nodes: list[int] = []
    while len(nodes) < n:
        nodes = sorted(grid.get_node_ids())
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(nodes)} of {n} owners' SuperNodes joined within {timeout:g} s")
        time.sleep(0.2)
    if len(nodes) != n:
        raise FederationError(f"the federation has {len(nodes)} SuperNodes; the VAR needs exactly its {n} owners")
    return nodes


def _central_node(grid, cfg, Array, ArrayRecord, ConfigRecord, Message, RecordDict) -> dict:
    """The VAR central node over Flower: returns the rebuilt log, residuals and wire bytes."""
    from engine.federation.flower.relay import exchange  # imports flwr: only in the ServerApp's process

    from .solver import _PAPER_UPLINK, _central_step

    central = np.load(str(cfg["central"]))
    n, K, rho, timeout = int(cfg["n-owners"]), int(cfg["max-iter"]), float(cfg["rho"]), float(cfg["timeout"])
    y_free = bool(cfg["y-free"])
    Y, U_prev = central["Y"], central["U0"]
    nodes = _owner_nodes(grid, n, timeout)
    records, wire = [], {"down": 0, "up": 0}
    owner_of: dict[int, tuple[int, str]] = {}
    msg_name, _ = _PAPER_UPLINK[y_free]
    m = None
    prim = []
    progress = progress_file(str(cfg["out"]))
    for k in range(1, K + 2):  # K iterations, then the last owner step (round K + 1)
        last = k == K + 1
        # the page's progress: one Flower round per iteration here (counts only)
        write_progress(progress, {"connected": True, "rounds": k - 1, "iteration": min(k, K)})
        content = {"cfg": ConfigRecord({"k": k, "last": last, "intercepts": bool(cfg["intercepts"])})}
        if m is not None:
            content["m"] = ArrayRecord({"m": Array(np.ascontiguousarray(m))})
        out = [Message(RecordDict(content), dst_node_id=node, message_type="query.admm") for node in nodes]
        wire["down"] += sum(_wire_bytes(msg) for msg in out)
        replies = exchange(grid, out, timeout)  # pulls every 0.1 s (send_and_receive: 3 s)
        got = {r.metadata.src_node_id: r for r in replies if not r.has_error()}
        missing = [owner_of.get(node, (None, f"node {node}"))[1] for node in nodes if node not in got]
        if missing:
            errors = [r.error.reason for r in replies if r.has_error()]
            raise FederationError(f"no answer from {', '.join(missing)} at iteration {k} within {timeout:g} s"
                                  + (f" ({'; '.join(errors)})" if errors else "") + ": the party stopped or failed")
        wire["up"] += sum(_wire_bytes(r) for r in got.values())
        for node, r in got.items():
            owner_of[node] = (int(r.content["cfg"]["owner"]), str(r.content["cfg"]["name"]))
        order = sorted(nodes, key=lambda node: owner_of[node][0])
        if m is not None:  # the broadcast of the previous iteration, once per iteration as the local log
            records.append(("central", "all owners", BROADCAST[0], list(m.shape), BROADCAST[1], "iteration", k - 1))
        if last:
            for node in (order if bool(cfg["intercepts"]) else []):
                val = _array(got[node].content["final"], "v")
                records.append((owner_of[node][1], "central", FINAL[0], list(val.shape), FINAL[1], "final", K))
            break
        msgs = [_array(got[node].content["msg"], "v") for node in order]
        for node, val in zip(order, msgs, strict=False):
            records.append((owner_of[node][1], "central", msg_name, list(val.shape),
                            _PAPER_UPLINK[y_free][1], "iteration", k))
        sum_msgs = np.sum(msgs, axis=0)
        U, m, w = _central_step(Y, U_prev, None if y_free else sum_msgs, None, sum_msgs, y_free=y_free, rho=rho)
        prim.append(math.sqrt(n) * float(np.linalg.norm(w)))
        U_prev = U
    return {"records": records, "wire_down": wire["down"], "wire_up": wire["up"], "primal": prim}


def _make_client_app():
    from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
    from flwr.clientapp import ClientApp

    app = ClientApp()

    @app.query("anderson")
    def anderson(msg: Message, context: Context) -> Message:
        from .flower_anderson import owner_anderson

        return owner_anderson(msg, context, ConfigRecord, Message, RecordDict)

    @app.query("admm")
    def admm(msg: Message, context: Context) -> Message:
        from .solver import owner_message, owner_update

        own_dir = Path(str(context.node_config["data-dir"]))
        data = np.load(own_dir / OWNER_FILE)  # this owner's own file only
        i, name = int(data["index"]), str(data["name"])
        Z_i, y_i, G_i = data["Z"], data["y"], data["G"]
        rho, y_free = float(data["rho"]), bool(data["y_free"])
        B_i = (_array(context.state["B"], "B") if "B" in context.state else data["B1"])[None]
        if "m" in msg.content:
            solve = _owner_solver(G_i[None], str(data["penalty"]), data["lam"], rho, float(data["inner_tol"]))
            m = _array(msg.content["m"], "m")
            base = _array(context.state["shared"], "B")[None] if "shared" in context.state else B_i
            B_i = owner_update(G_i[None], base, (Z_i.T @ m)[None], solve, B_i)
        context.state["B"] = ArrayRecord({"B": Array(np.ascontiguousarray(B_i[0]))})
        shared, rng = B_i[0], None
        msg_sd = data["message_noise"] if "message_noise" in data else 0.0  # no message noise
        law = ""
        if "coef_noise" in data and (np.any(data["coef_noise"] > 0) or np.any(msg_sd > 0)):
            from engine.privacy.noise import fresh_generator  # OS entropy, in this owner's process only

            from .trace import noise

            rng, law = fresh_generator(), str(data["noise_law"])
            if np.any(data["coef_noise"] > 0):  # (73): B'_i = B_i + noise, the coefficients it shares
                shared = B_i[0] + noise(rng, law, data["coef_noise"], B_i[0].shape)
            if bool(data["noisy_continue"]):  # the next update starts from the shared (noisy) coefficients
                context.state["shared"] = ArrayRecord({"B": Array(np.ascontiguousarray(shared))})
        reply: dict[str, ArrayRecord | MetricRecord | ConfigRecord] = {"cfg": ConfigRecord({"owner": i, "name": name})}
        if bool(msg.content["cfg"]["last"]):
            np.save(own_dir / "var-B.part.npy", B_i[0])
            (own_dir / "var-B.part.npy").replace(own_dir / OWNER_RESULT)  # the owner's own result (its workbook)
            if bool(msg.content["cfg"]["intercepts"]):
                final = data["z_mean"] @ B_i[0]  # (1, n)
                reply["final"] = ArrayRecord({"v": Array(np.ascontiguousarray(final))})
        else:
            val = owner_message(Z_i, shared, y_i, i, y_free=y_free, rho=rho)
            if rng is not None and np.any(msg_sd > 0):  # (74): noise on every message, fresh per message
                val = val + noise(rng, law, msg_sd, val.shape)
            reply["msg"] = ArrayRecord({"v": Array(np.ascontiguousarray(val))})
        return Message(RecordDict(reply), reply_to=msg)

    return app


def __getattr__(name: str):
    """``server_app`` and ``client_app`` built on first use (importing flwr costs ~1 s)."""
    if name == "server_app":
        return _make_server_app()
    if name == "client_app":
        return _make_client_app()
    raise AttributeError(name)


# =============================================================================================
# The estimator's side: files per party, the federation, the result
# =============================================================================================
_PYPROJECT = """[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "{name}"
version = "1.0.0"
description = "PrivaLab collaborative VAR by ADMM: central node (ServerApp) and owners (ClientApps)"
license = "MIT"
dependencies = []

[tool.flwr.app]
publisher = "privalab"

[tool.flwr.app.components]
serverapp = "engine.methods.var_admm.flower_roles:server_app"
clientapp = "engine.methods.var_admm.flower_roles:client_app"

[tool.flwr.app.config]
out = ""
central = ""
n-owners = 0
max-iter = 1
rho = 2.0
y-free = false
intercepts = true
timeout = 60.0
scheme = "paper"
lags = 1
tol = -1.0
atol = 0.0
"""


def write_app(directory: Path) -> Path:
    """The Flower App directory (``pyproject.toml`` naming this module's apps); ``flwr run`` builds it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pyproject.toml").write_text(_PYPROJECT.format(name=APP_NAME))
    return directory


def run_paper_flower(Z: np.ndarray, Y: np.ndarray, G: np.ndarray, *, lags: tuple, penalty: str, lam, rho: float,
                     max_iter: int, init_B: np.ndarray, U0: np.ndarray, variant: str, inner_tol: float,
                     names: list, z_mean_scaled: np.ndarray, intercepts: bool = True, superlink: str | None = None,
                     timeout: float = 120.0, workdir: str | None = None, scales=None,
                     noise: dict | None = None) -> tuple[np.ndarray, dict]:
    """Run the paper's scheme (fixed K = ``max_iter``) over Flower, one SuperNode per owner.

    ``noise``: the defence inside ADMM ((73)/(74), as :func:`~.solver.run_paper` runs it in process):
    ``{"coef": sd on the shared coefficients, "message": sd on every message (data units), "law", "continue"}``;
    ``scales`` (n,) the columns' scales d (internal -> data units). Each owner draws its noise in its own
    process from OS entropy (:func:`engine.privacy.noise.fresh_generator`), so the central node never sees a
    clean message and no seed reaches the noise.

    Z (T, n p) owner-major design and Y (T, n) targets in internal units as :func:`run_paper` gets
    them; owner i's data directory gets only its block Z_i, its column Y[:, i], its Gram G_i, its penalty
    weights and its B_i^1 (init_B (n, p, n)); the central node's file gets U^0 and (base variant, where
    the central node holds Y) Y. The federation is :func:`engine.federation.flower.driver.federation`'s:
    ``superlink=None`` starts a SuperLink and SuperNodes "0" .. "n-1" on 127.0.0.1 and stops them;
    "host:port" uses a local federation started in this process with those parties.

    Returns
    -------
    B (n p, n) in internal units, and info: ``records`` (the rebuilt log rows), ``wire_down``,
    ``wire_up`` (bytes), ``primal`` (r^k per iteration), ``wall`` (seconds from start to result),
    ``start`` (seconds until every SuperNode was registered), ``run`` (seconds of ``flwr run`` to the result),
    ``leftover`` (processes of a federation started here still alive after it stopped).
    """
    _, n = Y.shape
    p = len(lags)
    t0 = time.perf_counter()
    parties = [str(i) for i in range(n)]
    lam = np.asarray(lam, dtype=float)
    noise = {"coef": 0.0, "message": 0.0, "law": "gaussian", "continue": False, **(noise or {})}
    d = np.ones(n) if scales is None else np.asarray(scales, dtype=float)
    with _owners_named(parties, names), flower_federation(parties, superlink=superlink, workdir=workdir) as fed:
        pgids = [proc.pid for proc in fed.processes.values()]
        t_up = time.perf_counter()  # the federation is up: every SuperNode registered
        for i in range(n):
            lam_i = lam[i:i + 1] if lam.ndim >= 1 and lam.shape[0] == n else lam
            # internal units: a coefficient B[i p + q, j] is B_data d_i / d_j, a message column j is m_data / d_j
            np.savez(fed.data_dirs[parties[i]] / OWNER_FILE, index=i, name=str(names[i]),
                     Z=Z[:, i * p:(i + 1) * p], y=Y[:, i], G=G[i], rho=rho, y_free=variant == "y_free",
                     B1=init_B[i], penalty=penalty, lam=lam_i, inner_tol=inner_tol,
                     z_mean=z_mean_scaled[i * p:(i + 1) * p][None], noise_law=str(noise["law"]),
                     coef_noise=float(noise["coef"]) * d[i] / d, message_noise=float(noise["message"]) / d,
                     noisy_continue=bool(noise["continue"]))
        run_dir = Path(tempfile.mkdtemp(prefix="var-run-", dir=fed.workdir))
        np.savez(run_dir / "central.npz", Y=(np.zeros_like(Y) if variant == "y_free" else Y), U0=U0)
        config = {"out": str(run_dir / "result.json"), "central": str(run_dir / "central.npz"), "n-owners": n,
                  "max-iter": int(max_iter), "rho": float(rho), "y-free": variant == "y_free",
                  "intercepts": bool(intercepts), "timeout": float(timeout), "scheme": "paper"}
        result = submit_run(write_app(run_dir / "app"), fed.flwr_home, config, run_dir / "result.json",
                            timeout=timeout * (max_iter + 3), check_alive=fed.check_alive, env=fed.env)
        t_run = time.perf_counter() - t_up
        B = np.concatenate([np.load(fed.data_dirs[q] / OWNER_RESULT) for q in parties], axis=0)
    return B, _timed(result, pgids, superlink, t0, t_up, t_run)


@contextlib.contextmanager
def _owners_named(parties: list, names: list):
    """A ``FederationError`` raised inside names the owner behind each party id ("party 1 (owner site-b) ...")."""
    try:
        yield
    except FederationError as err:
        text = str(err)
        for q, name in zip(parties, names, strict=False):
            text = text.replace(f"party {q} ", f"party {q} (owner {name}) ")
        raise FederationError(text) from err


def _timed(result: dict, pgids: list, superlink: str | None, t0: float, t_up: float, t_run: float) -> dict:
    """``result`` with the run's timings (``wall``, ``start``, ``run``) and the processes left alive (``leftover``:
    those of a federation started here, after it stopped)."""
    result["leftover"] = processes_in_groups(pgids) if superlink is None else []
    result["wall"] = time.perf_counter() - t0
    result["start"], result["run"] = t_up - t0, t_run
    return result


def processes_in_groups(pgids) -> list[int]:
    """Process ids still alive (not zombies) in the given process groups (read from /proc; Linux)."""
    pgids = {int(g) for g in pgids}
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if fields[0] != "Z" and int(fields[2]) in pgids:
            alive.append(int(entry.name))
    return alive


def records_to_log(records: list):
    """The MessageLog rebuilt from the central node's records of the real messages."""
    from .trace import admm_message_log

    log = admm_message_log()
    for sender, receiver, message, shape, what, phase, step in records:
        log.add(sender, receiver, message, tuple(shape), what, phase=phase, step=step)
    return log


def run_anderson_flower(Z: np.ndarray, Y: np.ndarray, G: np.ndarray, *, lags: tuple, penalty: str, lasso_w, ridge_w,
                        max_iter: int, tol, atol: float, init_B: np.ndarray, variant: str, inner_tol: float,
                        names: list, z_mean_scaled: np.ndarray, intercepts: bool = True, superlink: str | None = None,
                        timeout: float = 120.0, workdir: str | None = None) -> tuple[np.ndarray, dict]:
    """The accelerated scheme (:mod:`.anderson_distributed`) over Flower and the run's channel
    (:mod:`.flower_anderson`), one SuperNode per owner; arguments as :func:`~.anderson.run_anderson` gets them
    (``init_B`` (n, p, n) its start). Owner i's directory gets only its block, its target column, its Gram, its
    penalty weights and its start. Returns B (n p, n) in internal units and info (``records``, ``wire_down``,
    ``wire_up``, ``n_iter``, ``converged``, ``dual``, ``eps_dual``, ``eps_primal``, ``round_s`` (seconds of each
    channel round), ``wall``, ``start``, ``run``, ``hello_s``, ``connect_s``, ``leftover``)."""
    from .anderson import anderson_memory
    from .flower_anderson import ANDERSON_FILE

    _T, n = Y.shape
    p = len(lags)
    t0 = time.perf_counter()
    stamps: dict[str, float | None] = {"fit_start": time.time()}
    parties = [str(i) for i in range(n)]
    with _owners_named(parties, names), flower_federation(parties, superlink=superlink, workdir=workdir) as fed:
        pgids = [proc.pid for proc in fed.processes.values()]
        t_up = time.perf_counter()
        stamps["federation_up"] = time.time()
        for i in range(n):
            np.savez(fed.data_dirs[parties[i]] / ANDERSON_FILE, index=i, name=str(names[i]), n=n,
                     Z=Z[:, i * p:(i + 1) * p], y=Y[:, i], G=G[i], B1=init_B[i], penalty=penalty,
                     lasso_w=np.zeros(0) if lasso_w is None else np.asarray(lasso_w)[i],
                     ridge_w=np.zeros(0) if ridge_w is None else np.asarray(ridge_w)[i], inner_tol=inner_tol,
                     memory=anderson_memory(p), y_free=variant == "y_free",
                     z_mean=z_mean_scaled[i * p:(i + 1) * p][None])
        run_dir = Path(tempfile.mkdtemp(prefix="var-run-", dir=fed.workdir))
        np.savez(run_dir / "central.npz", Y=(np.zeros_like(Y) if variant == "y_free" else Y))
        submitted: dict = {}
        config = {"out": str(run_dir / "result.json"), "central": str(run_dir / "central.npz"), "n-owners": n,
                  "max-iter": int(max_iter), "y-free": variant == "y_free", "intercepts": bool(intercepts),
                  "timeout": float(timeout), "scheme": "anderson", "lags": p,
                  "tol": -1.0 if tol is None else float(tol), "atol": float(atol)}
        result = submit_run(write_app(run_dir / "app"), fed.flwr_home, config, run_dir / "result.json",
                            timeout=timeout * 4 + 60, check_alive=fed.check_alive, env=fed.env, submitted=submitted)
        t_run = time.perf_counter() - t_up
        stamps.update(flwr_run_issued=submitted.get("issued"), flwr_run_accepted=submitted.get("accepted"),
                      result=time.time())
        B = np.concatenate([np.load(fed.data_dirs[q] / OWNER_RESULT) for q in parties], axis=0)
    stamps["stopped"] = time.time()
    result["stamps"] = {**stamps, **result.get("stamps", {})}
    return B, _timed(result, pgids, superlink, t0, t_up, t_run)
