"""Fixtures shared by the AppTest page tests, and the suite's markers.

Markers (registered in pyproject.toml, ``--strict-markers``) are put on automatically at collection:

- ``browser``: every test under tests/browser (real Chromium against ``streamlit run app.py``);
- ``federation``: the Flower tests (``tests/test_flower_*.py``, ``tests/test_federation_pages.py``) and any test
  that starts a ``running_federation``;
- ``dask``: the Dask tests (``tests/test_dask_*.py``) and any test that starts a ``LocalCluster``;
- ``app``: a test that runs a page or script under Streamlit's ``AppTest`` (directly, through a helper or a
  fixture of its module, or through the ``deferred`` fixture below);
- ``slow``: browser, federation and dask tests, plus the tests (or the heavy cases of a parametrised test) marked
  ``@pytest.mark.slow`` by hand: the heaviest page flows, Monte-Carlo audits and sensitivity searches, each with
  its measured duration (``pytest --durations``). ``pytest -m "not slow"`` is the fast lane; ``pytest`` and
  ``.ci/run`` still run everything.

Each marked test of the browser, federation and dask families is also put in an ``xdist_group`` of its family, so
that under ``pytest -n 2 --dist loadgroup`` (.ci/run) one worker starts that family's servers and the other
worker runs the rest.
"""
import ast
import functools
import inspect
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

#: pytest's own ``__main__``. Streamlit's script runner (every AppTest run) puts the script's module in
#: ``sys.modules["__main__"]`` and leaves it there; a process started later with the *spawn* method (a Dask
#: LocalCluster's Nanny workers) then re-runs that temporary script as its main and dies ("NameError: name
#: '__args' is not defined" after test_chemometrics' AppTest.from_function; "Nanny failed to start").
_PYTEST_MAIN = sys.modules.get("__main__")


def _scan_component_manifests_once() -> None:
    """Every ``AppTest`` scans the metadata of every installed distribution for Streamlit components (Streamlit
    1.67's ``scan_component_manifests``: 0.22 CPU s each, 197 times in the app tests, 43 CPU s of the suite). The
    installed distributions do not change during a test session: the first scan's result is kept for the process.
    (Streamlit releases without the v2 components have no such scan.)"""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:
        return
    manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


_scan_component_manifests_once()


@pytest.fixture(autouse=True)
def _pytest_main_restored():
    """Give ``sys.modules["__main__"]`` back to pytest after every test (see ``_PYTEST_MAIN``)."""
    yield
    if _PYTEST_MAIN is not None and sys.modules.get("__main__") is not _PYTEST_MAIN:
        sys.modules["__main__"] = _PYTEST_MAIN


@pytest.fixture()
def deferred(monkeypatch):
    """The zero-argument callables behind deferred download buttons, by file id (AppTest's runtime keeps them
    only while the script runs)."""
    seen = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, *args, **kwargs):
        file_id = original(self, data_callable, *args, **kwargs)
        seen[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return seen


# ------------------------------------------------------------------------------------------------------ markers
_TESTS = Path(__file__).resolve().parent
#: names whose use (directly, or through a helper function or fixture of the same module) puts a marker on
_SEEDS = {
    "app": {"AppTest", "deferred"},
    "dask": {"LocalCluster"},
    "federation": {"running_federation", "LocalFederation"},
}
#: families that also count as slow and run in one xdist group each
_HEAVY = ("browser", "federation", "dask")


def _names(node: ast.AST) -> set[str]:
    """Every name, attribute and argument name used inside ``node``."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
    return out


@functools.cache
def _module_closure(path: str) -> dict[str, frozenset[str]]:
    """For each marker of ``_SEEDS``: the module-level functions of the file at ``path`` that reach a seed name
    (fixed point over the functions calling one another)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return {m: frozenset() for m in _SEEDS}
    uses = {n.name: _names(n) for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    out = {}
    for marker, seeds in _SEEDS.items():
        reach = set(seeds)
        changed = True
        while changed:
            new = {name for name, used in uses.items() if name not in reach and used & reach}
            reach |= new
            changed = bool(new)
        out[marker] = frozenset(reach)
    return out


@functools.cache
def _source_names(fn: Callable[..., object]) -> frozenset[str]:
    """The names a test function's source uses. Cached per function: the parametrised cases of one test share
    it, and reading and parsing the source for each of the ~3,400 items took most of the collection hook."""
    try:
        return frozenset(_names(ast.parse(textwrap.dedent(inspect.getsource(fn)))))
    except (OSError, TypeError, SyntaxError):
        return frozenset()


def _test_names(item: pytest.Item) -> set[str]:
    """The names a test's own source uses, plus its fixtures."""
    names = set(getattr(item, "fixturenames", ()))
    fn = getattr(item, "function", None)
    if fn is not None:
        names |= _source_names(getattr(fn, "__func__", fn))
    return names


@functools.cache
def _path_families(path_str: str) -> tuple[str, frozenset[str]]:
    """The resolved path of a test file and the families its location alone implies (cached per file)."""
    path = Path(path_str).resolve()
    found = set()
    if _TESTS / "browser" in path.parents:
        found.add("browser")
    if path.name.startswith("test_flower_") or path.name == "test_federation_pages.py":
        found.add("federation")
    if path.name.startswith("test_dask_"):
        found.add("dask")
    return str(path), frozenset(found)


def _families(item: pytest.Item) -> set[str]:
    path, by_path = _path_families(str(item.path))
    found = set(by_path)
    names = _test_names(item)
    for marker, reach in _module_closure(path).items():
        if names & reach:
            found.add(marker)
    return found


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the ``app``/``browser``/``federation``/``dask`` markers on, and ``slow`` with an ``xdist_group`` on
    the heavy families (see the module docstring).

    ``tryfirst``: pytest-xdist's worker reads the ``xdist_group`` markers in its own
    ``pytest_collection_modifyitems`` and is registered after this conftest, so without ``tryfirst`` it ran
    first and saw no group."""
    for item in items:
        families = _families(item)
        for name in sorted(families):
            item.add_marker(getattr(pytest.mark, name))
        heavy = [f for f in _HEAVY if f in families]
        if heavy:
            item.add_marker(pytest.mark.slow)
            if item.get_closest_marker("xdist_group") is None:
                item.add_marker(pytest.mark.xdist_group(heavy[0]))


@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
def pytest_collection_modifyitems_xdist_group(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup``, give every item with an ``xdist_group`` marker the ``@<group>`` suffix on its
    node id that xdist's scheduler groups on, where xdist's own hook could not.

    pytest-xdist 3.8 appends the suffix by assigning ``item._nodeid``; since pytest 9.2 a node id is
    ``str(item._id)`` (a structured ``NodeId``), so that assignment is lost and the groups silently vanish
    (pytest-dev/pytest-xdist#1386, open): the browser, Flower and Dask tests were spread over both workers, two
    Streamlit servers and two Chromiums at once. This does what xdist meant to, on the structured id; it does
    nothing where xdist's assignment took effect (older pytest) or outside loadgroup. Delete it once an xdist
    release fixes #1386 (tests/test_markers.py checks the suffix either way).
    """
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        if not names or item.nodeid.endswith("@" + "_".join(names)):
            continue
        node_id = getattr(item, "_id", None)
        parse = getattr(type(node_id), "parse", None)
        if parse is not None:
            item._id = parse(f"{item.nodeid}@{'_'.join(names)}")

