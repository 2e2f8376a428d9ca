"""The suite's automatic markers (tests/conftest.py): a test reaching AppTest, LocalCluster or LocalFederation
through a helper or a fixture of its module gets ``app``, ``dask`` or ``federation``; the rest gets none."""
from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

# tests/conftest.py by its path: "import conftest" can find tests/browser/conftest.py instead (both are
# "conftest" on sys.path; which one pytest registered first depends on the collection order of a worker)
_SPEC = importlib.util.spec_from_file_location("suite_conftest", Path(__file__).with_name("conftest.py"))
conftest = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(conftest)

SOURCE = textwrap.dedent('''
    import pytest
    from streamlit.testing.v1 import AppTest
    from distributed import LocalCluster


    def _page():
        return AppTest.from_file("pages/edpls.py")


    def _opened():
        return _page().run()


    @pytest.fixture
    def cluster():
        with LocalCluster(n_workers=1) as c:
            yield c


    def _plain(x):
        return x + 1
''')


def test_helpers_reaching_a_seed_carry_its_marker(tmp_path):
    path = tmp_path / "test_sample.py"
    path.write_text(SOURCE)
    reach = conftest._module_closure(str(path))
    assert {"_page", "_opened"} <= reach["app"]
    assert "cluster" in reach["dask"] and "cluster" not in reach["app"]
    assert "_plain" not in reach["app"] | reach["dask"] | reach["federation"]


def test_a_broken_file_marks_nothing(tmp_path):
    path = tmp_path / "test_broken.py"
    path.write_text("def (:\n")
    assert conftest._module_closure(str(path)) == {m: frozenset() for m in conftest._SEEDS}


def test_this_module_is_not_an_app_test(request):
    assert request.node.get_closest_marker("app") is None
    assert request.node.get_closest_marker("slow") is None


def test_heavy_families_reach_xdist_as_groups(request):
    """Under ``--dist loadgroup`` every item carrying an ``xdist_group`` marker has the ``@<group>`` suffix that
    xdist's scheduler groups on (conftest's hook must run before xdist's: ``tryfirst``)."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("only meaningful under pytest-xdist's --dist loadgroup (.ci/run)")
    grouped = [item for item in request.session.items if item.get_closest_marker("xdist_group") is not None]
    wrong = [item.nodeid for item in grouped
             if not item.nodeid.endswith("@" + item.get_closest_marker("xdist_group").args[0])]
    assert not wrong, wrong[:5]
