"""The one builder of shareable releases: DP outputs and declared-public inputs, each with its provenance.

A *shareable release* is what a data owner may hand to others. It is assembled from an explicit list
of :class:`Field` s, never from "every fitted attribute": each field is either

- ``provenance="dp"``: a DP release recorded in the fit's ledger, or post-processing of such
  releases only; ``source`` names the ledger releases it is computed from (``"*"``: all of them);
- ``provenance="public"``: an input the user declared public (ε, δ, a public bound, a public centre,
  a label set, the number of components); ``source`` says where the declaration came from.

The release carries that list as its ``manifest`` beside the ledger and the guarantee sentence, so a
reader can check, field by field, what the guarantee covers. :func:`build_release` refuses a field
whose DP source is not in the ledger, a non-private fit (nothing to share under a guarantee), and
names that only private bookkeeping has (seeds, hashes, counts, fingerprints).
Everything else the owner may want goes in the owner's workbook (:mod:`engine.release.workbook`).

Written by hand: no kept library assembles DP releases with a provenance manifest.

Examples
--------
>>> from engine.privacy import PrivacyLedger, Release
>>> led = PrivacyLedger(); _ = led.add(Release.gaussian(name="mean", sigma=1.0, sensitivity=1.0, delta=1e-5))
>>> rel = build_release("example", "privalab.example.release/1",
...                     [Field("mean_", 0.3, "dp", "mean"), Field("epsilon", 1.0, "public", "budget", role="param")],
...                     led, guarantee="(1, 1e-5)-DP")
>>> [m["field"] for m in rel["manifest"]]
['mean_', 'epsilon']
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.privacy.ledger import Neighbouring, PrivacyLedger, ledger_totals
from engine.release.export import _Skip, decode_value, encode_value, ledger_from_dict

__all__ = [
    "CALLER",
    "PUBLIC_BOUND",
    "PUBLIC_CENTRE",
    "RELEASE_KIND",
    "SETTING",
    "SHAREABLE_NOTICE",
    "Field",
    "build_release",
    "declared_bound_fields",
    "estimator_from_release",
    "release_problems",
    "release_to_json",
    "setting_fields",
]

RELEASE_KIND = "shareable release"
SHAREABLE_NOTICE = ("Shareable release: differentially private outputs and inputs the owner declared public only; "
                    "the manifest names the ledger release or the public declaration behind every field.")

#: Names that belong to the owner's private bookkeeping, never to a shareable release.
_FORBIDDEN = re.compile(r"(seed|random_state|sha256|sha1|hash|fingerprint|hmac|clipped|count|largest|max_norm"
                        r"|reference|test_|n_rows|row_count|n_samples)", re.I)
#: Under replace-one neighbours the row count N is public (both data sets have N rows).
_PUBLIC_UNDER_REPLACE = re.compile(r"^(n_samples|n_rows)_?$", re.I)
_HEX64 = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])")


@dataclass(frozen=True)
class Field:
    """One field of a shareable release.

    name : key in the release (a trailing underscore marks a fitted attribute).
    value : the value (numbers, arrays, frames, plain data).
    provenance : "dp" or "public".
    source : the ledger release name(s) ("a, b" or "*") for "dp"; the declared public input for "public".
    role : "attribute" (restored as a fitted attribute), "param" (a constructor parameter) or "info".
    """

    name: str
    value: Any
    provenance: str
    source: str
    role: str = "attribute"

    def __post_init__(self) -> None:
        if self.provenance not in ("dp", "public"):
            raise ValueError(f"field {self.name!r}: provenance must be 'dp' or 'public', got {self.provenance!r}")
        if self.role not in ("attribute", "param", "info"):
            raise ValueError(f"field {self.name!r}: role must be 'attribute', 'param' or 'info'")
        if not str(self.source).strip():
            raise ValueError(f"field {self.name!r}: a source is required (ledger release or public declaration)")


#: The provenance sentences every method's release uses for what the user declared public.
PUBLIC_BOUND = "user-declared public bound"
PUBLIC_CENTRE = "user-declared public centre"
SETTING = "setting chosen by the user (public)"
CALLER = "declared public by the caller"


def setting_fields(params: dict[str, Any], names: Iterable[str]) -> list[Field]:
    """One public "param" field per setting the user chose (``params``: ``get_params()``)."""
    return [Field(n, params[n], "public", SETTING, role="param") for n in names]


def declared_bound_fields(params: dict[str, Any]) -> list[Field]:
    """The declared public bounds ``x_bound``, ``y_bound`` and, when given, the public centre (``x_center``,
    ``y_center``) of a strict second-moment release (edPLS, DP-PCR), as public "param" fields."""
    fields = [Field("x_bound", float(params["x_bound"]), "public", PUBLIC_BOUND, role="param"),
              Field("y_bound", float(params["y_bound"]), "public", PUBLIC_BOUND, role="param")]
    if params.get("x_center") is not None:
        xc = np.asarray(params["x_center"], dtype=float)
        fields += [Field("x_center", xc if xc.ndim else float(xc), "public", PUBLIC_CENTRE, role="param"),
                   Field("y_center", float(params["y_center"]), "public", PUBLIC_CENTRE, role="param")]
    return fields


def _check(fields: list[Field], ledger: PrivacyLedger) -> None:
    names = [f.name for f in fields]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"fields named twice: {sorted(dup)}")
    released = {r.name for r in ledger.entries}
    for f in fields:
        replace_one = ledger.neighbouring is Neighbouring.REPLACE_ONE
        if replace_one and _PUBLIC_UNDER_REPLACE.match(f.name) and f.provenance == "public":
            continue
        if _FORBIDDEN.search(f.name):
            raise ValueError(f"field {f.name!r} is private bookkeeping (seeds, hashes, counts, reference or test "
                             "values): it belongs in the owner's workbook, not in a shareable release")
        if f.provenance == "dp" and f.source != "*":
            missing = [s for s in (x.strip() for x in f.source.split(",")) if s not in released]
            if missing:
                raise ValueError(f"field {f.name!r} names ledger releases {missing} that this fit did not make")


def build_release(method: str, fmt: str, fields: list[Field], ledger: PrivacyLedger, *, guarantee: str,
                  extra_notes: list[str] | None = None) -> dict[str, Any]:
    """The shareable release of one fit as plain JSON data (see the module docstring).

    Parameters
    ----------
    method : the method's key (e.g. "edpls").
    fmt : format tag, e.g. "privalab.edpls.release/1".
    fields : list of :class:`Field`: the whole content; nothing else is added but the ledger.
    ledger : the fit's own ledger (its status labels the release).
    guarantee : the sentence stating what holds (from the ledger: :func:`engine.privacy.wording.ledger_text`).

    Returns
    -------
    dict with keys format, kind, method, notice, fields, types, manifest, ledger, ledger_totals,
    guarantee (and notes).
    """
    if ledger is None or not len(ledger):
        raise ValueError("nothing was released with noise (no privacy): a non-private model is not a shareable "
                         "release; it belongs in the owner's workbook")
    _check(fields, ledger)
    types: dict[str, Any] = {}
    values = {}
    for f in fields:
        try:
            values[f.name] = encode_value(f.value, f"fields.{f.name}", types)
        except _Skip as why:
            raise ValueError(f"field {f.name!r} is not plain data ({why})") from None
    out = {
        "format": fmt, "kind": RELEASE_KIND, "method": method, "notice": SHAREABLE_NOTICE,
        "fields": values, "types": types,
        "manifest": [{"field": f.name, "provenance": f.provenance, "from": f.source, "role": f.role} for f in fields],
        "ledger": encode_value(ledger.to_dict()), "ledger_totals": ledger_totals(ledger),
        "guarantee": str(guarantee),
    }
    if extra_notes:
        out["notes"] = [str(n) for n in extra_notes]
    return out


def release_to_json(release: dict[str, Any], **json_kwargs: Any) -> str:
    """Strict JSON text of a release (no NaN literals)."""
    json_kwargs.setdefault("allow_nan", False)
    return json.dumps(release, **json_kwargs)


def estimator_from_release(data: dict[str, Any] | str | bytes, cls: type, fmt: str) -> Any:
    """An estimator of class ``cls`` rebuilt from a shareable release: its "param" fields as constructor
    parameters, its "attribute" fields as fitted attributes, the ledger as ``privacy_ledger_``.

    Anything the release does not hold (private state, the reference model) stays unset.
    """
    if isinstance(data, (str, bytes)):
        data = json.loads(data)
    if not isinstance(data, dict) or data.get("format") != fmt or data.get("kind") != RELEASE_KIND:
        raise ValueError(f"not a shareable {cls.__name__} release (expected format {fmt!r})")
    types = data.get("types", {})
    roles = {m["field"]: m["role"] for m in data["manifest"]}
    fields = {k: decode_value(v, f"fields.{k}", types) for k, v in data["fields"].items()}
    est = cls(**{k: v for k, v in fields.items() if roles.get(k) == "param"})
    for k, v in fields.items():
        if roles.get(k) == "attribute":
            setattr(est, k, v)
    est.privacy_ledger_ = ledger_from_dict(data["ledger"])
    return est


def release_problems(obj: Any) -> list[str]:
    """What in ``obj`` (a release dict, JSON text, CSV or HTML text) must never be in a shareable file:
    64-hex-digit tokens (content hashes), seed or random_state keys. Empty when clean."""
    text = obj if isinstance(obj, str) else json.dumps(obj, default=str)
    out = [f"64-hex-digit token {m.group(0)[:12]}..." for m in _HEX64.finditer(text)]
    out += [f"key {m.group(1)!r}" for m in re.finditer(r'"([^"]*(?:seed|random_state)[^"]*)"\s*:', text, re.I)]
    if re.search(r"\bseed\b", text, re.I) and not re.search(r"noise seed is known", text, re.I):
        out.append("the word 'seed'")
    return out
