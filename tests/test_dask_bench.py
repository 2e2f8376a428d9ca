"""bench/bench_scale.py runs end to end on a small data set (its --quick writes 2 GB: too long for CI)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_scale_smoke(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_scale.py"), "--quick", "--gb", "0.04",
                          "--no-cluster", "--seed", "3", "--dir", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    figures = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    assert out.returncode in (0, 1), out.stderr[-2000:]
    for key in ("rows", "data_gb", "seconds", "peak_rss_gb", "rows_per_second", "ratio_to_io_floor",
                "scale_ratio_to_io_floor", "max_rel_diff_vs_numpy", "load_avg", "blas_threads"):
        assert key in figures, (key, out.stdout[-2000:])
    assert figures["claim_equal_to_numpy_1e-9"] == "PASS", out.stdout[-2000:]
    assert figures["claim_peak_memory_below_2gb"] == "PASS", out.stdout[-2000:]
    assert int(figures["rows"]) == 156250 and float(figures["max_rel_diff_vs_numpy"]) < 1e-9
    assert list(tmp_path.iterdir()) == []  # the data set is removed
