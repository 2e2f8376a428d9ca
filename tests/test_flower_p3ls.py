"""P3LS over Flower: a real SuperLink and one SuperNode per party on 127.0.0.1 (always stopped).

Oracles: the local transport (same random_state) for predictions, coefficients and the message log; the
parties' raw blocks and the TA's masks for what the ServerApp (and so the SuperLink it talks through) sees.
One federation serves the module (3 data holders + the TA); the killed-party test starts its own.
"""
from __future__ import annotations

import json
import pickle
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from engine.federation.flower.driver import APP_DIR
from engine.federation.flower.relay import decode_value
from engine.federation.flower.runtime import FederationError, submit_run
from engine.methods.p3ls.flower_roles import _Party
from engine.methods.p3ls.protocol import P3LS
from tests.flower_helpers import p3ls_data, running_federation


@pytest.fixture(scope="module")
def federation():
    with running_federation(["ta", "1", "2", "3"]) as fed:
        yield fed


@pytest.fixture(scope="module")
def fitted(federation):
    blocks, Y, new = p3ls_data()
    local = P3LS(2, random_state=7, secure_aggregation=True).fit(blocks, Y)
    y_local = local.predict(new)
    fl = P3LS(2, random_state=7, secure_aggregation=True, transport="flower", superlink=federation.address)
    fl._flower_record = True
    fl.fit(blocks, Y)
    y_flower = fl.predict(new)
    return blocks, Y, new, local, y_local, fl, y_flower


def test_predictions_and_coefficients_equal_local(fitted):
    *_, local, y_local, fl, y_flower = fitted
    np.testing.assert_allclose(y_flower, y_local, atol=1e-9, rtol=0)
    np.testing.assert_allclose(fl.coef_, local.coef_, atol=1e-9, rtol=0)
    assert fl.mask_seed_known_ and fl.transport_seconds_ > 0 and local.wire_bytes_ is None


def _rows(log):
    df = log.to_frame()
    return sorted(map(tuple, df[["phase", "step", "sender", "receiver", "message", "shape", "values sent"]]
                      .astype(str).to_numpy()))


def test_message_log_from_real_messages_matches_local(fitted):
    *_, local, _, fl, _ = fitted
    assert _rows(fl.message_log_) == _rows(local.log_)
    assert len(fl.wire_bytes_per_message_) == len(fl.message_log_)
    values = int(fl.message_log_.to_frame()["values sent"].sum())
    # each value is an 8-byte float on the wire, plus headers; sealed ones also a nonce and a tag
    assert 8 * values < fl.wire_bytes_ < 8 * values + 2000 * len(fl.message_log_)


def _secrets(fl, blocks, federation):
    """Every party's raw and standardised block and every mask or key the TA made (read from its directory)."""
    out = [np.asarray(b, float) for b in blocks] + [h._Z for h in fl.holders_]
    ta = _Party.load(federation.data_dirs["ta"], fl._flower_model).role
    for name in ("A", "H", "G", "N", "M_new"):
        v = ta._get(name)
        out.append(v.dense() if hasattr(v, "dense") else v)
    H = ta._get("H")
    cuts = np.cumsum([0, *fl.block_sizes_])
    out += [H[cuts[i]:cuts[i + 1]] for i in range(len(blocks))]
    out += [h._get(f"C_{h.index}") for h in fl.holders_]
    return out


def test_server_never_holds_a_mask_or_a_raw_block(fitted, federation):
    blocks, *_, fl, _ = fitted
    secrets_ = _secrets(fl, blocks, federation)
    state = Path(fl.flower_state_dir_)
    records = [r for task in ("fit", "predict") for r in pickle.loads((state / f"record-{task}.pkl").read_bytes())]
    sealed = [r for r in records if json.loads(r[1])[8]]
    assert {"A", "H_1", "G", "N", "M_new", "s_12"} <= {json.loads(r[1])[4] for r in sealed}
    for _, meta, payload in sealed:  # ciphertext: no .npy image, no float of any mask
        assert not payload.startswith(b"\x93NUMPY") and not payload.startswith(b"OM")
        for s in secrets_:
            assert s.ravel()[:2].tobytes() not in payload
    for _, meta, payload in records:
        if json.loads(meta)[8]:
            continue
        value = np.asarray(decode_value(payload), float)
        for s in secrets_:
            if value.shape == s.shape:
                assert not np.allclose(value, s, atol=1e-6), f"{meta} equals a secret"
            for sub in (s, s.T):  # nor a block of it
                if value.ndim == 2 and sub.ndim == 2 and value.shape[1] == sub.shape[1] and len(sub) <= len(value):
                    assert not np.allclose(value[:len(sub)], sub, atol=1e-6), f"{meta} holds a secret"


def test_unknown_superlink_and_local_only_methods_are_refused(fitted):
    blocks, Y, *_ = fitted
    with pytest.raises(ValueError, match="no running federation"):
        P3LS(2, random_state=0, transport="flower", superlink="127.0.0.1:1").fit(blocks, Y)
    with pytest.raises(NotImplementedError, match="local transport"):
        fitted[5].transform(fitted[2])
    with pytest.raises(NotImplementedError, match="local transport"):
        fitted[5].relevance()
    with pytest.raises(ValueError, match="party 2: new block has 2 columns, training had 3"):
        fitted[5].predict([fitted[2][0], fitted[2][0], fitted[2][2]])


def test_party_killed_mid_protocol_is_named_and_nothing_hangs():
    blocks, Y, _ = p3ls_data(widths=(2, 3))
    with running_federation(["ta", "1", "2"]) as fed:
        victim = fed.data_dirs["2"]

        def kill_after_hello():
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and not list(victim.glob("p3ls-*.pkl")):
                time.sleep(0.1)
            fed.kill_party("2")

        killer = threading.Thread(target=kill_after_hello, daemon=True)
        killer.start()
        t0 = time.monotonic()
        with pytest.raises(FederationError, match="party 2"):
            P3LS(2, random_state=0, transport="flower", superlink=fed.address).fit(blocks, Y)
        assert time.monotonic() - t0 < 400
        killer.join(timeout=10)


def test_a_serverapp_that_dies_is_reported_not_awaited(federation, tmp_path):
    t0 = time.monotonic()
    with pytest.raises(FederationError, match="ended"):
        submit_run(APP_DIR, federation.flwr_home, {"job-path": str(tmp_path / "missing.json")},
                   tmp_path / "result.json", timeout=300, check_alive=federation.check_alive, env=federation.env)
    assert time.monotonic() - t0 < 200
