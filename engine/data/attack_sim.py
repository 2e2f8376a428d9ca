"""The edPLS paper's simulated two-party spectra (spec ``edpls.md`` Sec. 5.1).

Nikzad-Langerodi et al., "(epsilon, delta)-differentially private partial least squares
regression": two data holders measure spectra on the same 100-channel grid. Both see the
analyte band s1 and interferent s2; party 1 alone sees interferent s3 (centre 40) and party 2
alone sees interferent s4 (centre 30). Each party draws its own concentrations
c_j ~ U[0, 10) (n = 100 rows each) and X_i = C_i S_i^T, y_i = c1. A trusted server stacks
X = [X1; X2] and fits one PLS model; the attack (``engine.attacks.pls_subspace``) shows what
the shared components reveal about the band only the *other* party has.

Every number is a parameter whose default is the paper's value. Two points the paper leaves
open are switchable (spec Sec. 5.1 and 9):

- ``height="pdf"`` (default) follows the authors' helper ``diPLSlib.utils.misc.gengaus``:
  a band is ``h * normpdf(channel, mu, sigma)``, so the peak is h / (sigma sqrt(2 pi)).
  ``height="peak"`` makes h the literal peak height.
- ``noise=0`` (default): the paper mentions no measurement noise (rank 3 per party).
  ``noise > 0`` adds i.i.d. N(0, noise^2) to every entry of X.

Written by hand: the generator is the paper's own experiment; only scipy's normal pdf is used.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm

from engine.privacy import as_generator

__all__ = [
    "PAPER_BANDS",
    "Band",
    "TwoPartySpectra",
    "gaussian_band",
    "make_attack_spectra",
    "max_row_norm_bound",
]


@dataclass(frozen=True)
class Band:
    """One Gaussian source of variability: centre and width in channels, height h."""

    name: str
    centre: float
    width: float
    height: float


#: The paper's four sources (centre mu, width sigma, height h), spec Sec. 5.1.
PAPER_BANDS = (
    Band("analyte", 50.0, 15.0, 8.0),
    Band("interferent 1", 70.0, 10.0, 10.0),
    Band("interferent 2", 40.0, 1.0, 0.5),
    Band("interferent 3", 30.0, 1.0, 0.5),
)


def gaussian_band(n_channels: int, centre: float, width: float, height: float, *,
                  height_convention: str = "pdf") -> np.ndarray:
    """A Gaussian band on the channel grid 0..n_channels-1, shape (n_channels,).

    height_convention: "pdf" gives ``height * normpdf(channel, centre, width)`` (the authors'
    ``gengaus``); "peak" gives ``height * exp(-(channel - centre)^2 / (2 width^2))``.
    """
    if n_channels < 1:
        raise ValueError(f"n_channels must be >= 1, got {n_channels}")
    if not width > 0:
        raise ValueError(f"band width must be > 0, got {width}")
    channels = np.arange(n_channels, dtype=float)
    if height_convention == "pdf":
        return height * norm.pdf(channels, loc=centre, scale=width)
    if height_convention == "peak":
        return height * np.exp(-0.5 * ((channels - centre) / width) ** 2)
    raise ValueError(f"height_convention must be 'pdf' or 'peak', got {height_convention!r}")


@dataclass
class TwoPartySpectra:
    """Two parties' simulated spectra and the ground truth behind them.

    Attributes
    ----------
    X1, X2 : ndarray (n1, m), (n2, m)
        Each party's spectra (rows = samples, columns = channels).
    y1, y2 : ndarray (n1,), (n2,)
        Each party's response (the analyte concentration).
    C1, C2 : ndarray (n1, b1), (n2, b2)
        The concentrations behind each party's spectra, columns in the order of ``party_bands``.
    signals : ndarray (n_bands, m)
        Every band on the channel grid (row j = band j).
    bands : tuple of Band
    party_bands : tuple of two tuples of int
        Which bands each party's spectra contain.
    unique_bands : tuple of two int
        The band only party 1 has, and the band only party 2 has.
    """

    X1: np.ndarray
    y1: np.ndarray
    X2: np.ndarray
    y2: np.ndarray
    C1: np.ndarray
    C2: np.ndarray
    signals: np.ndarray
    bands: tuple
    party_bands: tuple
    unique_bands: tuple
    params: dict = field(default_factory=dict)

    @property
    def n_channels(self) -> int:
        """The number of channels m."""
        return self.signals.shape[1]

    @property
    def channels(self) -> np.ndarray:
        """The channel numbers 0..m-1."""
        return np.arange(self.n_channels)

    @property
    def X(self) -> np.ndarray:
        """The server's stacked matrix [X1; X2], shape (n1 + n2, m)."""
        return np.vstack([self.X1, self.X2])

    @property
    def y(self) -> np.ndarray:
        """The stacked response [y1; y2], shape (n1 + n2,)."""
        return np.concatenate([self.y1, self.y2])

    @property
    def party(self) -> np.ndarray:
        """Party label (1 or 2) of every row of ``X``, shape (n1 + n2,)."""
        return np.concatenate([np.full(len(self.y1), 1), np.full(len(self.y2), 2)])

    def party_data(self, party: int) -> tuple[np.ndarray, np.ndarray]:
        """(X_i, y_i) of party 1 or 2."""
        _check_party(party)
        return (self.X1, self.y1) if party == 1 else (self.X2, self.y2)

    def unique_band(self, party: int) -> int:
        """Index (into ``bands``) of the band only ``party`` has."""
        _check_party(party)
        return self.unique_bands[party - 1]

    def secret_of_other(self, attacker: int) -> tuple[np.ndarray, float]:
        """What ``attacker`` tries to recover: the other party's unique band and its centre."""
        _check_party(attacker)
        j = self.unique_band(3 - attacker)
        return self.signals[j].copy(), float(self.bands[j].centre)

    def to_frame(self) -> pd.DataFrame:
        """Stacked data as a table: channel columns ``ch000``.., ``y``, ``party``."""
        width = max(3, len(str(self.n_channels - 1)))
        cols = [f"ch{j:0{width}d}" for j in range(self.n_channels)]
        df = pd.DataFrame(self.X, columns=cols)
        df["y"] = self.y
        df["party"] = self.party
        return df


def _check_party(party: int) -> None:
    if party not in (1, 2):
        raise ValueError(f"party must be 1 or 2, got {party!r}")


def make_attack_spectra(
    n_per_party=100,
    *,
    n_channels: int = 100,
    bands=PAPER_BANDS,
    shared_bands=(0, 1),
    unique_bands=(2, 3),
    response_band: int = 0,
    concentration_range=(0.0, 10.0),
    height: str = "pdf",
    noise: float = 0.0,
    random_state=None,
) -> TwoPartySpectra:
    """Draw the paper's two-party simulated spectra.

    Parameters
    ----------
    n_per_party : int or (int, int), default 100
        Rows per party (the paper: 100 each).
    n_channels : int, default 100
        Length of the channel grid 0..n_channels-1.
    bands : sequence of Band, default ``PAPER_BANDS``
        (centre, width, height) of every source of variability.
    shared_bands : tuple of int, default (0, 1)
        Bands present in both parties' spectra (analyte and interferent 1).
    unique_bands : (int, int), default (2, 3)
        The band only party 1 has and the band only party 2 has.
    response_band : int, default 0
        y = concentration of this band (the analyte); it must be shared.
    concentration_range : (low, high), default (0, 10)
        Concentrations are U[low, high), drawn independently per party, band and row.
    height : "pdf" (default) or "peak"
        Meaning of a band's height, see ``gaussian_band``.
    noise : float, default 0
        Std of i.i.d. Gaussian measurement noise added to X (0 = the paper's noise-free data).
    random_state : None, int or Generator

    Returns
    -------
    TwoPartySpectra
        X1 (n1, m), X2 (n2, m), y1 (n1,), y2 (n2,), and the ground truth.
    """
    rng = as_generator(random_state)
    n1, n2 = (n_per_party, n_per_party) if np.isscalar(n_per_party) else tuple(n_per_party)
    n1, n2 = int(n1), int(n2)
    if min(n1, n2) < 2:
        raise ValueError(f"each party needs at least 2 rows, got {(n1, n2)}")
    bands = tuple(b if isinstance(b, Band) else Band(f"band {i + 1}", *b) for i, b in enumerate(bands))
    n_bands = len(bands)
    shared_bands = tuple(int(j) for j in shared_bands)
    unique_bands = tuple(int(j) for j in unique_bands)
    if len(unique_bands) != 2:
        raise ValueError("unique_bands must name exactly one band per party")
    for j in shared_bands + unique_bands + (int(response_band),):
        if not 0 <= j < n_bands:
            raise ValueError(f"band index {j} out of range for {n_bands} bands")
    if set(shared_bands) & set(unique_bands) or unique_bands[0] == unique_bands[1]:
        raise ValueError("a unique band must belong to one party only")
    if response_band not in shared_bands:
        raise ValueError("the response band must be shared by both parties")
    low, high = (float(v) for v in concentration_range)
    if not high > low:
        raise ValueError(f"concentration_range must have high > low, got {(low, high)}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")

    signals = np.vstack([
        gaussian_band(n_channels, b.centre, b.width, b.height, height_convention=height) for b in bands
    ])
    party_bands = ((*shared_bands, unique_bands[0]), (*shared_bands, unique_bands[1]))
    response_col = shared_bands.index(response_band)

    def draw(n, band_idx):
        C = rng.uniform(low, high, size=(n, len(band_idx)))
        X = C @ signals[list(band_idx)]
        if noise > 0:
            X = X + rng.normal(0.0, noise, size=X.shape)
        return X, C[:, response_col].copy(), C

    X1, y1, C1 = draw(n1, party_bands[0])
    X2, y2, C2 = draw(n2, party_bands[1])
    params = dict(
        n_per_party=(n1, n2), n_channels=n_channels, concentration_range=(low, high),
        height=height, noise=noise, response_band=response_band,
    )
    return TwoPartySpectra(X1, y1, X2, y2, C1, C2, signals, bands, party_bands, unique_bands, params)


def max_row_norm_bound(data: TwoPartySpectra) -> float:
    """A public bound on ||x_i||_2 that follows from the generator's parameters alone.

    A noise-free row is sum_j c_j s_j with |c_j| <= c_max (the larger end of the concentration
    range), so entrywise |x| <= c_max * sum_j |s_j| and ||x||_2 <= c_max * ||sum_j |s_j| ||_2.
    With measurement noise this is not a bound (Gaussian noise is unbounded): strict mode clips.
    """
    c_max = max(abs(v) for v in data.params["concentration_range"])
    return float(max(c_max * np.linalg.norm(np.abs(data.signals[list(b)]).sum(axis=0)) for b in data.party_bands))
