"""The odometer's total of an unchanged set of releases is computed once per process (``ui.run_history.
composed_summary``, a cache keyed by the releases themselves) and is the same total: equal to the composed ledger's
own ``ledger_totals`` built by hand, for add/remove and replace-one releases together and with a caveat; a new
release is a new key and a new, larger total. (The totals themselves are checked against independent oracles in
tests/test_odometer_pages.py.)"""
from __future__ import annotations

from engine.privacy.ledger import Neighbouring, PrivacyLedger, Release, ledger_totals, under_replace_one
from engine.privacy.wording import headline_total
from ui.run_history import composed_summary, composed_total


def _ledger(neighbouring, sigmas, caveat=""):
    led = PrivacyLedger(neighbouring=neighbouring)
    for i, s in enumerate(sigmas):
        led.add(Release.gaussian(name=f"release {i}", sigma=s, sensitivity=1.0, delta=1e-6))
    if caveat:
        led.add_caveat(caveat)
    return led


def _run(ledger, data_set="ds"):
    return {"data set": data_set, "ledger": ledger, "companion_ledgers": []}


def test_an_unchanged_history_is_totalled_once_and_to_the_ledgers_own_total():
    composed_summary.cache_clear()
    add_remove = _ledger(Neighbouring.ADD_REMOVE, [2.0, 3.0])
    replace_one = _ledger(Neighbouring.REPLACE_ONE, [4.0], caveat="a seed was fixed")
    runs = {"a": _run(add_remove), "b": _run(replace_one), "c": _run(_ledger(Neighbouring.ADD_REMOVE, [1.0]), "other")}
    first = composed_total(runs, "ds")
    misses = composed_summary.cache_info().misses
    again = composed_total({k: dict(v) for k, v in runs.items()}, "ds")  # a rerun: equal releases, new objects
    assert again == first
    assert composed_summary.cache_info().misses == misses and composed_summary.cache_info().hits >= 1

    by_hand = PrivacyLedger(neighbouring=Neighbouring.REPLACE_ONE)  # both relations: composed under replace-one
    by_hand.extend(under_replace_one(add_remove).entries + replace_one.entries)
    by_hand.add_caveat("a seed was fixed")
    total = ledger_totals(by_hand, pld=True, as_json=False)
    eps, delta, key = headline_total(total)
    assert (first["epsilon"], first["delta"], first["accountant"]) == (eps, delta, key)
    assert first["releases"] == 3 and first["status"] == total["status"] == "not proven" and first["restated"]

    runs["d"] = _run(_ledger(Neighbouring.REPLACE_ONE, [5.0]))  # a new release: a new key, a larger total
    more = composed_total(runs, "ds")
    assert composed_summary.cache_info().misses == misses + 1
    assert more["releases"] == 4 and more["epsilon"] > first["epsilon"]
