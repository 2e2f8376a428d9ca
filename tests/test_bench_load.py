"""bench/bench_load.py in small (one server, N = 1 then 2 sessions on edPLS) and the two server-time cuts it measured.

The bench runs in its own process group, so a timeout ends it together with the Streamlit server it started (the
bench itself stops the server on every other way out).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.data.columns import id_columns, numeric_columns

ROOT = Path(__file__).resolve().parents[1]


def _run_group(cmd, timeout: float) -> subprocess.CompletedProcess:
    """``cmd`` in a new process group; on timeout the whole group is killed (the bench's server included)."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"bench_load did not end within {timeout} s:\n{out[-2000:]}\n{err[-2000:]}") from None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
@pytest.mark.app  # starts the real app (streamlit run app.py)
def test_bench_load_tiny_variant_serves_every_session():
    res = _run_group([sys.executable, "bench/bench_load.py", "--quick", "--sizes", "1,2", "--singles", "1",
                      "--timeout", "60"], timeout=240)
    figures = dict(line.split("=", 1) for line in res.stdout.splitlines() if "=" in line)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    for n in (1, 2):
        assert figures[f"errors_{n}"] == "0"
        first = float(figures[f"p50_first_result_s_{n}"])
        assert 0 < first <= float(figures[f"p50_finished_s_{n}"]) < 60
        assert float(figures[f"server_cpu_s_per_session_{n}"]) > 0
    assert 0.05 < float(figures["server_peak_rss_gb"]) < 4
    assert figures["claim_no_errors_at_2"] == "PASS" and figures["claim_server_memory_bounded"] == "PASS"


@pytest.mark.slow
@pytest.mark.app  # starts the real app, three times, and nginx
@pytest.mark.skipif(shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists(),
                    reason="nginx is not installed (apt-get install nginx)")
def test_bench_load_through_the_proxy_serves_every_session_and_prints_the_ratio():
    """``--processes 2`` in small (one round each): 32 sessions through nginx, none lost, 16 per process; the exit
    code follows the ratio claim (the ratio itself depends on the machine's free cores)."""
    res = _run_group([sys.executable, "bench/bench_load.py", "--quick", "--processes", "2", "--sizes", "1",
                      "--singles", "1", "--repeats", "1", "--timeout", "90"], timeout=420)
    figures = dict(line.split("=", 1) for line in res.stdout.splitlines() if "=" in line)
    tail = res.stdout[-2000:] + res.stderr[-2000:]
    assert figures.get("team_errors_32") == "0" and figures.get("errors_16") == "0", tail
    assert figures["team_sessions_per_process_32"] == "16,16"
    assert figures["claim_no_errors_at_32_through_the_proxy"] == "PASS"
    ratio = float(figures["p95_32_two_processes_vs_p95_16_one"])
    assert ratio > 0 and float(figures["load_avg_1min"]) >= 0
    assert figures["claim_p95_32_on_2_processes_within_p95_16_on_one"] == ("PASS" if ratio <= 1 else "FAIL")
    assert res.returncode == (0 if figures["claims_failed"] == "0" else 1)


def test_freeze_after_imports_freezes_once_per_new_import():
    """In a fresh interpreter (gc.freeze is process-wide): a first call freezes, a second without new imports
    does not, an import makes the next call freeze again; frozen objects are out of gc.collect's walk."""
    code = textwrap.dedent("""
        import gc
        from ui.gc_freeze import freeze_after_imports
        assert freeze_after_imports() is True
        frozen = gc.get_freeze_count()
        assert frozen > 1000 and len(gc.get_objects()) < frozen
        assert freeze_after_imports() is False
        import fractions  # noqa: F401 (a module not imported yet)
        assert freeze_after_imports() is True and gc.get_freeze_count() > frozen
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_numeric_columns_read_off_dtypes_match_the_per_column_reading():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"sample_id": np.arange(5), "name": list("abcde"), "1100": rng.random(5),
                       "flag": [True, False, True, True, False], "n": pd.array([1, 2, None, 4, 5], dtype="Int64"),
                       "cat": pd.Categorical(list("xyxyx")), "when": pd.date_range("2020", periods=5),
                       "s": pd.array(list("vwxyz"), dtype="string")})
    oracle = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    assert numeric_columns(df) == oracle == ["sample_id", "1100", "flag", "n"]
    assert id_columns(df) == ["sample_id"]
    dup = pd.DataFrame(rng.random((3, 3)), columns=["a", "a", "b"])
    assert numeric_columns(dup) == [c for c in dup.columns if pd.api.types.is_numeric_dtype(dup[c])] == ["b"]


def test_recommended_references_are_noise_free_and_the_same_fit_as_inside_compare():
    """The references a page keeps for every session (no noise drawn) equal the ones compare_recommended fits
    itself; with them handed in, the result is the same for the same known noise seed."""
    from engine.methods.edpls.recommended_evaluation import compare_recommended, recommended_references

    df = pd.read_csv(ROOT / "sample_data" / "nir_spectra.csv").iloc[:60]
    X, y = df.iloc[:, 4::4].to_numpy(dtype=float), df["moisture"].to_numpy(dtype=float)  # 88 channels: fast
    tr, te = np.arange(40), np.arange(40, 60)
    y_range = (float(np.floor(y.min())) - 1, float(np.ceil(y.max())) + 1)
    settings = dict(delta=1e-5, y_range=y_range, n_components_reference=3)
    a = recommended_references(X, y, tr, **settings)
    b = recommended_references(X, y, tr, **settings)  # fresh entropy each call: still the same fits (no noise)
    for ref_a, ref_b in zip(a, b):
        np.testing.assert_array_equal(ref_a.coef_, ref_b.coef_)
    inside = compare_recommended(X, y, tr, te, epsilon=1.0, random_state=7, **settings)
    handed = compare_recommended(X, y, tr, te, epsilon=1.0, random_state=7, references=a, **settings)
    np.testing.assert_array_equal(inside["noise_free"].coef_, a[0].coef_)
    np.testing.assert_array_equal(inside["plain"].coef_, a[1].coef_)
    for key in ("pred_private", "pred_plain", "pred_constant"):
        np.testing.assert_array_equal(inside[key], handed[key])
    assert inside["rmsep_private"] == handed["rmsep_private"]
