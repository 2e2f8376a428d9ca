"""Packaging (issue #29 item 4): the console script, the extras, and an engine that needs no app, Dask or Flower.

The import test runs in a fresh interpreter with a meta-path finder that refuses every module of the optional
extras, so an engine module importing one at load time fails here (as it would after ``pip install .``).
"""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import tomllib
from importlib import import_module
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

#: Top-level modules of the [app], [dask] and [federation] extras: the engine must import without any of them.
EXTRA_MODULES = ("streamlit", "plotly", "kaleido", "dask", "distributed", "pyarrow", "flwr", "cryptography")


def test_console_script_resolves_to_the_cli():
    target = PYPROJECT["project"]["scripts"]["privalab"]
    module, _, attr = target.partition(":")
    assert (module, attr) == ("engine.cli", "main")
    assert callable(getattr(import_module(module), attr))


def test_privalab_help_lists_fit_and_app(monkeypatch, capsys):
    from engine.cli import main

    monkeypatch.setattr(sys, "argv", [str(Path("/venv/bin/privalab"))])
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: privalab")
    subcommands = re.search(r"\{([a-z,]+)\}", out).group(1).split(",")
    assert set(subcommands) >= {"fit", "app"}


def test_privalab_app_runs_streamlit_on_loopback(monkeypatch):
    """``privalab app`` becomes ``<this python> -m streamlit run app.py`` bound to 127.0.0.1 in the checkout."""
    import engine.cli.commands as cli

    calls = []
    monkeypatch.setattr(cli.os, "chdir", lambda path: calls.append(("chdir", path)))
    monkeypatch.setattr(cli.os, "execv", lambda exe, cmd: calls.append((exe, cmd)))
    assert cli.main(["app", "--port", "8599"]) == 0
    (_, cwd), (exe, cmd) = calls
    assert exe == sys.executable
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert Path(cmd[4]) == ROOT / "app.py" and Path(cwd) == ROOT
    assert cmd[cmd.index("--server.address") + 1] == "127.0.0.1"
    assert cmd[cmd.index("--server.port") + 1] == "8599"


def test_privalab_app_without_a_checkout_says_so(tmp_path, capsys):
    from engine.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["app", "--app", str(tmp_path / "missing.py")])
    assert exc.value.code == 2
    assert "no app script at" in capsys.readouterr().err


@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_engine_imports_and_fits_without_the_extras():
    code = textwrap.dedent(f"""
        import importlib.abc, sys
        BLOCKED = {EXTRA_MODULES!r}

        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ModuleNotFoundError(f"blocked optional dependency: {{name}}")  # as if absent
                return None

        sys.meta_path.insert(0, Block())
        import numpy as np
        import engine.cli, engine.methods.registry, engine.release, engine.privacy
        import engine.methods.edpls, engine.methods.dp_pcr, engine.methods.dp_cca, engine.methods.pca_gauss
        import engine.methods.adassp, engine.methods.p3ls, engine.methods.var_admm
        from engine.methods.edpls import make_strict_edpls

        rng = np.random.default_rng(0)
        X = rng.normal(size=(200, 30))
        model = make_strict_edpls(1.0, 1e-5, y_range=(-5.0, 5.0)).fit(X, X[:, 0])
        assert model.predict(X[:3]).shape == (3,)
        leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        assert not leaked, leaked
        print("ok")
    """)
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-3000:]


def test_requirements_install_the_extras_from_the_one_list():
    """requirements.txt installs everything the app needs and requirements-dev.txt adds [dev]; the versions live
    only in pyproject.toml."""
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    assert extras == {"app", "dask", "federation", "test", "dev"}

    def installed(path):
        lines = [ln.strip() for ln in (ROOT / path).read_text(encoding="utf-8").splitlines()]
        lines = [ln for ln in lines if ln and not ln.startswith("#")]
        assert all(ln.startswith("-e .[") for ln in lines), lines  # no second list of versions
        return {e for ln in lines for e in ln[len("-e .["):-1].split(",")}

    assert installed("requirements.txt") == {"app", "dask", "federation"}
    assert installed("requirements-dev.txt") == extras - {"test"}  # [dev] pulls in [test] itself
    assert any(d.startswith("privalab[test]") for d in PYPROJECT["project"]["optional-dependencies"]["dev"])
    base = " ".join(PYPROJECT["project"]["dependencies"])
    assert not any(m in base for m in ("streamlit", "flwr", "dask")), base
