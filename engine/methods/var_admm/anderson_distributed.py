"""The accelerated VAR ADMM (:mod:`.anderson`) split into what each owner computes and what the central node decides.

The same iteration as :func:`~.anderson.run_anderson` (ρ = n, safeguarded block Anderson mixing, Boyd's rule
plus the step test), with every quantity either an owner's own or a sum over owners (performance review
2026-11-27, 1.5):

- the broadcast m = (Y - Σ_i Z_i P_i)/n from the owners' contributions (or, variant ``y_free``, Σ_i d_i);
- the dual residual s² = ρ² Σ_i tr(f_iᵀ G_i f_i), the objective's penalty Σ_i pen_i(P_i), ||Σ P_i' G_i P_i||:
  one scalar per owner, only their sums are used;
- the Anderson weights Γ = argmin ||f - ΔF Γ|| from the pooled normal equations
  ΔFᵀΔF = Σ_i ΔF_iᵀΔF_i and ΔFᵀf = Σ_i ΔF_iᵀ f_i (small w x w and w x n pieces; ΔF_i itself never leaves);
- the step test max_i max|P_i^new - B_i| against max_i max|B_i|.

So an owner sends its contribution Z_i P_i (T x n), three scalars, two small Gram pieces and two maxima per
iteration, and receives m, the decision and Γ: two rounds per iteration. The Anderson weights come from the
normal equations rather than a QR of ΔF (the central node never holds ΔF), cut at ``GRAM_RCOND``; the iterates
therefore differ from the in-process run by rounding, and the converged fits agree to the stopping tolerance.

:class:`Owner` and :class:`Central` hold the state; :func:`run_in_process` drives them in one process (the
tests' oracle for the protocol), :mod:`.flower_roles` drives them over the run's channel. Hand-written: no kept
library runs a features-split ADMM. No streamlit here.
"""
from __future__ import annotations

import math

import numpy as np

from .anderson import _owner_step

__all__ = ["GRAM_RCOND", "Central", "Owner", "run_in_process"]

GRAM_RCOND = 1e-14  # eigenvalues of ΔFᵀΔF below this times the largest are cut (singular values of ΔF at 1e-7)


class Owner:
    """Owner i's side: its block Z_i (T, p), Gram G_i (p, p), its target column (variant ``y_free``) and its
    coefficients (p, n); everything else it sees is the central node's broadcasts."""

    def __init__(self, index: int, Z_i, G_i, y_i, B1_i, *, n: int, penalty: str, lasso_w_i=None, ridge_w_i=None,
                 inner_tol: float, memory: int, y_free: bool):
        self.index, self.n, self.y_free = int(index), int(n), bool(y_free)
        self.Z, self.G, self.y = np.asarray(Z_i, float), np.asarray(G_i, float), np.asarray(y_i, float)
        rho = float(n)
        lw = None if lasso_w_i is None else np.asarray(lasso_w_i, float)[None]
        rw = None if ridge_w_i is None else np.asarray([ridge_w_i], float)
        self.solve, self.lam, self.ridge = _owner_step(self.G[None], penalty, lw, rw, rho, inner_tol)
        self.memory = int(memory)
        self.point = np.asarray(B1_i, float).copy()
        self.hist_f: list[np.ndarray] = []
        self.hist_g: list[np.ndarray] = []
        self.B_cur: np.ndarray | None = None  # the kept point and its plain step: set by keep()
        self.g_cur: np.ndarray | None = None
        self._f: np.ndarray | None = None  # the evaluated point's step and plain step: set by evaluate()
        self._g: np.ndarray | None = None

    def contribution(self) -> np.ndarray:
        """Z_i P_i (T, n), or ``y_free``: d_i = (I_Yi - Z_i P_i)/n (own target column minus own contribution)."""
        u = self.Z @ self.point
        if not self.y_free:
            return u
        d = -u
        d[:, self.index] += self.y
        return d / self.n

    def _penalty(self, B) -> float:
        if self.lam is not None:
            return float(np.sum(self.lam[0] * np.abs(B)))
        if self.ridge is not None:
            return 0.5 * float(self.ridge[0] * np.sum(B * B))
        return 0.0

    def evaluate(self, m: np.ndarray) -> dict:
        """The plain step at the current point given m = R/n: own scalars and, as if the point is kept, the
        Anderson pieces ΔF_iᵀΔF_i, ΔF_iᵀ f_i (None with too little history)."""
        C = self.G @ self.point + self.Z.T @ m
        g = self.solve(C[None], self.point[None])[0]
        f = g - self.point
        self._f, self._g = f, g
        hist = ([*self.hist_f, f])[-(self.memory + 1):]
        out = {"q": float(np.einsum("pn,pq,qn->", f, self.G, f)), "pen": self._penalty(self.point),
               "pq": float(np.einsum("pn,pq,qn->", self.point, self.G, self.point)), "M": None, "b": None}
        if len(hist) >= 2:
            dF = np.concatenate([hist[j + 1] - hist[j] for j in range(len(hist) - 1)], axis=1)  # (p, w)
            out["M"], out["b"] = dF.T @ dF, dF.T @ f
        return out

    def reject(self) -> np.ndarray:
        """The mixed point raised the objective: history cleared, back to the plain step from the kept point."""
        self.hist_f.clear()
        self.hist_g.clear()
        assert self.g_cur is not None, "reject() before any point was kept"
        self.point = self.g_cur
        return self.contribution()

    def keep(self) -> None:
        """Keep the evaluated point (the last iteration: its plain step is the result)."""
        self.B_cur, self.g_cur = self.point, self._g

    def accept(self, gamma) -> dict:
        """Keep the point; the next one is g - ΔG Γ (Γ None: the plain step g). Returns the next contribution
        and the step test's maxima."""
        self.keep()
        assert self._f is not None and self._g is not None and self.B_cur is not None, "accept() before evaluate()"
        self.hist_f.append(self._f)
        self.hist_g.append(self._g)
        if len(self.hist_f) > self.memory + 1:
            self.hist_f.pop(0)
            self.hist_g.pop(0)
        if gamma is None:
            self.point = self._g
        else:
            dG = np.concatenate([self.hist_g[j + 1] - self.hist_g[j] for j in range(len(self.hist_g) - 1)], axis=1)
            self.point = self._g - dG @ np.asarray(gamma, float)
        return {"u": self.contribution(), "step": float(np.max(np.abs(self.point - self.B_cur))),
                "size": float(np.max(np.abs(self.B_cur)))}

    def result(self) -> np.ndarray:
        """The fit's coefficients of this owner (p, n): the last plain step from the kept point."""
        assert self.g_cur is not None, "result() before any point was kept"
        return self.g_cur


class Central:
    """The central node's side: the broadcast, the sums, the safeguard, Γ and the stopping rule."""

    def __init__(self, Y, *, n: int, p: int, T: int, tol, atol: float, max_iter: int, y_free: bool):
        self.Y = None if y_free else np.asarray(Y, float)
        self.n, self.p, self.tol, self.max_iter, self.atol = int(n), int(p), tol, int(max_iter), float(atol)
        self.abs_term = math.sqrt(T * n * n) * float(atol)
        self.obj_cur: float | None = None  # the kept point's objective
        self.mixed = False
        self.k, self.converged, self.rejected = 0, False, 0
        self.dual: list[float] = []
        self.eps_dual: list[float] = []
        self.eps_primal: list[float] = []

    def broadcast(self, contributions: list) -> np.ndarray:
        """m = R/n from the owners' contributions (only their sum is used)."""
        total = np.sum(contributions, axis=0)
        self._R = total * self.n if self.Y is None else self.Y - total
        return self._R / self.n

    def decide(self, reports: list) -> tuple[str, np.ndarray | None]:
        """After the owners' ``evaluate``: ("reject", None), ("stop", None) or ("accept", Γ or None)."""
        self.k += 1
        rho = float(self.n)
        s = rho * math.sqrt(max(sum(r["q"] for r in reports), 0.0))
        R_norm = float(np.linalg.norm(self._R))
        e_dual = self.abs_term + (self.tol or 0.0) * math.sqrt(self.n) * R_norm
        self.dual.append(s)
        self.eps_dual.append(e_dual)
        self.eps_primal.append(self.abs_term + (self.tol or 0.0) * math.sqrt(max(sum(r["pq"] for r in reports), 0)))
        obj = 0.5 * R_norm ** 2 + sum(r["pen"] for r in reports)
        self._s, self._e_dual = s, e_dual
        if self.mixed and self.obj_cur is not None and obj > self.obj_cur + 1e-12 * abs(self.obj_cur):
            self.rejected += 1
            self.mixed = False
            return "reject", None
        self.obj_cur = obj
        if self.k >= self.max_iter:
            return "stop", None
        if reports[0]["M"] is None:
            self.mixed = False
            return "accept", None
        M = np.sum([r["M"] for r in reports], axis=0)
        b = np.sum([r["b"] for r in reports], axis=0)
        self.mixed = True
        return "accept", np.linalg.lstsq(M, b, rcond=GRAM_RCOND)[0]

    def converged_after(self, steps: list) -> bool:
        """The step test after an accepted mixed step (Boyd's rule held at the kept point)."""
        if self.tol is None or not self.mixed or self._s > self._e_dual:
            return False
        step = max(s["step"] for s in steps)
        size = max(s["size"] for s in steps)
        self.converged = step <= 0.1 * self.tol * max(size, self.atol)
        return self.converged


def run_in_process(owners: list, central: Central) -> np.ndarray:
    """Drive the owners and the central node in this process (the oracle of the transported protocol): the same
    calls in the same order as over the channel. Returns B (n p, n) owner-major."""
    m = central.broadcast([o.contribution() for o in owners])
    while True:
        decision, gamma = central.decide([o.evaluate(m) for o in owners])
        if decision == "stop":
            for o in owners:
                o.keep()
            break
        if decision == "reject":
            m = central.broadcast([o.reject() for o in owners])
            continue
        steps = [o.accept(gamma) for o in owners]
        if central.converged_after(steps):
            break
        m = central.broadcast([s["u"] for s in steps])
    return np.concatenate([o.result() for o in owners], axis=0)
