"""The registry is the one list of methods (issue 29): a throw-away method, registered by one spec, reaches the
command line (sub-command, flags, batch fit), the navigation, the audit catalogue, the export tests' and the
hostile-upload tests' parametrisation, and the job runner's preloads, with no other file edited.

The method lives in a temporary package (``tmp_path`` on ``sys.path``) and is patched into
``engine.methods.registry.METHODS`` for the test only. Oracle: each consumer's own answer (argparse's parse and
help text, ``audit_targets``/``make_case``, the parametrisation functions of the test modules).
"""
from __future__ import annotations

import sys
import textwrap

import pytest

from engine.methods import registry
from engine.methods.registry import AuditTarget, CliSpec, MethodSpec

PACKAGE = "throwaway_method_29"


@pytest.fixture
def new_method(tmp_path, monkeypatch):
    pkg = tmp_path / PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent('''
        """A throw-away method: an estimator, its compare, its audit case, its command line."""
        from sklearn.base import BaseEstimator


        class Throwaway(BaseEstimator):
            def fit(self, X, y=None):
                self.coef_ = 0.0
                return self


        def compare(train, test, *, epsilon, delta, mode="strict", random_state=None, **params):
            raise NotImplementedError


        def audit_case(mode, epsilon, delta, bug=None):
            return ("case", mode, epsilon, delta, bug)


        def arguments(p):
            p.add_argument("--x-bound", type=float, required=True, help="public bound of the throw-away")


        def batch_fit(job):
            return Throwaway().fit(None), {"release": "throwaway"}, {}
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = MethodSpec(
        "throwaway", "Throw-away", ":material/delete:", "A method that exists for one test.", "pages/throwaway.py",
        f"{PACKAGE}:Throwaway", "table", "model_json", f"{PACKAGE}:compare",
        (AuditTarget("throwaway", "Throw-away release", ("strict",), f"{PACKAGE}:audit_case"),),
        "bench/reproduce_throwaway.py",
        CliSpec("throw-away", "the throw-away fit", f"{PACKAGE}:arguments", f"{PACKAGE}:batch_fit", 3, ("throwaway",)),
        (PACKAGE,))
    monkeypatch.setattr(registry, "METHODS", registry.METHODS + (spec,))
    yield spec
    sys.modules.pop(PACKAGE, None)


def test_the_new_method_is_on_the_command_line(new_method, capsys):
    from engine.cli import batch
    from engine.cli.commands import build_parser, cli_methods

    assert cli_methods()["throw-away"] == "throwaway"
    parser = build_parser()
    args = parser.parse_args(["fit", "throw-away", "--data", "d.csv", "--epsilon", "1", "--delta", "1e-5", "--out",
                              "o.json", "--x-bound", "2.5"])
    assert (args.method, args.x_bound) == ("throw-away", 2.5)
    assert "python -m engine fit throw-away" in parser.epilog
    assert batch._fits()["throw-away"] is new_method.cli
    assert registry.resolve(new_method.cli.fit)(None)[1] == {"release": "throwaway"}
    with pytest.raises(SystemExit):
        parser.parse_args(["fit", "throw-away", "--data", "d.csv", "--epsilon", "1", "--delta", "1e-5", "--out", "o"])
    assert "--x-bound" in capsys.readouterr().err


def test_the_new_method_is_in_the_navigation(new_method):
    from ui.pages import method_pages

    pages = method_pages()
    assert pages[-1].file == "pages/throwaway.py" and pages[-1].title == "Throw-away"
    assert [p.file for p in pages] == [spec.page for spec in registry.METHODS]


def test_the_new_method_is_in_the_audit_catalogue(new_method):
    from engine.methods.audit_catalog import audit_targets, make_case, target_label

    assert audit_targets()["throwaway"] == ("Throw-away release", ("strict",))
    assert target_label("throwaway") == "Throw-away release"
    assert make_case("throwaway", "strict", 2.0, 1e-6) == ("case", "strict", 2.0, 1e-6, None)


def test_the_new_method_is_in_the_export_and_hostile_upload_tests(new_method):
    import test_exports
    import test_hostile_pages

    page_id, no_model = test_exports.export_pages()
    assert page_id["pages/throwaway.py"] == "throwaway" and "pages/throwaway.py" not in no_model
    spec = test_hostile_pages.hostile_specs()["throwaway"]
    assert (spec.file, spec.key, spec.valid[0]) == ("pages/throwaway.py", "throwaway_data", "small_table.csv")


def test_the_new_method_is_preloaded_and_lazy_from_its_spec(new_method):
    """The job runner's preloads and the batch's Dask fits are read off the specs."""
    from engine.cli.batch import LAZY_METHODS, lazy_methods
    from ui.runtime.jobs import PRELOAD, preload_modules

    assert PACKAGE in preload_modules() and preload_modules()[:3] == PRELOAD[:3]
    assert lazy_methods() - {"throwaway"} == LAZY_METHODS - {"throwaway"} and "throwaway" in lazy_methods()
