"""The clean part of a DP-PCR fit (``PreparedRows``), shared by the in-memory fit (``estimator``) and the Dask fit
(``lazy``) so that neither module imports the other back."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.privacy.gram import ScaledGram
from engine.privacy.moments import add_remove_sensitivity

if TYPE_CHECKING:
    from engine.privacy.chunked import ChunkedMoments

__all__ = ["PreparedRows"]


@dataclass
class PreparedRows:
    """The clean part of a fit: the Gram matrix of the clipped, scaled rows and the centre they were taken around.

    rows : ScaledGram (``engine.privacy.gram.scaled_gram``: Z'Z from one fused block pass, Z is not formed);
    x_center (m,), y_center : the public centre (zeros without one); centring : bool; m : number of channels.
    """

    rows: ScaledGram | ChunkedMoments  # ChunkedMoments: the Dask fit (``lazy``), its Z'Z summed by partitions
    x_center: np.ndarray
    y_center: float
    centring: bool
    m: int

    @property
    def sensitivity(self) -> float:
        """The add/remove sensitivity of the upper triangle of Z'Z for these scaled rows."""
        return add_remove_sensitivity(self.rows.weights, self.rows.const)

    def gram(self) -> np.ndarray:
        """Z'Z of the scaled rows (the private Gram that the moment release perturbs)."""
        return self.rows.G

    def describe(self) -> str:
        """What Z holds, for the ledger note (public facts only)."""
        if self.rows.private_centring:
            around = "x - x_center, y - y_center" if np.any(self.x_center) or self.y_center else "x, y"
            return f"[{around}, a] (constant column a: private centring from the same release)"
        return "[x - x_center, y - y_center] (public centre)" if self.centring else "[x, y] (no centring)"
