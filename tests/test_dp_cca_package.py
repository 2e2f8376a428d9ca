"""DP-CCA as a package (issue #17): old import paths keep working, moved code gives the same outputs."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import engine.methods.dp_cca as dp_cca
from engine.data import views
from engine.methods.dp_cca import audit_case


def test_every_public_name_and_the_old_core_path_still_import():
    for name in dp_cca.__all__:
        assert hasattr(dp_cca, name), name
    core = importlib.import_module("engine.methods.dp_cca_core")
    assert core is dp_cca.core
    assert core.SENSITIVITY is dp_cca.SENSITIVITY and core._Prepared is dp_cca._Prepared


def test_frame_adapters_live_in_engine_data():
    assert dp_cca.views_from_frame is views.views_from_frame
    assert dp_cca.channel_split_views is views.channel_split_views
    assert dp_cca.bin_columns is views.bin_columns
    # renamed in engine.data (P3LS's columns_by_prefix groups by separator); the old name stays an alias
    assert dp_cca.columns_by_prefix is views.columns_with_prefix
    assert views.columns_with_prefix(["x1", "y1", "x2", "z"], "x") == ["x1", "x2"]


@pytest.mark.parametrize("mode, bug", [("strict", None), ("paper", None), ("strict", "noise_halved")])
def test_audit_case_copy_matches_engine_privacy_audit(mode, bug):
    from engine.privacy import audit

    old, new = audit.dp_cca_case(mode, 1.0, 1e-5, bug=bug), audit_case.dp_cca_case(mode, 1.0, 1e-5, bug=bug)
    fields = ("name", "method", "mode", "claimed_eps", "delta", "neighbours", "expect", "note", "bug")
    assert [getattr(old, f) for f in fields] == [getattr(new, f) for f in fields]
    for a, b in ((old.D, new.D), (old.D_prime, new.D_prime)):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(old.release(old.D, np.random.default_rng(3), 7),
                                  new.release(new.D, np.random.default_rng(3), 7))
