"""Real spectra sample sets read at run time from the data that chemotools ships (never copied into the repo).

* :func:`fermentation_frame`: 21 MIR spectra of a lignocellulosic fermentation with their HPLC glucose
  reference (g/L), ``chemotools.datasets.load_fermentation_train``: 1019 wavenumbers (428-1798 cm⁻¹); the 28
  channels above 1798 cm⁻¹, zero in all 21 spectra (no signal, and a constant column cannot be scaled), are
  left out;
* :func:`fermentation_public_spectra`: the 1629 unlabelled spectra measured during another run of the same
  process (``load_fermentation_test``), a published data set: a public reference set of spectra;
* :func:`coffee_frame`: 60 ATR-FTIR spectra of coffee (1841 channels) with their country of origin
  (Ethiopia, Brasil, Vietnam; 20 each), ``load_coffee``: a text label column ``origin`` for classification.

Column names are strings as ``load_table`` gives them: a wavenumber as its number (``"428"``), a coffee
channel as its index (``"0"``). chemotools is imported on first use. No streamlit here.
"""
from __future__ import annotations

import pandas as pd

__all__ = ["coffee_frame", "fermentation_frame", "fermentation_public_spectra"]


def _channel_names(columns) -> list:
    names = []
    for c in columns:
        v = float(c)
        names.append(str(int(v)) if v.is_integer() else repr(v))
    if len(set(names)) != len(names):  # never merge two channels under one name
        return [str(c) for c in columns]
    return names


def _spectra(X: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(X.to_numpy(dtype=float), columns=_channel_names(X.columns))
    return out


def fermentation_frame() -> pd.DataFrame:
    """21 rows: 1019 wavenumber columns (``"428"`` .. ``"1798"``) then ``glucose`` (g/L)."""
    from chemotools.datasets import load_fermentation_train

    X, y = load_fermentation_train()
    df = _spectra(X)
    df = df.loc[:, (df != 0).any(axis=0)]  # the channels that are zero in every spectrum carry nothing
    df["glucose"] = y["glucose"].to_numpy(dtype=float)
    return df


def fermentation_public_spectra() -> pd.DataFrame:
    """The 1629 unlabelled spectra of the fermentation data (all 1047 wavenumber columns; those of
    :func:`fermentation_frame` among them): a published data set, so public."""
    from chemotools.datasets import load_fermentation_test

    X, _ = load_fermentation_test()
    return _spectra(X)


def coffee_frame() -> pd.DataFrame:
    """60 rows: 1841 channel columns (``"0"`` .. ``"1840"``) then ``origin`` (text: the country)."""
    from chemotools.datasets import load_coffee

    X, labels = load_coffee()
    df = _spectra(X)
    df["origin"] = labels.iloc[:, 0].astype(str).str.strip().to_numpy()
    return df
