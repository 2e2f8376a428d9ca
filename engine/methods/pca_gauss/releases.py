"""The releases of one PCA-Gauss fit: the projection W (spec 2.4) and the Gaussian stage (Algorithms 1-3).

A mixin of :class:`PCAGauss` (the estimator module holds parameters, ``fit`` and sampling): every noisy
release goes through ``engine.privacy`` into ``privacy_ledger_`` and one row of ``noise_log_``. Written by hand
from the paper (no public code exists).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from engine.privacy import LaplaceMechanism, Neighbouring, PrivacyLedger
from engine.privacy.moments import (
    MomentsRelease,
    add_remove_sensitivity,
    replace_one_sensitivity,
)

from .sampling import _sampling_covariance
from .sensitivity import CAVEATS, alg3_class_moments, sensitivities, top_eigenvectors


class _BoxRows:
    """The private statistics the releases read, from the box rows in memory (the lazy path sums the same ones).

    Parameters
    ----------
    Xs : (N, M) rows in the [-1, 1] box. ys : (N,) scaled response (regression) or None.
    y_idx : (N,) class index of each row (classification; set before the class statistics are read) or None.
    """

    def __init__(self, Xs, ys=None, y_idx=None):
        self.Xs, self.ys, self.y_idx = Xs, ys, y_idx
        self.N, self.M = Xs.shape
        self.Z = None

    def xtx(self) -> np.ndarray:
        """Xs'Xs (M, M)."""
        return self.Xs.T @ self.Xs

    def ag_gram(self, symmetric: bool = True) -> np.ndarray:
        """U'U with U = Xs / sqrt(M) (the AG-PCA query), exactly symmetric unless told not to."""
        U = self.Xs / math.sqrt(self.M)
        return MomentsRelease.gram(U) if symmetric else U.T @ U

    def project(self, W, norm) -> None:
        """Z = Xs W / norm (N, P): the released space."""
        self.Z = self.Xs @ W / norm

    @property
    def P(self) -> int:
        return self.Z.shape[1]

    @property
    def d_v(self) -> int:
        """Width of V = [Z, ys] (P + 1 for regression)."""
        return self.P + (self.ys is not None)

    def _v(self):
        return self.Z if self.ys is None else np.column_stack([self.Z, self.ys])

    def v_gram(self) -> np.ndarray:
        return MomentsRelease.gram(self._v())

    def v_mean(self) -> np.ndarray:
        return self._v().mean(axis=0)

    def class_counts(self, L: int) -> np.ndarray:
        return np.bincount(self.y_idx, minlength=L).astype(float)

    def class_rows(self, c: int) -> np.ndarray:
        return self.Z[self.y_idx == c]

    def class_sums(self, L: int) -> tuple:
        """Per class: the sums of Z (L, P) and the second moments Z_c'Z_c (L, P, P)."""
        Z, idx = self.Z, self.y_idx
        return (np.stack([Z[idx == c].sum(axis=0) for c in range(L)]),
                np.stack([Z[idx == c].T @ Z[idx == c] for c in range(L)]))


class _ReleaseSteps:
    """Mixin of :class:`PCAGauss`: ledger helpers, the W sources and the Gaussian stage of ``fit``.

    Expects ``fit`` to have set ``privacy_ledger_``, ``_noise_rows`` and ``_sens_source`` first.
    """

    # set by PCAGauss (its parameters, then fit): declared for the type checker only
    components: Any
    ag_neighbouring: str
    privacy_ledger_: PrivacyLedger
    _noise_rows: list[dict[str, Any]]
    _sens_source: str

    def _noisy(self, name, value, eps, sensitivity, rng, *, true_eps=None, log_extra=None):
        """value + Laplace noise of scale sensitivity/eps (none for eps = inf). Returns (noisy, mechanism)."""
        value = np.asarray(value, dtype=float)
        row = {"release": name, "sensitivity": float(sensitivity), **(log_extra or {})}
        if not math.isfinite(eps):
            self._noise_rows.append({**row, "mechanism": "none (ε = ∞)", "scale": 0.0, "epsilon": math.inf,
                                     "delta": 0.0})
            return value.copy(), None
        mech = LaplaceMechanism(true_eps if true_eps is not None else eps, float(sensitivity))
        self._noise_rows.append({**row, "mechanism": "laplace", "scale": mech.scale, "epsilon": mech.epsilon,
                                 "delta": 0.0})
        capture = getattr(self, "_capture", None)
        if capture is not None:  # pipeline_audit_case: the exact query value and its noise call
            capture.append((name, value.copy(), mech))
        return mech.randomise(value, rng), mech

    def _record(self, mech, name, note, claimed=None):
        """One ledger record for a Laplace mechanism (nothing when no noise was added)."""
        if mech is None:
            return
        rel = mech.release(name, sensitivity_source=self._sens_source, note=note)
        if claimed is not None:
            rel = dataclasses.replace(rel, claimed_epsilon=float(claimed))
        self.privacy_ledger_.add(rel)

    def _lap_release(self, name, value, eps, sensitivity, rng, note="", *, claimed=None, true_eps=None):
        noisy, mech = self._noisy(name, value, eps, sensitivity, rng, true_eps=true_eps)
        self._record(mech, name, note, claimed)
        return noisy

    # ---------------------------------------------------------------- W
    def _projection(self, rows, Xp_s, source, P, eps_pca, delta_pca, lap_rule, rng, cal) -> np.ndarray:
        N, M = rows.N, rows.M
        if source == "identity":
            return np.eye(M)
        if source == "given":
            if self.components is None:
                raise ValueError("pca_source='given' needs components=W (M x P)")
            W = np.asarray(self.components, dtype=float)
            if W.shape != (M, P):
                raise ValueError(f"components must have shape ({M}, {P}), got {W.shape}")
            if not np.allclose(W.T @ W, np.eye(P), atol=1e-6):
                raise ValueError("components must have orthonormal columns (the sensitivities assume ||W'x|| <= ||x||)")
            return W
        if source == "nonprivate":
            return top_eigenvectors(rows.xtx(), P)[1]
        if source == "public":
            if Xp_s is None or len(Xp_s) < 2:
                raise ValueError("pca_source='public' needs X_public (a disjoint public slice, >= 2 rows) in fit")
            return top_eigenvectors(Xp_s.T @ Xp_s, P)[1]
        if source == "laplace":
            S = rows.xtx() / N
            true_sens = M * M / N  # Prop. 3 with a = 1
            if lap_rule == "M":
                # As printed: scale M/(N eps_PCA), which is eps' = M eps_PCA for the true sensitivity M^2/N.
                note = (f"Lap-PCA (M x M covariance, all entries); scale M a²/(N ε) as printed: under-noised by "
                        f"M = {M}, true ε = M·ε_PCA")
                noisy = self._lap_release("Lap-PCA covariance", S, eps_pca, true_sens, rng, note,
                                          claimed=eps_pca, true_eps=M * eps_pca)
            else:
                noisy = self._lap_release("Lap-PCA covariance", S, eps_pca, true_sens, rng,
                                          "Lap-PCA (M x M covariance, all entries); scale M² a²/(N ε) (Prop. 3)")
            return top_eigenvectors(noisy, P)[1]
        return self._ag_pca(rows, P, eps_pca, delta_pca, rng, cal)

    def _ag_pca(self, rows, P, eps_pca, delta_pca, rng, cal) -> np.ndarray:
        """AG-PCA: W from the strict second-moment release (``engine.privacy.moments``) of the box rows.

        Rows in the box have ||x|| <= sqrt(M), so U = X / sqrt(M) lies in the unit ball without L2 clipping
        (``scale_rows`` is not needed, and dividing keeps the fit's numbers as they were). One Gaussian release
        of U'U with the single-block sensitivity: sqrt(2) under replace-one, 1 under add/remove.
        """
        if not math.isfinite(eps_pca):
            self._noise_rows.append({"release": "AG-PCA second moment", "mechanism": "none (ε = ∞)",
                                     "sensitivity": 0.0, "scale": 0.0, "epsilon": math.inf, "delta": 0.0})
            return top_eigenvectors(rows.ag_gram(symmetric=False), P)[1]
        replace = self.ag_neighbouring == "replace"
        sens = replace_one_sensitivity([1.0]) if replace else add_remove_sensitivity([1.0])
        moments = MomentsRelease(eps_pca, delta_pca, sens, calibration=cal,
                                 neighbouring=Neighbouring(self.ag_neighbouring))
        A = moments.randomise(rows.ag_gram(), 1, rng, ledger=self.privacy_ledger_, name="AG-PCA second moment X'X/M",
                              sensitivity_source=self._sens_source,
                              note=f"Analyze-Gauss, {self.ag_neighbouring} neighbours, rows clipped to norm 1")[0]
        self._noise_rows.append({"release": "AG-PCA second moment", "mechanism": "gaussian",
                                 "sensitivity": moments.sensitivity, "scale": moments.sigma, "epsilon": eps_pca,
                                 "delta": delta_pca})
        return top_eigenvectors(A, P)[1]

    def _fit_single(self, rows, eps_g, mode, p, identity_dim, source, rng):
        N, P = rows.N, rows.P
        task = p["task"]
        d = rows.d_v
        # The second moment V'V/N of the rows in the box (about the public centre in strict mode): the Gram
        # matrix of engine.privacy.moments. Its noise here is Laplace (the paper's L1 bounds), not that module's
        # Gaussian release.
        S = rows.v_gram() / N
        if source == "nonprivate":
            # Algorithm 1: the query is the P eigenvalues of W'X'XW/(MN); off-diagonals are exactly 0.
            rule = "paper" if mode == "paper" and p["sens"] == "paper" else "tight"
            sens = sensitivities("unsupervised", P, N, rule=rule, nonprivate_w=True)["eigenvalues"]
            self.epsilon_sigma_ = eps_g
            if mode == "paper":
                # As printed: Laplace noise on all P^2 entries of S (scale P a^2/(N eps)).
                S_priv = self._lap_release("Alg. 1 covariance S (P x P)", S, eps_g, sens, rng,
                                           "Algorithm 1: noise on all P² entries; the query is the P eigenvalues")
            else:
                lam = self._lap_release("Alg. 1 eigenvalues (P)", np.diag(S), eps_g, sens, rng,
                                        "Algorithm 1, strict: only the P eigenvalues (Lidskii-Mirsky bound)")
                S_priv = np.diag(lam)
            self._set_gaussian(np.zeros(d), S_priv, p["psd"])
            return
        if mode == "paper":
            rule = p["sens"]
            sens = sensitivities(task, P, N, rule=rule, identity_dim=identity_dim)["second_moment"]
            self.epsilon_sigma_ = eps_g
            name = "Alg. 2 second moment S_a" if task == "regression" else "Alg. 2 (no y) second moment S"
            S_priv = self._lap_release(f"{name} ({d} x {d})", S, eps_g, sens, rng,
                                       "paper: centred with the (private) training mean, zero mean assumed")
            self._set_gaussian(np.zeros(d), S_priv, p["psd"])
            return
        # strict: DP mean (mean_share) and uncentred second moment about the public centre; cov = M2 - mu mu'.
        sens = sensitivities(task, P, N, rule="strict", identity_dim=identity_dim)
        eps_mu = float(self.mean_share) * eps_g
        eps_s = eps_g - eps_mu
        self.epsilon_mu_, self.epsilon_sigma_ = eps_mu, eps_s
        mu = self._lap_release(f"mean ({d})", rows.v_mean(), eps_mu, sens["mean"], rng,
                               "strict: rows in the public box, about the public centre")
        M2 = self._lap_release(f"second moment ({d} x {d})", S, eps_s, sens["second_moment"], rng,
                               "strict: uncentred, about the public centre (no data-dependent centring)")
        self._set_gaussian(mu, M2 - np.outer(mu, mu), p["psd"])

    def _set_gaussian(self, mean, C, psd):
        self.mean_ = np.asarray(mean, dtype=float)
        self.covariance_raw_ = np.asarray(C, dtype=float)
        self.covariance_, self.min_eig_before_fix_, self.psd_fixed_ = _sampling_covariance(C, psd)

    def _label_set(self, y, mode):
        """(classes (L,), index of each y in classes (N,), declared?) from ``labels`` or, failing that, y."""
        if self.labels is None or mode == "paper":
            classes, y_idx = np.unique(y, return_inverse=True)
            if classes.size < 2:
                raise ValueError("classification needs at least two classes in y")
            return classes, y_idx, False
        classes = np.asarray(list(self.labels))
        if classes.ndim != 1 or classes.size < 2:
            raise ValueError("labels must list at least two class values")
        try:  # declared labels typed as text ("0", "1") match integer labels of y
            classes = classes.astype(np.asarray(y).dtype)
        except (TypeError, ValueError):
            pass
        keys = [str(c) for c in classes]
        if len(set(keys)) != len(keys):
            raise ValueError("labels: the declared label set holds a value twice")
        index = {k: i for i, k in enumerate(keys)}
        y_keys = np.asarray(y).astype(str)
        unknown = sorted(set(y_keys) - set(index))
        if unknown:
            raise ValueError(f"y holds {len(unknown)} label value(s) outside the declared label set "
                             f"(e.g. {unknown[0]!r}): declare every label, or drop those rows")
        return classes, np.array([index[k] for k in y_keys], dtype=int), True

    def _fit_classes(self, rows, classes, declared, eps_g, mode, p, identity_dim, rng):
        """Algorithm 3; ``rows`` knows each row's class index in ``classes`` (``_BoxRows.y_idx`` or summed)."""
        self.labels_declared_ = declared
        if not declared and mode == "strict":
            self.privacy_ledger_.add_caveat(CAVEATS["labels_data"])
        N, P = rows.N, rows.P
        L = classes.size
        counts = rows.class_counts(L)
        means, covs_raw = [], []
        if mode == "paper":
            eps_mu = float(self.mean_share) * eps_g
            eps_s = eps_g - eps_mu
            self.epsilon_mu_, self.epsilon_sigma_ = eps_mu, eps_s
            sens = sensitivities("classification", P, N, rule=p["sens"], identity_dim=identity_dim,
                                 class_counts=counts)
            noisy_any = False
            for c in range(L):
                mu_c, S_c = alg3_class_moments(rows.class_rows(c))
                extra = {"class": str(classes[c]), "N_C": int(counts[c])}
                mu_p, m1 = self._noisy(f"class mean ({P})", mu_c, eps_mu, sens["class_mean"][c], rng,
                                       log_extra=extra)
                S_p, _ = self._noisy(f"class covariance ({P} x {P})", S_c, eps_s, sens["class_covariance"][c],
                                      rng, log_extra=extra)
                noisy_any = noisy_any or m1 is not None
                means.append(mu_p)
                covs_raw.append(S_p)
            # Per class the scale is sensitivity_C / eps, so every class's release has the same epsilon:
            # one record per statistic stands for all classes (parallel composition over disjoint classes).
            # The record is written per unit of N_C (sensitivity N_C s_C, scale N_C s_C / eps: the same noise
            # multiplier, so the same epsilon): an exact class count must not reach the ledger, which is shared.
            if noisy_any:
                par = f"parallel composition over {L} disjoint classes (per-class scales in the owner's noise log)"
                # N_C = 1 gives the per-unit sensitivities (exact for "paper"; for "tight" an upper bound of
                # N_C s_C, whose 4 l1^2 / N_C term is at most 4 l1^2).
                unit = sensitivities("classification", P, N, rule=p["sens"], identity_dim=identity_dim,
                                     class_counts=[1.0])
                u_mu, u_s = float(unit["class_mean"][0]), float(unit["class_covariance"][0])
                self._record(LaplaceMechanism(eps_mu, u_mu), f"class means ({L} x {P})",
                             f"Alg. 3 means: sensitivity {u_mu:.4g} a/N_C per class, recorded per unit of N_C; "
                             f"exact class counts used, not private; {par}")
                self._record(LaplaceMechanism(eps_s, u_s), f"class covariances ({L} x {P} x {P})",
                             f"Alg. 3 covariances centred with the exact class mean: sensitivity "
                             f"{'at most ' if p['sens'] == 'tight' else ''}{u_s:.4g} a²/N_C per class, recorded per "
                             f"unit of N_C; {par}")
            self.class_counts_ = counts
            syn_weights = counts
        else:
            sens = sensitivities("classification", P, N, rule="strict", identity_dim=identity_dim)
            eps_c = float(self.count_share) * eps_g
            eps_mu = float(self.mean_share) * eps_g
            eps_s = eps_g - eps_c - eps_mu
            self.epsilon_count_, self.epsilon_mu_, self.epsilon_sigma_ = eps_c, eps_mu, eps_s
            # An empty declared class still gets its (noisy) count, sum and second moment: the label set is public.
            sums, seconds = rows.class_sums(L)
            par = f"all {L} classes in one release (one record touches at most two classes)"
            n_noisy = self._lap_release(f"class counts ({L})", counts, eps_c, sens["counts"], rng,
                                        f"strict: noisy N_C; {par}")
            sums_noisy = self._lap_release(f"class sums ({L} x {P})", sums, eps_mu, sens["class_sums"], rng,
                                           f"strict: unnormalised, about the public centre; {par}")
            sec_noisy = self._lap_release(f"class second moments ({L} x {P} x {P})", seconds, eps_s,
                                          sens["class_second_moments"], rng, f"strict: unnormalised; {par}")
            denom = np.maximum(n_noisy, 1.0)  # post-processing of released counts only
            for c in range(L):
                mu_c = sums_noisy[c] / denom[c]
                means.append(mu_c)
                covs_raw.append(sec_noisy[c] / denom[c] - np.outer(mu_c, mu_c))
            self.class_counts_ = n_noisy
            syn_weights = np.clip(n_noisy, 0.0, None)
        self.classes_ = classes
        self.class_means_ = np.stack(means)
        self.class_covariances_raw_ = np.stack(covs_raw)
        fixed = [_sampling_covariance(C, p["psd"]) for C in covs_raw]
        self.class_covariances_ = np.stack([f[0] for f in fixed])
        self.min_eig_before_fix_ = float(min(f[1] for f in fixed))
        self.class_min_eig_before_fix_ = np.array([f[1] for f in fixed])
        self.psd_fixed_ = bool(any(f[2] for f in fixed))
        self._syn_weights = syn_weights
        # Pooled moments in the released space, for plots and summaries.
        self.mean_ = np.average(self.class_means_, axis=0, weights=np.maximum(syn_weights, 1e-12))
        self.covariance_raw_ = self.covariance_ = None
