"""The in-run channel (engine.federation.flower.channel): lock-step rounds over mutual TLS, impostors refused.

Parties are threads of this process here (the Flower tests run them in their ClientApp processes); the hub
binds 127.0.0.1 and is always closed.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from engine.federation.flower.channel import ChannelError, Hub, pack, serve_party, unpack


def _echo_times(party):
    def handle(data):
        header, arrays = unpack(data)
        return pack({"party": party, "k": header["k"]}, {"v": arrays["v"] * int(party)})
    return handle


def _start(creds, party, handle, errors):
    def run():
        try:
            serve_party(creds, party, handle, timeout=60)
        except Exception as exc:  # noqa: BLE001 (kept for the test's assertion)
            errors.append(exc)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_rounds_in_lock_step_and_bytes_counted():
    parties = ["1", "2", "3"]
    errors = []
    with Hub(parties, timeout=30) as hub:
        threads = [_start(hub.credentials(f"node-{p}"), p, _echo_times(p), errors) for p in parties]
        hub.wait_connected()
        for k in range(5):
            replies = hub.round({p: pack({"k": k}, {"v": np.arange(4.0)}) for p in parties})
            for p, data in replies.items():
                header, arrays = unpack(data)
                assert header == {"party": p, "k": k}
                np.testing.assert_array_equal(arrays["v"], np.arange(4.0) * int(p))
        assert hub.bytes_down > 0 and hub.bytes_up > 0
    for t in threads:
        t.join(timeout=10)
    assert not errors


def test_one_stream_per_certificate_and_per_party():
    errors = []
    with Hub(["1", "2"], timeout=3) as hub:
        creds = hub.credentials("node-7")
        _start(creds, "1", _echo_times("1"), errors)
        time.sleep(1.0)
        _start(creds, "2", _echo_times("2"), errors)  # the same certificate again, now claiming party 2
        _start(hub.credentials("node-8"), "1", _echo_times("1"), errors)  # a second stream for party 1
        with pytest.raises(ChannelError, match="party 2 did not connect"):
            hub.wait_connected()
        assert hub.holder == {"1": "node-7"}
    assert len(errors) == 2 and all("PERMISSION_DENIED" in str(e) for e in errors)


def test_a_certificate_of_another_authority_is_refused():
    errors = []
    with Hub(["1"], timeout=3) as hub, Hub(["1"], timeout=3) as other:
        foreign = {**other.credentials("node-1"), "address": hub.address, "ca": hub.ca_pem.decode()}
        thread = _start(foreign, "1", _echo_times("1"), errors)  # the hub's address and CA, another CA's cert
        with pytest.raises(ChannelError, match="party 1 did not connect"):
            hub.wait_connected()
    thread.join(timeout=60)
    assert errors and "UNAVAILABLE" in str(errors[0])


def test_a_party_error_is_named():
    errors = []
    with Hub(["1"], timeout=30) as hub:
        def fail(data):
            raise ValueError("bad block")
        _start(hub.credentials("node-1"), "1", fail, errors)
        hub.wait_connected()
        with pytest.raises(ChannelError, match="party 1 failed: ValueError: bad block"):
            hub.round({"1": pack({})})


def test_hub_address_from_the_coordinator_setting(monkeypatch):
    """``PRIVALAB_HUB_ADDRESS`` (host or host:port) decides where the hub listens; unset: 127.0.0.1, any port; a
    value that is not host[:port] is refused naming the setting."""
    from engine.federation.flower.channel import hub_address
    from engine.federation.flower.runtime import HUB_ADDRESS_ENV

    monkeypatch.delenv(HUB_ADDRESS_ENV, raising=False)
    assert hub_address() == ("127.0.0.1", 0)
    monkeypatch.setenv(HUB_ADDRESS_ENV, "10.0.0.1:9095")
    assert hub_address() == ("10.0.0.1", 9095)
    assert hub_address("coordinator.example") == ("coordinator.example", 0)
    for bad in (":9095", "10.0.0.1:port", "10.0.0.1:70000"):
        with pytest.raises(ValueError, match=HUB_ADDRESS_ENV):
            hub_address(bad)
    monkeypatch.setenv(HUB_ADDRESS_ENV, "127.0.0.1")  # a party still reaches the hub at the address it was given
    errors = []
    with Hub(["1"], timeout=30) as hub:
        assert hub.address.startswith("127.0.0.1:") and hub.port > 0
        _start(hub.credentials("node-1"), "1", _echo_times("1"), errors)
        hub.wait_connected()
        assert unpack(hub.round({"1": pack({"k": 1}, {"v": np.ones(2)})})["1"])[0]["k"] == 1
    assert not errors
