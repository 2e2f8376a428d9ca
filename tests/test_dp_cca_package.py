"""DP-CCA as a package (issue #17): old import paths keep working, moved code gives the same outputs."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import engine.methods.dp_cca as dp_cca
from engine.data import views


def test_every_public_name_and_the_old_core_path_still_import():
    for name in dp_cca.__all__:
        assert hasattr(dp_cca, name), name
    core = importlib.import_module("engine.methods.dp_cca.core")
    assert core is dp_cca.core
    assert core.SENSITIVITY is dp_cca.SENSITIVITY
    assert not hasattr(dp_cca, "_Prepared")  # private names stay in their modules (issue 29)


def test_frame_adapters_live_in_engine_data():
    assert dp_cca.views_from_frame is views.views_from_frame
    assert dp_cca.channel_split_views is views.channel_split_views
    assert dp_cca.bin_columns is views.bin_columns
    # renamed in engine.data (P3LS's columns_by_prefix groups by separator); the old name stays an alias
    assert dp_cca.columns_by_prefix is views.columns_with_prefix
    assert views.columns_with_prefix(["x1", "y1", "x2", "z"], "x") == ["x1", "x2"]


def test_split_rows_is_split_indices_with_the_same_rows_as_before():
    from engine.privacy import as_generator

    for n, fraction, seed in ((10, 0.3, 0), (5000, 0.3, 0), (37, 0.5, 11), (101, 0.77, 3)):
        n_test = int(round(fraction * n))
        perm = as_generator(seed).permutation(n)  # the helper's own draw before engine.data.split
        train, test = dp_cca.split_rows(n, fraction, seed)
        np.testing.assert_array_equal(train, np.sort(perm[n_test:]))
        np.testing.assert_array_equal(test, np.sort(perm[:n_test]))
    with pytest.raises(ValueError, match="too few"):
        dp_cca.split_rows(4, 0.3, 0)


def test_compare_is_the_method_contract():
    from engine.data.samples import make_two_views
    from engine.methods.contract import Comparison
    from engine.privacy.wording import ledger_text

    tv = make_two_views(n_samples=3000, random_state=3)
    train_idx, test_idx = dp_cca.split_rows(3000, 0.3, 0)
    train, test = (tv.X[train_idx], tv.Y[train_idx]), (tv.X[test_idx], tv.Y[test_idx])
    out = dp_cca.compare(train, test, epsilon=4.0, delta=1e-5, random_state=0, n_components=2)
    assert isinstance(out, Comparison)
    # the same fits as compare_fit with the page's default bounds (declared in the notes)
    bounds = dict(x_bound=dp_cca.default_bound(tv.X.shape[1]), y_bound=dp_cca.default_bound(tv.Y.shape[1]))
    ref = dp_cca.compare_fit(*train, *test, n_components=2, epsilon=4.0, delta=1e-5, mode="strict",
                             random_state=0, **bounds)
    np.testing.assert_array_equal(out.private.x_weights_, ref["private"].x_weights_)
    np.testing.assert_array_equal(out.reference.x_weights_, ref["nonprivate"].x_weights_)
    assert out.headline["held-out correlation 1 (private)"] == float(ref["held_out_private"][0])
    assert out.headline["held-out correlation 2 (non-private)"] == float(ref["held_out_nonprivate"][1])
    assert out.headline["captured correlation (held-out)"] == float(ref["captured"])
    assert out.headline["subspace similarity"] == float(ref["similarity"]["angle_cos"])
    assert out.ledger is out.private.privacy_ledger_ and out.status == "not proven"  # a known noise seed
    assert out.guarantee == ledger_text(out.ledger)
    assert any("public defaults" in n for n in out.notes) and dp_cca.NOT_DP_PROJECTIONS in out.notes
    # explicit bounds, fresh noise: proven, no default note; eps = inf: no ledger, the reference itself
    out = dp_cca.compare(train, test, epsilon=1.0, delta=1e-5, n_components=2, x_bound=5.0, y_bound=5.0)
    assert out.status == "proven" and not any("public defaults" in n for n in out.notes)
    out = dp_cca.compare(train, test, epsilon=np.inf, delta=1e-5, n_components=2)
    assert out.ledger is None and out.status == "no privacy"
    np.testing.assert_allclose(out.headline["held-out correlation 1 (private)"],
                               out.headline["held-out correlation 1 (non-private)"], rtol=1e-12)
    assert "No private release" in out.guarantee
    paper = dp_cca.compare(train, test, epsilon=1.0, delta=1e-5, mode="paper", n_components=1)
    assert paper.status == "not proven" and paper.private.mode == "paper"
    with pytest.raises(ValueError, match=r"tuple \(X, Y\)"):
        dp_cca.compare(tv.X, test, epsilon=1.0, delta=1e-5)
