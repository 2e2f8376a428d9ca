"""The clean part of an edPLS fit and its private draws (``_Prepared``), shared by fits, replicates and sweeps.

A ``_Prepared`` holds everything about a fit that does not depend on the noise: the clean NIPALS path
(paper mode, ``core``) or the clipped, scaled rows and their Gram matrix (strict mode, ``strict``). Its
``draw`` turns them into R private releases at once (noise drawn in one block per fit, in diPLSlib's order
w, t, p, c per component for paper mode; Analyze-Gauss on Z'Z for strict mode) and, for a fit (R = 1, a
``ledger`` given), records them in that ledger in the same call; ``noise_table`` says which noise was applied and
``ledger`` is the record one draw makes (for replicates and sweeps, which draw many and record none).

Written by hand (see ``engine.methods.edpls``): no library batches edPLS releases over replicates.
"""
from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np
import pandas as pd

from engine.methods.column_checks import column_label
from engine.methods.edpls.core import QUANTITIES, _batched_solve, _nipals_path, _PaperPath, _per_release_budget
from engine.methods.edpls.strict import (
    _STRICT_CHUNK_ENTRIES,
    STRICT_RELEASE,
    _strict_postprocess,
    _strict_state,
    _StrictState,
)
from engine.privacy import SEED_KNOWN_CAVEAT, PrivacyLedger, Release, noise_scale, resolve_calibration
from engine.privacy.mechanisms import draw_noise
from engine.privacy.moments import MomentsRelease
from engine.threads import one_blas_thread


class _Prepared:
    """Everything about a fit that does not depend on the noise (and, in paper mode, on eps)."""

    def __init__(self, est, X: np.ndarray, y: np.ndarray, K: int, info: dict | None = None):
        """est: the EDPLS whose parameters apply; X, y: checked float64 arrays; K: components of the clean path."""
        self.params = est.get_params(deep=False)
        self.mode = est.mode
        self.n, self.m = X.shape
        self.K = int(K)
        #: column names and per-column scales of the input (for messages that name a column)
        self.info = info or {}
        x_stats, y_stats = self.info.get("x_stats"), self.info.get("y_stats")
        self.path: _PaperPath | None  # paper mode
        self.strict: _StrictState | None  # strict mode
        if self.mode == "paper":
            self.path = _nipals_path(X, y, self.K, centring=est.centering, ymax_rule=est.ymax,
                                     x_largest=None if x_stats is None else x_stats.largest,
                                     y_largest=None if y_stats is None else y_stats.largest,
                                     y_label=self.info.get("y_label", "y"))
            self.strict = None
        else:
            self.path = None
            self.strict = _strict_state(
                X, y, x_bound=est.x_bound, y_bound=est.y_bound, centering=est.centering,
                x_center=est.x_center, y_center=est.y_center, x_names=self.info.get("x_names"),
                private_intercept=est.private_intercept,
            )
        self._clean: dict[tuple | str, Any] = {}  # cache: ("noise", k, eps), ("clean", k); "gram" (chunked)

    @property
    def paper(self) -> _PaperPath:
        """The paper mode's NIPALS path."""
        assert self.path is not None, "a strict fit has no NIPALS path"
        return self.path

    @property
    def state(self) -> _StrictState:
        """The strict mode's clipped, scaled rows and their Gram matrix."""
        assert self.strict is not None, "a paper fit has no strict state"
        return self.strict

    def scale_problem(self) -> str:
        """Why outputs in data units left float64's range: the columns whose scales combine badly."""
        info = self.info
        xs, ys = info.get("x_stats"), info.get("y_stats")
        if xs is None or ys is None:
            return "the data's scale"
        nz = np.where(xs.absmax > 0, xs.absmax, np.inf)
        j_small, j_big = int(np.argmin(nz)), int(np.argmax(xs.absmax))
        names = info.get("x_names")
        return (f"{info.get('y_label', 'y')} (values up to {ys.largest:.3g}) against "
                f"{column_label('X', j_small, names)} (up to {xs.absmax[j_small]:.3g}) and "
                f"{column_label('X', j_big, names)} (up to {xs.absmax[j_big]:.3g})")

    # ------------------------------------------------------------------ noise tables
    def noise_arrays(self, k: int, epsilon: float):
        """Paper mode: (sensitivity, sigma, std_applied) arrays of shape (k, 4), and (eps_i, delta_i).
        Computed once per (k, epsilon) (a fit asks three times: draw, noise record, ledger)."""
        key = ("noise", int(k), float(epsilon))
        if key not in self._clean:
            self._clean[key] = self._noise_arrays(k, epsilon)
        return self._clean[key]

    def _noise_arrays(self, k: int, epsilon: float):
        p, path = self.params, self.paper
        sens = np.maximum(np.column_stack([path.xmax * path.ymax, path.xmax, path.xmax, path.ymax])[:k], 0.0)
        if math.isinf(float(epsilon)):
            unit, eps_i, delta_i = 0.0, math.inf, 0.0
        else:
            eps_i, delta_i = _per_release_budget(epsilon, p["delta"], k, p["budget"])
            unit = noise_scale("gaussian", eps_i, delta_i, 1.0, p["calibration"])  # sigma is linear in it
        with np.errstate(over="ignore", invalid="ignore"):
            sig = unit * sens
            applied = sig if p["noise_std"] == "sigma" else sig**2
        if not (np.all(np.isfinite(sens)) and np.all(np.isfinite(applied))):
            raise ValueError(
                "overflow: the noise std of the paper's releases (calibrated to sensitivities in data units, max |y| "
                f"times max ||x||{', squared as in the authors code' if p['noise_std'] != 'sigma' else ''}) is not a "
                f"finite float64 number for {self.scale_problem()}; rescale the data (other units)")
        return sens, sig, applied, (eps_i, delta_i)

    def noise_record(self, k: int, epsilon: float) -> dict:
        """The noise of a fit as plain numbers (no pandas): what ``noise_frame`` turns into the long table.

        Paper mode: ``sensitivity``, ``sigma``, ``std_applied`` arrays (k, 4) and the per-release
        ``epsilon``, ``delta``; strict mode: the one release's floats and the row scale S."""
        p = self.params
        if self.mode == "strict":
            eps = float(epsilon)
            sig = self.strict_release(eps).sigma  # 0 for eps = inf
            return {"mode": "strict", "sensitivity": self.state.sensitivity, "sigma": sig, "scale": self.state.scale,
                    "epsilon": eps, "delta": p["delta"] if sig else 0.0}
        sens, sig, applied, (eps_i, delta_i) = self.noise_arrays(k, epsilon)
        return {"mode": "paper", "sensitivity": sens, "sigma": sig, "std_applied": applied, "epsilon": eps_i,
                "delta": delta_i}

    def noise_table(self, k: int, epsilon: float) -> pd.DataFrame:
        """Long table: one row per component and quantity (paper) or one row (strict)."""
        return noise_frame(self.noise_record(k, epsilon))

    def strict_release(self, epsilon: float) -> MomentsRelease:
        """The one Analyze-Gauss release of the strict mode, (eps, delta) at the exact sensitivity of the
        released upper triangle of Z'Z (``strict_sensitivity``); sigma = 0 for eps = inf."""
        p = self.params
        return MomentsRelease(float(epsilon), p["delta"], self.state.sensitivity, p["calibration"])

    # ------------------------------------------------------------------ draws
    def draw(self, k: int, epsilon: float, n_replicates: int, rng, *, keep_raw: bool = False,
             want_scores: bool = True, ledger: PrivacyLedger | None = None) -> dict:
        """R private releases (noise only; the clean part is shared). Arrays have a leading R axis.

        ``ledger``: a fit's ledger (one release: R = 1). The draw records its releases there in the same call
        (strict mode: the mechanism's own ``MomentsRelease.randomise(..., ledger=)``); nothing at epsilon = inf.
        The fit's caveats are ``add_caveats``'s. Without it (replicates, sweeps) nothing is recorded.
        """
        if not 1 <= k <= self.K:
            raise ValueError(f"k must be in 1..{self.K}")
        R = int(n_replicates)
        if ledger is not None and R != 1:
            raise ValueError("a ledger records one release: draw replicates without a ledger")
        if self.mode == "strict":
            return self._draw_strict(k, epsilon, R, rng, ledger)
        out = self._draw_paper(k, epsilon, R, rng, keep_raw=keep_raw, want_scores=want_scores)
        if ledger is not None and not math.isinf(float(epsilon)):
            for rel in self._paper_releases(k, epsilon):  # the std applied above is these records' own
                ledger.add(rel)
        return out

    def _draw_paper(self, k, epsilon, R, rng, *, keep_raw, want_scores) -> dict:
        path, m, n = self.paper, self.m, self.n
        W0, T0, P0, c0 = path.W[:, :k].T, path.T[:, :k].T, path.P[:, :k].T, path.c[:k]
        noisy = not math.isinf(float(epsilon))
        out: dict[str, Any] = {}
        if noisy:
            applied = self.noise_arrays(k, epsilon)[2]
            # One block per fit, in diPLSlib's order w (m), t (n), p (m), c (1) per component; the
            # noisy releases are formed in place in the random block (no further (R, k, m) arrays).
            Z = draw_noise("gaussian", 1.0, (R, k, 2 * m + n + 1), rng)  # the one draw (scaled below)
            Wr = Z[..., :m]
            Wr *= applied[:, 0, None]
            Wr += W0
            Pd = Z[..., m + n:2 * m + n]
            Pd *= applied[:, 2, None]
            Pd += P0
            cd = Z[..., 2 * m + n]
            cd *= applied[:, 3]
            cd += c0
            if want_scores:
                Tr = Z[..., m:m + n]
                Tr *= applied[:, 1, None]
                Tr += T0
            else:
                Tr = None
        else:
            Wr = np.broadcast_to(W0, (R, k, m)).copy()
            Pd = np.broadcast_to(P0, (R, k, m)).copy()
            cd = np.broadcast_to(c0, (R, k)).copy()
            Tr = np.broadcast_to(T0, (R, k, n)).copy() if want_scores else None
        if keep_raw:
            out["W_raw"] = Wr.copy()
            out["T_raw"] = None if Tr is None else Tr.copy()
        Wd = _normalise_rows(Wr)
        Td = None if Tr is None else _normalise_rows(Tr)
        M = np.matmul(Pd, Wd.transpose(0, 2, 1))  # (R, k, k) = P_dp' W_dp
        sol = _batched_solve(M, cd)
        coef = np.matmul(sol[:, None, :], Wd)[:, 0, :]
        intercept = path.y_mean - coef @ path.x_mean
        cond = np.full(R, np.nan)
        ok = np.isfinite(M).all(axis=(1, 2))
        with np.errstate(all="ignore"):
            cond[ok] = np.linalg.cond(M[ok]) if ok.any() else cond[ok]
        out.update({
            "coef": coef, "intercept": intercept, "W": Wd.transpose(0, 2, 1), "P": Pd.transpose(0, 2, 1),
            "c": np.array(cd), "T": None if Td is None else Td.transpose(0, 2, 1), "cond": cond,
            "x_mean": np.broadcast_to(path.x_mean, (R, m)), "y_mean": np.full(R, path.y_mean),
        })
        return out

    def _gram(self) -> np.ndarray:
        G = self.state.gram
        assert G is not None, "a chunked fit reads its Gram matrix from _ChunkedPrepared"
        return G

    @one_blas_thread()
    def _draw_strict(self, k, epsilon, R, rng, ledger: PrivacyLedger | None = None) -> dict:
        """Analyze-Gauss releases of Z'Z at the exact sensitivity (``strict_release``): the Gram matrix is
        computed once and the symmetric noise drawn in chunks of replicates (``MomentsRelease.iter_noisy``); a
        fit's one release (``ledger`` given, R = 1) is drawn and recorded by ``MomentsRelease.randomise``, the
        same stream as one chunk.

        One BLAS thread: this is d x d work (the PSD projection's eigendecomposition, PLS1 from the moments).
        With OpenBLAS's threads a fit on 700 channels took 1.0-1.7 s of CPU and 7-18 s of wall time on 2 busy
        cores (spin-waiting threads), against 0.12 s of CPU with one; the n x d Gram keeps the threads."""
        state = self.state
        if math.isinf(float(epsilon)):
            key = ("clean", k)
            if key not in self._clean:
                self._clean[key] = _strict_postprocess(self._gram()[None], state, k, noisy=False)
            one = self._clean[key]
            return {name: (None if v is None else np.repeat(v, R, axis=0)) for name, v in one.items()}
        release = self.strict_release(epsilon)
        if ledger is not None:
            chunks = iter([release.randomise(self._gram(), 1, rng, ledger=ledger, name=STRICT_RELEASE,
                                             **self._strict_record_args())])
        else:
            chunks = release.iter_noisy(self._gram(), R, rng, max_entries=_STRICT_CHUNK_ENTRIES)
        parts = [_strict_postprocess(G, state, k, noisy=True) for G in chunks]
        return {name: (None if parts[0][name] is None else np.concatenate([q[name] for q in parts]))
                for name in parts[0]}

    # ------------------------------------------------------------------ ledger
    def ledger(self, k: int, epsilon: float, *, seed_known: bool = False) -> PrivacyLedger:
        """The ledger one draw at (k, epsilon) records (``draw(..., ledger=)``) with the fit's caveats
        (``add_caveats``), for replicates and sweeps, which draw many releases and record none. Empty for
        epsilon = inf (no privacy). Notes carry no private number (no clip count, no data-derived bound)."""
        led = PrivacyLedger()
        if math.isinf(float(epsilon)):
            return led
        releases = [self._strict_release(epsilon)] if self.mode == "strict" else self._paper_releases(k, epsilon)
        for rel in releases:
            led.add(rel)
        return self.add_caveats(led, seed_known=seed_known)

    def add_caveats(self, led: PrivacyLedger, *, seed_known: bool = False) -> PrivacyLedger:
        """``led`` with the caller's caveats (``EDPLS.caveats``) and, when the noise came from a known seed,
        ``SEED_KNOWN_CAVEAT``; none at epsilon = inf (an empty ledger: no privacy claimed)."""
        if not len(led):
            return led
        for reason in self.params.get("caveats") or ():
            reason = str(reason)
            led.add_caveat(reason if reason.startswith("not proven: ") else f"not proven: {reason}")
        if seed_known:
            led.add_caveat(SEED_KNOWN_CAVEAT)
        return led

    def _strict_release(self, epsilon: float) -> Release:
        """The record of the one Analyze-Gauss release of a strict fit (as ``_draw_strict`` records it)."""
        return self.strict_release(epsilon).record(STRICT_RELEASE, **self._strict_record_args())

    def _strict_record_args(self) -> dict:
        """Sensitivity source and note of the strict release's ledger record."""
        state = self.state
        if state.private_centring:
            what = "[x, y, a] (constant column a: private centring from the same release)"
        elif state.centring:
            what = "[x - x_center, y - y_center] (public centre)"
        else:
            what = "[x, y] (no centring)"
        from_data = self.params.get("sensitivity_source", "public") == "data"
        return dict(
            sensitivity_source="data" if from_data else "public",
            note=(f"Analyze-Gauss on the upper triangle of Z'Z, Z = {what} scaled into the unit ball; "
                  "add/remove neighbours; rows clipped to ||x|| <= x_bound and |y| <= y_bound; exact "
                  "worst-case sensitivity (strict_sensitivity). PLS1 from the noisy moments (PSD-projected) "
                  "is post-processing."
                  + (" The bounds were read off the private rows, so this is not a proven guarantee."
                     if from_data else "")),
        )

    def _paper_releases(self, k: int, epsilon: float) -> list[Release]:
        """The 4k releases of a paper-mode fit, sensitivities from the private data (claimed, not proven)."""
        p = self.params
        eps_i, delta_i = _per_release_budget(epsilon, p["delta"], k, p["budget"])
        calibration = resolve_calibration(p["calibration"], eps_i)  # "auto" is recorded as what it resolved to
        note = (f"paper Algorithm 1, sensitivity from the private data ({'max|f|' if p['ymax'] == 'abs' else 'max f'}"
                f" for y); std applied = {'sigma' if p['noise_std'] == 'sigma' else 'sigma^2 (authors code)'}")
        out = []
        sens, _, applied, _ = self.noise_arrays(k, epsilon)
        for a in range(k):  # the order of the long noise table: component, then quantity
            for j, quantity in enumerate(QUANTITIES):
                name, s_j, std_j = f"{quantity}[{a + 1}]", float(sens[a, j]), float(applied[a, j])
                if p["noise_std"] == "sigma" or s_j == 0:
                    out.append(Release(name=name, mechanism="gaussian", sensitivity=s_j, scale=std_j,
                                       epsilon=eps_i, delta=delta_i, calibration=calibration,
                                       sensitivity_source="data", note=note, claimed_epsilon=eps_i,
                                       claimed_delta=delta_i))
                else:
                    out.append(Release.gaussian(name=name, sigma=std_j, sensitivity=s_j, delta=delta_i,
                                                claimed_epsilon=eps_i, claimed_delta=delta_i,
                                                calibration=calibration, sensitivity_source="data", note=note))
        return out


def noise_frame(record: dict) -> pd.DataFrame:
    """The long noise table of a ``noise_record``: one row per component and quantity (paper) or one row
    "ZtZ" (strict)."""
    if record["mode"] == "strict":
        sig = record["sigma"]
        return pd.DataFrame([{
            "component": 0, "quantity": "ZtZ", "sensitivity": record["sensitivity"], "sigma": sig,
            "std_applied": sig, "std_data_units": sig * record["scale"]**2, "epsilon": record["epsilon"],
            "delta": record["delta"],
        }])
    sens = record["sensitivity"]
    k = sens.shape[0]
    return pd.DataFrame({
        "component": np.repeat(np.arange(1, k + 1), 4), "quantity": list(QUANTITIES) * k,
        "sensitivity": sens.ravel(), "sigma": record["sigma"].ravel(), "std_applied": record["std_applied"].ravel(),
        "epsilon": record["epsilon"], "delta": record["delta"],
    })


def noise_wide(record: dict, column: str | list) -> pd.DataFrame:
    """One column of the noise table in wide form: index component, columns w, t, p, c (paper; built from the
    arrays directly, no pivot) or index quantity "ZtZ" with the given columns (strict)."""
    if record["mode"] == "strict":
        cols = [column] if isinstance(column, str) else list(column)
        return noise_frame(record).set_index("quantity")[cols]
    values = {"std_applied": record["std_applied"], "sigma": record["sigma"], "sensitivity": record["sensitivity"]}
    assert isinstance(column, str), "the paper mode's wide table takes one column"
    arr = values[column]
    index = pd.Index(np.arange(1, arr.shape[0] + 1), name="component")
    return pd.DataFrame(np.array(arr), index=index, columns=pd.Index(list(QUANTITIES), name="quantity"))


def _normalise_rows(A: np.ndarray) -> np.ndarray:
    """A / ||A|| along the last axis, in place; rows whose entries are far from 1 (a noise std near the top of
    float64's range, in data units) are first divided by their largest |entry|, so squaring cannot overflow."""
    top = np.abs(A).max(axis=-1, keepdims=True)
    if np.any(top > 2.0**256) or np.any((top < 2.0**-256) & (top > 0)):
        A /= np.where(top > 0, top, 1.0)
    A /= np.sqrt(np.einsum("...i,...i->...", A, A))[..., None]
    return A


def _check_finite_fit(prep: _Prepared, out: dict, k: int, eps: float) -> None:
    """A single fit returns finite numbers or a ValueError that says why (never silent NaN or inf).

    Causes: the coefficients in data units (y units per X unit) leave float64's range; the noisy k x k
    system P_dp' W_dp is exactly singular. (A paper-mode noise std that overflows is refused earlier, by
    ``_Prepared.noise_arrays``.)
    """
    parts = [out["coef"], out["intercept"], out["W"], out["P"], out["c"]]
    if all(np.all(np.isfinite(np.asarray(a, dtype=float))) for a in parts):
        return
    if not (np.all(np.isfinite(out["coef"])) and np.isfinite(out["intercept"]).all()):
        if prep.mode == "paper" and np.all(np.isfinite(out["W"])) and np.all(np.isfinite(out["P"])):
            with np.errstate(all="ignore"):
                M = np.asarray(out["P"][0]).T @ np.asarray(out["W"][0])
                singular = not np.isfinite(np.linalg.cond(M)) if np.all(np.isfinite(M)) else False
            if singular and not math.isinf(eps):
                raise ValueError("the noisy system P_dp' W_dp is singular for this draw: no coefficients exist; "
                                 "fit again (fresh noise) or use fewer components")
        raise ValueError(
            "overflow: the coefficients in data units (y units per X unit) leave float64's range for "
            f"{prep.scale_problem()}; rescale y or X (other units)")
    raise ValueError(f"overflow: the released loadings are not finite for {prep.scale_problem()}; rescale the data")


def _small_blas(mode: str):
    """Paper-mode replicate work is many small products: run them with one BLAS thread (thread start-up
    per call costs more than it saves, badly so on a loaded machine). Strict mode's draws limit themselves
    (``_Prepared._draw_strict``)."""
    return one_blas_thread() if mode == "paper" else contextlib.nullcontext()
