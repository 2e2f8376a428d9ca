"""P3LS (issue #8): the federation equals pooled PLS, roles hold only what they may, relevance and
leakage views, the value-chain comparison, and the page.

Oracles: scikit-learn's PLSRegression (NIPALS, run to a tight tolerance for PLS2), closed forms
(R²_X from the scores and loadings, direct 1 - SS(Y - X_i B_i)/SS(Y)), and the pooled model.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.cross_decomposition import PLSRegression

from engine.methods.p3ls import (
    NOT_DP_STATEMENT,
    P3LS,
    SVDPLS,
    DataHolder,
    OrthogonalMask,
    P3LSRegressor,
    ProtocolError,
    Server,
    TrustedAuthority,
    blocks_from_frame,
    columns_by_prefix,
    compare_models,
    leakage_report,
    orient_components,
    resolve_column_split,
    select_n_components,
    standardise_columns,
    svd_pls,
)

ROOT = Path(__file__).resolve().parents[1]
TIGHT = {"tol": 1e-25, "max_iter": 100_000}  # NIPALS run to convergence: an oracle to ~1e-14


def low_rank_problem(m=120, n=24, l=3, rank=6, seed=0):
    """Correlated columns (rank-`rank` signal plus noise) and responses driven by all of them."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n)) + 0.3 * rng.standard_normal((m, n))
    X = X * rng.uniform(0.5, 20, n) + rng.uniform(-5, 5, n)  # columns on different scales and offsets
    Y = X @ rng.standard_normal((n, l)) / n + 0.1 * rng.standard_normal((m, l))
    return X, Y


def random_split(n: int, g: int, rng) -> list[slice]:
    """A random split of n columns into g non-empty contiguous blocks."""
    cuts = np.sort(rng.choice(np.arange(1, n), size=g - 1, replace=False))
    bounds = [0, *cuts.tolist(), n]
    return [slice(bounds[i], bounds[i + 1]) for i in range(g)]


def pooled_components(X, Y, k):
    Z, _, _ = standardise_columns(X)
    Zy, _, _ = standardise_columns(Y.reshape(len(Y), -1))
    return orient_components(svd_pls(Z, Zy, k))[0], Z, Zy


def rel_err(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(1.0, float(np.max(np.abs(b)))))


def align(A, B):
    """Flip columns of A to match the signs of B (for oracles with their own sign convention)."""
    s = np.sign(np.sum(A * B, axis=0))
    s[s == 0] = 1
    return A * s


# ----------------------------------------------------------------------------- Algorithm 1
@pytest.mark.parametrize("l", [1, 4])
def test_svd_pls_equals_sklearn_on_standardised_data(l):
    X, Y = low_rank_problem(l=l, seed=1)
    Y = Y[:, 0] if l == 1 else Y
    k = 5
    ours, Z, Zy = pooled_components(X, Y, k)
    sk = PLSRegression(k, scale=False, **TIGHT).fit(Z, Zy)
    sk_B = sk.coef_.T  # (n, l): scikit-learn's coef_ is (l, n)
    assert rel_err(ours.B, sk_B) < 1e-9
    for mine, theirs in ((ours.W, sk.x_weights_), (ours.T, sk.x_scores_), (ours.P, sk.x_loadings_),
                         (ours.Q, sk.y_loadings_), (ours.R, sk.x_rotations_)):
        assert rel_err(align(mine, theirs), theirs) < 1e-9
    # identities of Sec. 1: orthogonal scores, unit upper triangular P^T W, nested models
    TT = ours.T.T @ ours.T
    assert np.max(np.abs(TT - np.diag(np.diag(TT)))) < 1e-9 * np.max(TT)
    PW = ours.P.T @ ours.W
    assert np.allclose(np.diag(PW), 1.0) and np.max(np.abs(np.tril(PW, -1))) < 1e-10
    smaller = svd_pls(Z, Zy, 3)
    assert rel_err(ours.truncate(3).B, smaller.B) < 1e-10


def test_svdpls_estimator_predicts_like_sklearn_scale_true():
    X, Y = low_rank_problem(seed=2)
    Xn, _ = low_rank_problem(m=40, seed=3)
    ours = SVDPLS(4).fit(X, Y)
    sk = PLSRegression(4, scale=True, **TIGHT).fit(X, Y)
    assert rel_err(ours.predict(Xn), sk.predict(Xn)) < 1e-9
    assert rel_err(ours.coef_, sk.coef_) < 1e-9
    # and with scikit-learn's default tolerance, to NIPALS accuracy
    assert rel_err(ours.predict(Xn), PLSRegression(4).fit(X, Y).predict(Xn)) < 1e-4


def test_too_many_components_is_refused_with_a_message():
    X, Y = low_rank_problem(m=20, n=5)
    with pytest.raises(ValueError, match="n_components"):
        svd_pls(X, Y, 6)
    with pytest.raises(ValueError, match="same rows"):
        P3LS(2).fit([X[:, :2], X[:-1, 2:]], Y)


# ----------------------------------------------------------------------------- equivalence
EQUIVALENCE_CASES = [(g, seed) for g in range(2, 11) for seed in (0, 1)]


@pytest.mark.parametrize("g, seed", EQUIVALENCE_CASES)
def test_p3ls_equals_pooled_pls_for_any_split(g, seed):
    rng = np.random.default_rng(100 + 10 * g + seed)
    X, Y = low_rank_problem(m=90, n=rng.integers(g + 2, 40), l=int(rng.integers(1, 5)), seed=seed + 10 * g)
    splits = random_split(X.shape[1], g, rng)
    k = int(rng.integers(1, min(8, X.shape[1]) + 1))
    lc = int(rng.integers(0, g))
    blocks = [X[:, s] for s in splits]
    fed = P3LS(k, label_holder=lc, random_state=seed).fit(blocks, Y)
    central, _, _ = pooled_components(X, Y, k)
    audit = fed.audit()
    for mine, ref in ((fed.x_weights_, central.W), (fed.x_loadings_, central.P), (fed.x_scores_, central.T),
                      (fed.y_loadings_, central.Q), (fed.y_scores_, central.U), (audit.R, central.R),
                      (fed.B_, central.B)):
        assert rel_err(mine, ref) < 1e-9
    for B_i, s in zip(fed.block_coefs_, splits):  # each party's block of B
        assert rel_err(B_i, central.B[s]) < 1e-9
    # predictions equal scikit-learn's PLSRegression(scale=True) on the pooled columns
    sk = PLSRegression(k, scale=True, **TIGHT).fit(X, Y)
    Xn, _ = low_rank_problem(m=25, n=X.shape[1], seed=999)
    assert rel_err(fed.predict([Xn[:, s] for s in splits]), sk.predict(Xn)) < 1e-9
    assert rel_err(fed.coef_, sk.coef_) < 1e-9


def test_masked_space_relations_before_unmasking():
    X, Y = low_rank_problem(seed=4)
    blocks = [X[:, :5], X[:, 5:14], X[:, 14:]]
    fed = P3LS(4, random_state=7).fit(blocks, Y)
    ta, csp = fed.authority_, fed.server_
    A, H, G = ta._get("A").dense(), ta._get("H"), ta._get("G")
    d = fed.label_contributor_._get("signs")
    c, _, _ = pooled_components(X, Y, 4)
    assert rel_err(csp._get("T'") * d, A @ c.T) < 1e-9
    assert rel_err(csp._get("W'") * d, H.T @ c.W) < 1e-9
    assert rel_err(csp._get("P'") * d, H.T @ c.P) < 1e-9
    assert rel_err(csp._get("Q'") * d, G.T @ c.Q) < 1e-9
    assert rel_err(csp._get("R'") * d, H.T @ c.R) < 1e-9
    assert rel_err(csp._get("B'"), H.T @ c.B @ G) < 1e-9
    # masks are orthogonal to machine precision, C_i invertible
    assert np.allclose(A.T @ A, np.eye(len(A)), atol=1e-12) and np.allclose(H @ H.T, np.eye(len(H)), atol=1e-12)


@pytest.mark.parametrize("options", [{"secure_aggregation": True}, {"row_mask_block_size": 16},
                                     {"secure_aggregation": True, "row_mask_block_size": 7}])
def test_options_keep_the_equivalence(options):
    X, Y = low_rank_problem(m=100, seed=5)
    splits = [slice(0, 3), slice(3, 11), slice(11, 24)]
    fed = P3LS(5, random_state=3, **options).fit([X[:, s] for s in splits], Y)
    central, _, _ = pooled_components(X, Y, 5)
    assert rel_err(fed.B_, central.B) < 1e-9
    assert rel_err(fed.transform([X[:, s] for s in splits]), central.T) < 1e-9
    if options.get("secure_aggregation"):
        assert not any(name.startswith("X_1'") and "+" not in name for name in fed.server_.holds())
        assert "X_1' + pairwise masks" in fed.server_.holds()


def _keys(fed) -> dict:
    """Every key the TA drew and every C_i a party drew (the masks of one run)."""
    out = {name: (v.dense() if isinstance(v, OrthogonalMask) else np.asarray(v))
           for name, v in fed.authority_._holdings.items()}
    out.update({f"C_{h.index}": h._get(f"C_{h.index}") for h in fed.holders_})
    return out


def test_masks_come_from_fresh_entropy_unless_a_test_seed_is_given():
    """A mask from a known seed is no mask: by default every run draws new keys (issue #15)."""
    X, Y = low_rank_problem(m=60, seed=14)
    blocks = [X[:, :10], X[:, 10:]]
    runs = [P3LS(3, secure_aggregation=True).fit(blocks, Y) for _ in range(2)]
    k0, k1 = _keys(runs[0]), _keys(runs[1])
    assert set(k0) == set(k1) >= {"A", "H", "G", "N", "C_1", "C_2"}
    for name in k0:
        assert not np.allclose(k0[name], k1[name]), f"{name} was the same in two default runs"
    pairwise = [[m.payload for m in r.log_.messages if m.name == "s_12"] for r in runs]
    assert len(pairwise[0]) == 1 and pairwise[0] != pairwise[1]  # the secure-aggregation PRG seeds too
    assert not runs[0].mask_seed_known_ and not runs[1].mask_seed_known_
    assert rel_err(runs[0].B_, runs[1].B_) < 1e-9  # ... while the model is the same
    # a test seed reproduces every key, and the model says so
    fixed = [P3LS(3, secure_aggregation=True, random_state=11).fit(blocks, Y) for _ in range(2)]
    f0, f1 = _keys(fixed[0]), _keys(fixed[1])
    assert all(np.array_equal(f0[n], f1[n]) for n in f0) and fixed[0].mask_seed_known_


def test_the_split_seed_fixes_the_split_but_not_the_masks():
    from engine.data.samples import make_value_chain

    chain = make_value_chain(n_samples=150, random_state=2)
    runs = [compare_models(chain.blocks, chain.Y, k_max=6, random_state=4) for _ in range(2)]
    for a, b in zip(runs[0].split, runs[1].split):
        np.testing.assert_array_equal(a, b)
    assert not np.allclose(_keys(runs[0].federated)["A"], _keys(runs[1].federated)["A"])
    assert not runs[0].federated.mask_seed_known_
    pd.testing.assert_frame_equal(runs[0].overall.drop(columns="inference_seconds"),
                                  runs[1].overall.drop(columns="inference_seconds"), atol=1e-9)
    # masks for a test: their own seed
    same = [compare_models(chain.blocks, chain.Y, k_max=6, random_state=4, mask_random_state=9) for _ in range(2)]
    np.testing.assert_array_equal(_keys(same[0].federated)["A"], _keys(same[1].federated)["A"])


def test_owner_side_exports_and_no_shareable_release():
    """P3LS adds no noise: its model is not a shareable release; it goes to the owner's workbook."""
    from engine.methods.p3ls import NO_RELEASE_REASON, model_from_dict, model_to_dict, owner_sheets
    from engine.privacy import PrivacyLedger
    from engine.release.export import dumps
    from engine.release.manifest import Field, build_release

    X, Y = low_rank_problem(m=90, seed=15)
    blocks = [X[:, :8], X[:, 8:]]
    fed = P3LS(3).fit(blocks, Y)
    with pytest.raises(ValueError, match="no privacy"):
        build_release("p3ls", "privalab.p3ls.release/1", [Field("coef_", fed.coef_, "dp", "*")], PrivacyLedger(),
                      guarantee=NOT_DP_STATEMENT)
    assert "no differentially private output" in NO_RELEASE_REASON and "workbook" in NO_RELEASE_REASON
    # the owner-side model file: exact coefficients, no per-row scores (with the loadings they rebuild the data)
    text = dumps(model_to_dict(fed))
    back = model_from_dict(text)
    np.testing.assert_array_equal(back.coef_, fed.coef_)
    assert back.column_slices_ == fed.column_slices_
    assert "x_scores_" not in model_to_dict(fed)["attributes"]
    # the workbook sheets: coefficients in original units predict like the model
    cmp = compare_models(blocks, Y, k_max=5, random_state=0)
    sheets = owner_sheets(cmp, [[f"a{i}" for i in range(8)], [f"b{i}" for i in range(16)]])
    coef = sheets["model coefficients (original units)"]
    te = cmp.split[2]
    pred = X[te] @ coef.drop(index="(intercept)").to_numpy() + coef.loc["(intercept)"].to_numpy()
    np.testing.assert_allclose(pred, cmp.federated.predict([b[te] for b in blocks]), atol=1e-9)
    assert sheets["rows"]["masks"] == "fresh OS entropy" and sheets["rows"]["test"] == len(te)
    assert len(sheets["model coefficients per party"]) == 24 * 3 and "message log" in sheets


def test_block_diagonal_mask_is_orthogonal_and_mixes_only_within_blocks():
    M = OrthogonalMask.random(10, 0, block_size=4).dense()
    assert np.allclose(M.T @ M, np.eye(10), atol=1e-13)
    assert np.all(M[:4, 4:] == 0) and np.all(M[8:, :8] == 0)


# ----------------------------------------------------------------------------- roles and messages
def test_each_role_holds_only_what_it_may():
    X, Y = low_rank_problem(seed=6)
    blocks = [X[:, :6], X[:, 6:15], X[:, 15:]]
    fed = P3LS(3, random_state=1).fit(blocks, Y)
    fed.predict(blocks)
    fed.relevance()
    ta, csp, hs = fed.authority_, fed.server_, fed.holders_
    assert isinstance(ta, TrustedAuthority) and isinstance(csp, Server) and all(isinstance(h, DataHolder) for h in hs)
    # the TA holds keys only, never data (masked or not)
    assert set(ta.holds()) <= {"A", "H", "G", "N", "M_r", "N_r", "M_new"}
    # the CSP never holds raw data, any key or unmasked components
    forbidden_csp = {"A", "H", "G", "N", "M_new", "M_r", "N_r", "Y", "T", "Q", "U"}
    for i in (1, 2, 3):
        forbidden_csp |= {f"X_{i}", f"H_{i}", f"C_{i}", f"W_{i}", f"P_{i}", f"B_{i}"}
    assert not forbidden_csp & set(csp.holds())
    for h in hs:
        own = h.index
        others = [j for j in (1, 2, 3) if j != own]
        held = set(h.holds())
        assert {f"X_{own}", f"H_{own}", f"C_{own}", f"W_{own}", f"P_{own}", f"B_{own}", "T", "A", "N"} <= held
        assert not {f"{x}_{j}" for x in ("X", "H", "C", "W", "P", "B") for j in others} & held
        assert "H" not in held and not any(name.startswith("R") for name in held)  # R_i withheld (Sec. 3.2)
        if h.is_label_contributor:
            assert {"Y", "Q", "U", "G"} <= held
        else:
            assert not {"Y", "Q", "U", "G"} & held
        with pytest.raises(ProtocolError):
            h._get(f"X_{others[0]}")
    # every message is logged with sender, receiver, shape and meaning; keys only come from the TA
    log = fed.log_.to_frame()
    assert {"sender", "receiver", "shape", "what it is", "message"} <= set(log.columns)
    assert log["what it is"].str.len().min() > 2
    key_msgs = log[log["message"].isin(["A", "G", "N", "M_new", "M_r", "N_r"]) | log["message"].str.match(r"^H_\d$")]
    assert set(key_msgs["sender"]) == {"TA"} and "CSP" not in set(key_msgs["receiver"])
    assert "TA" not in set(log["receiver"])  # the TA receives nothing
    # what the CSP receives in training is masked: X_i' is not X_i's standardised block
    Z1 = standardise_columns(blocks[0])[0]
    X1m = csp._get("X_1'")
    assert X1m.shape == (X.shape[0], X.shape[1])
    assert np.min(np.abs(X1m[:, :6] - Z1)) > 0 or not np.allclose(X1m[:, :6], Z1)


def test_prediction_protocol_returns_only_to_the_lc_and_unmasks_at_the_party():
    X, Y = low_rank_problem(seed=8)
    blocks = [X[:, :10], X[:, 10:]]
    fed = P3LS(3, random_state=2).fit(blocks, Y)
    before = len(fed.log_)
    Xn, _ = low_rank_problem(m=15, seed=9)
    Yhat = fed.predict([Xn[:, :10], Xn[:, 10:]])
    new = fed.log_.to_frame().iloc[before:]
    assert set(new["phase"]) == {"inference"}
    to_lc = new[new["message"] == "Ŷ'"]
    assert list(to_lc["receiver"]) == [fed.label_contributor_.name]
    assert "Ŷ_new" in fed.label_contributor_.holds() and "Ŷ_new" not in fed.holders_[0].holds()
    assert np.allclose(Yhat, SVDPLS(3).fit(X, Y).predict(Xn), rtol=0, atol=1e-9 * np.abs(Yhat).max())
    # the masked prediction the CSP sees is not the prediction
    assert not np.allclose(fed.server_._get("Ŷ'"), (Yhat - fed.y_mean_) / fed.y_scale_)


# ----------------------------------------------------------------------------- relevance
def test_relevance_algorithm4_equals_direct_formulas():
    X, Y = low_rank_problem(m=150, seed=10)
    splits = [slice(0, 4), slice(4, 12), slice(12, 24)]
    blocks = [X[:, s] for s in splits]
    fed = P3LS(4, random_state=4).fit(blocks, Y)
    rel = fed.relevance()
    Z, _, _ = standardise_columns(X)
    Zy, _, _ = standardise_columns(Y)
    ss_y = np.sum(Zy ** 2)
    for (_, row), s, B_i in zip(rel.table.iterrows(), splits, fed.block_coefs_):
        direct = 1 - np.sum((Zy - Z[:, s] @ B_i) ** 2) / ss_y
        assert abs(row["r2_xy"] - direct) < 1e-10
    # shares of explained X-variance sum to the pooled model's R²_X (oracle: scikit-learn's T, P)
    sk = PLSRegression(4, scale=False, **TIGHT).fit(Z, Zy)
    r2_x_pooled = 1 - np.sum((Z - sk.x_scores_ @ sk.x_loadings_.T) ** 2) / np.sum(Z ** 2)
    assert abs(rel.table["r2_x"].sum() - r2_x_pooled) < 1e-10
    assert abs(rel.r2_x_total - r2_x_pooled) < 1e-10
    r2_y_pooled = 1 - np.sum((Zy - sk.x_scores_ @ sk.y_loadings_.T) ** 2) / ss_y
    assert abs(rel.r2_y - r2_y_pooled) < 1e-10
    # on new rows, the same formula with the training statistics
    Xn, Yn = low_rank_problem(m=60, seed=11)
    test = fed.relevance([Xn[:, s] for s in splits], Yn)
    sc = SVDPLS(4).fit(X, Y)
    Zn, Zyn = (Xn - sc.x_mean_) / sc.x_scale_, (Yn - sc.y_mean_) / sc.y_scale_
    direct = 1 - np.sum((Zyn - Zn[:, splits[0]] @ fed.block_coefs_[0]) ** 2) / np.sum((Zyn - Zyn.mean(0)) ** 2)
    assert abs(test.table["r2_xy"].iloc[0] - direct) < 1e-10


# ----------------------------------------------------------------------------- leakage
def test_leakage_report_shows_invariants_and_caveats():
    X, Y = low_rank_problem(seed=12)
    fed = P3LS(3, random_state=5).fit([X[:, :8], X[:, 8:16], X[:, 16:]], Y)
    rep = leakage_report(fed)
    exact = rep.dropna(subset=["max_abs_difference"])
    assert (exact["max_abs_difference"] < 1e-8).all(), exact
    assert rep["learns"].str.contains("singular values of the pooled X").any()
    assert rep["learns"].str.contains("last column of Q").sum() == 2  # both non-LC parties recover q_k
    assert (rep["note"] == NOT_DP_STATEMENT).any() and "not differential privacy" in NOT_DP_STATEMENT
    # the caveat-1 computation by hand: last row of (W_1^T W_1)^-1 W_1^T B_1 is q_k
    h = fed.holders_[0]
    Zq = np.linalg.lstsq(h._get("W_1"), h._get("B_1"), rcond=None)[0]
    assert np.allclose(Zq[-1], fed.y_loadings_[:, -1], atol=1e-10)
    # PLS1: the Y mask is ±1 and the CSP holds ±Q
    for seed in range(4):  # several mask draws, so that the components' signs differ
        fed1 = P3LS(5, random_state=seed).fit([X[:, :8], X[:, 8:]], Y[:, 0])
        rep1 = leakage_report(fed1)
        row = rep1[rep1["learns"].str.contains("one response")]
        assert len(row) == 1 and row["max_abs_difference"].iloc[0] < 1e-10
        G = fed1.authority_._get("G")
        assert G.shape == (1, 1) and abs(abs(G[0, 0]) - 1) < 1e-15


# ----------------------------------------------------------------------------- tables and selection
def test_columns_by_prefix_and_blocks_from_frame_messages():
    from engine.data import DataError
    from engine.data import blocks as data_blocks

    cols = ["batch", "s1_x01", "s1_x02", "s2_x01", "s3_x01", "kpi_1"]
    assert columns_by_prefix(cols) == {"s1": ["s1_x01", "s1_x02"], "s2": ["s2_x01"], "s3": ["s3_x01"],
                                       "kpi": ["kpi_1"]}
    # the adapters live in engine.data.blocks; the old P3LS names stay
    assert columns_by_prefix is data_blocks.group_columns_by_prefix
    assert blocks_from_frame is data_blocks.blocks_from_frame
    assert data_blocks.group_columns_by_prefix(["a-1", "a-2", "b_3", "-c"], "-") == {"a": ["a-1", "a-2"]}
    with pytest.raises(DataError, match="party 'b' has no columns|party b has no columns"):
        blocks_from_frame(pd.DataFrame({"x": [1.0], "y": [2.0]}), {"a": ["x"], "b": []}, ["y"])
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.standard_normal((20, 5)), columns=cols[1:])
    blocks, Y, names, colnames = blocks_from_frame(df, {"a": ["s1_x01", "s1_x02"], "b": ["s2_x01"]}, ["kpi_1"])
    assert [b.shape for b in blocks] == [(20, 2), (20, 1)] and Y.shape == (20, 1) and names == ["a", "b"]
    with pytest.raises(DataError, match="both a and b"):
        blocks_from_frame(df, {"a": ["s1_x01"], "b": ["s1_x01"]}, ["kpi_1"])
    with pytest.raises(DataError, match="response"):
        blocks_from_frame(df, {"a": ["kpi_1"], "b": ["s2_x01"]}, ["kpi_1"])
    with pytest.raises(DataError, match="at least 2 parties"):
        blocks_from_frame(df, {"a": ["s1_x01"]}, ["kpi_1"])
    bad = df.copy()
    bad.loc[3, "s2_x01"] = np.nan
    with pytest.raises(DataError, match="s2_x01"):
        blocks_from_frame(bad, {"a": ["s1_x01"], "b": ["s2_x01"]}, ["kpi_1"])


def test_lc_chooses_k_on_validation_like_the_pooled_model():
    X, Y = low_rank_problem(m=200, seed=13)
    tr, va = np.arange(120), np.arange(120, 200)
    splits = [slice(0, 9), slice(9, 24)]
    k_pooled, scores = select_n_components(X[tr], Y[tr], X[va], Y[va], 15)
    fed = P3LS(15, random_state=0).fit([X[tr][:, s] for s in splits], Y[tr],
                                       validation=([X[va][:, s] for s in splits], Y[va]))
    assert fed.n_components_ == k_pooled
    assert np.max(np.abs(fed.validation_scores_ - scores)) < 1e-9
    assert rel_err(fed.B_, SVDPLS(k_pooled).fit(X[tr], Y[tr]).components_.B) < 1e-9
    assert fed.x_weights_.shape[1] == k_pooled == fed.y_loadings_.shape[1]


# ----------------------------------------------------------------------------- scikit-learn wrapper
def test_regressor_wrapper_equals_the_list_of_blocks_api_and_pooled_pls():
    """P3LSRegressor(column_split=...) runs the same protocol: identical to P3LS on the same blocks with the
    same masks, and equal to PLSRegression(scale=True) on X (coefficients in X's own column order)."""
    X, Y = low_rank_problem(m=100, n=17, l=2, seed=21)
    Xn, _ = low_rank_problem(m=30, n=17, seed=22)
    perm = np.random.default_rng(5).permutation(17)
    splits = {"widths": ([5, 4, 8], [np.arange(0, 5), np.arange(5, 9), np.arange(9, 17)]),
              "indices": ([perm[:6], perm[6:11], perm[11:]], [perm[:6], perm[6:11], perm[11:]]),
              "parties": (3, np.array_split(np.arange(17), 3))}
    sk = PLSRegression(4, scale=True, **TIGHT).fit(X, Y)
    for name, (split, cols) in splits.items():
        wrap = P3LSRegressor(4, column_split=split, label_holder=1, random_state=3).fit(X, Y)
        fed = P3LS(4, label_holder=1, random_state=3).fit([X[:, c] for c in cols], Y)
        assert [list(c) for c in wrap.columns_] == [list(c) for c in cols], name
        np.testing.assert_array_equal(wrap.predict(Xn), fed.predict([Xn[:, c] for c in cols]))
        np.testing.assert_array_equal(wrap.x_scores_, fed.x_scores_)
        assert rel_err(wrap.predict(Xn), sk.predict(Xn)) < 1e-9, name
        assert rel_err(wrap.coef_, sk.coef_) < 1e-9, name       # X's column order, not the stacked blocks'
        assert rel_err(wrap.intercept_, sk.intercept_) < 1e-9, name
        assert rel_err(align(wrap.x_weights_, sk.x_weights_), sk.x_weights_) < 1e-9, name
        assert rel_err(align(wrap.transform(Xn), sk.transform(Xn)), sk.transform(Xn)) < 1e-9, name
        assert wrap.score(Xn, sk.predict(Xn)) > 1 - 1e-12
    # 1-D y gives 1-D predictions, a single new row is a valid query, a DataFrame's names select columns
    y = Y[:, 0]
    one = P3LSRegressor(3, column_split=[8, 9], random_state=0).fit(X, y)
    assert one.predict(Xn).shape == (30,) and one.predict(Xn[:1]).shape == (1,)
    assert rel_err(one.predict(Xn[:1]), PLSRegression(3, **TIGHT).fit(X, y).predict(Xn[:1])) < 1e-9
    df = pd.DataFrame(X, columns=[f"c{j}" for j in range(17)])
    named = P3LSRegressor(3, column_split=[[f"c{j}" for j in perm[:8]], [f"c{j}" for j in perm[8:]]],
                          random_state=0).fit(df, y)
    assert [list(c) for c in named.columns_] == [list(perm[:8]), list(perm[8:])]
    assert list(named.get_feature_names_out()) == ["p3lsregressor0", "p3lsregressor1", "p3lsregressor2"]
    assert rel_err(named.predict(pd.DataFrame(Xn, columns=df.columns)), one.predict(Xn)) < 1e-9


def test_regressor_wrapper_in_cross_validation_matches_pls_regression():
    from sklearn.model_selection import KFold, cross_val_score

    X, Y = low_rank_problem(m=90, n=12, l=1, seed=31)
    y = Y[:, 0]
    cv = KFold(5, shuffle=True, random_state=0)
    ours = cross_val_score(P3LSRegressor(3, column_split=[4, 8]), X, y, cv=cv)
    ref = cross_val_score(PLSRegression(3, **TIGHT), X, y, cv=cv)
    assert np.max(np.abs(ours - ref)) < 1e-9


def test_regressor_wrapper_validation_chooses_k_like_the_blocks_api():
    X, Y = low_rank_problem(m=200, seed=13)
    tr, va = np.arange(120), np.arange(120, 200)
    wrap = P3LSRegressor(15, column_split=[9, 15], random_state=0).fit(X[tr], Y[tr], validation=(X[va], Y[va]))
    k_pooled, _ = select_n_components(X[tr], Y[tr], X[va], Y[va], 15)
    assert wrap.n_components_ == k_pooled == wrap.x_weights_.shape[1]
    assert list(wrap.get_feature_names_out()) == [f"p3lsregressor{j}" for j in range(k_pooled)]


@pytest.mark.parametrize("split, n, message", [
    (3, 2, "3 parties need at least 3 columns; X has n_features = 2"),
    (0, 4, "at least 1 party"),
    ([2, 3], 4, r"widths \[2, 3\] sum to 5 columns; X has n_features = 4"),
    ([2, 0, 2], 4, "every party needs at least one column"),
    ([[0, 1], [1, 2, 3]], 4, "column 1 to more than one party"),
    ([[0, 1], [3]], 4, "leaves column 2 to no party"),
    ([[0, 1], [2, 7]], 4, "column 7, outside 0..3"),
    ([["a"], ["b"]], 2, "names columns, but X has no column names"),
    ([[0.5], [1]], 2, "column indices"),
    ("ab", 2, "number of parties"),
    ([], 2, "empty"),
])
def test_column_split_is_validated_with_a_message(split, n, message):
    with pytest.raises(ValueError, match=message):
        resolve_column_split(split, n)


def test_svdpls_and_the_wrapper_raise_not_fitted_before_fit():
    from sklearn.exceptions import NotFittedError

    X, Y = low_rank_problem(m=20, n=5)
    for est in (SVDPLS(2), P3LSRegressor(2)):
        for method in (est.predict, est.transform):
            with pytest.raises(NotFittedError):
                method(X)


# ----------------------------------------------------------------------------- value chain
@pytest.mark.parametrize("estimator", [P3LS(), P3LSRegressor(), SVDPLS()], ids=lambda e: type(e).__name__)
def test_parameters_are_validated_declaratively(estimator):
    from sklearn.utils._param_validation import InvalidParameterError
    from sklearn.utils.estimator_checks import check_param_validation

    check_param_validation(type(estimator).__name__, estimator)  # every parameter has a constraint, and it bites
    X, Y = low_rank_problem(m=30, n=6)
    fit_input = [X[:, :3], X[:, 3:]] if isinstance(estimator, P3LS) else X
    with pytest.raises(InvalidParameterError, match="n_components"):
        estimator.set_params(n_components=0).fit(fit_input, Y)
    # a numpy Generator is a valid mask source (benches draw masks from one)
    if not isinstance(estimator, SVDPLS):
        estimator.set_params(n_components=2, random_state=np.random.default_rng(0)).fit(fit_input, Y)


def test_compare_is_the_method_contract_federation_beside_pooled_sklearn_pls():
    from engine.methods.contract import Comparison
    from engine.methods.p3ls import compare
    from engine.methods.registry import method

    assert method("p3ls").compare is compare
    X, Y = low_rank_problem(m=90, seed=21)
    train, test = (X[:60], Y[:60]), (X[60:], Y[60:])
    cmp = compare(train, test, n_components=4, column_split=[8, 16], random_state=0)
    assert isinstance(cmp, Comparison) and isinstance(cmp.private, P3LSRegressor)
    assert isinstance(cmp.reference, PLSRegression) and cmp.reference.n_components == 4
    assert cmp.ledger is None and cmp.status == "no privacy"
    assert cmp.guarantee == NOT_DP_STATEMENT and "not differential privacy" in cmp.guarantee
    assert len(cmp.private.p3ls_.log_) > 0 and any("known seed" in n for n in cmp.notes)
    h = cmp.headline
    oracle = PLSRegression(4, scale=True, **TIGHT).fit(*train).predict(test[0])
    assert h["RMSEP (centralised)"] == pytest.approx(np.sqrt(np.mean((test[1] - oracle) ** 2)), rel=1e-12)
    assert h["RMSEP (federated)"] == pytest.approx(h["RMSEP (centralised)"], rel=1e-9)
    assert h["R² (federated)"] == pytest.approx(h["R² (centralised)"], rel=1e-9)
    assert h["|ΔRMSEP|"] < 1e-9 and h["|ΔR²|"] < 1e-9
    assert h["max |Δ prediction|"] < 1e-9 * max(1.0, float(np.max(np.abs(oracle))))
    # one response, a DataFrame with names in the column split; no DP request can be honoured
    cols = [f"c{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=cols)
    one = compare((df[:60], Y[:60, 0]), (df[60:], Y[60:, 0]), n_components=2, column_split=[cols[:5], cols[5:]])
    assert one.headline["max |Δ prediction|"] < 1e-9 and not one.notes[1:]
    with pytest.raises(ValueError, match="no noise"):
        compare(train, test, epsilon=1.0)
    assert compare(train, test, epsilon=float("inf"), delta=1e-5, random_state=1).ledger is None


def test_value_chain_local_vs_p3ls_vs_central():
    from engine.data.samples import make_value_chain

    chain = make_value_chain(random_state=0)
    cmp = compare_models(chain.blocks, chain.Y, k_max=30, party_names=list(chain.block_names),
                         kpi_names=list(chain.kpi_names), random_state=0)
    overall = cmp.overall.set_index("model")
    assert cmp.equivalence["same_k"]
    assert cmp.equivalence["relative_coef_difference"] < 1e-9
    assert cmp.equivalence["r2_difference"] < 1e-10
    assert overall.loc["P3LS", "r2_pooled"] > overall.loc["local", "r2_pooled"]
    assert list(cmp.per_kpi["kpi"].unique()) == list(chain.kpi_names) and chain.Y.shape[1] == 7
    # the paper's metrics are what they say: RMSE per KPI against scikit-learn's
    from sklearn.metrics import mean_squared_error

    te = cmp.split[2]
    pred = cmp.central.predict(np.hstack(chain.blocks)[te])
    rmse = cmp.per_kpi.query("model == 'central'")["rmse"].to_numpy()
    assert np.allclose(rmse, np.sqrt(mean_squared_error(chain.Y[te], pred, multioutput="raw_values")))
