"""The recommended strict edPLS's release names and its smallest input, shared by the in-memory fit
(``recommended``) and the Dask fit (``lazy_recommended``) so that neither module imports the other back."""

__all__ = ["MIN_CHANNELS", "RELEASES"]

#: Ledger names of the three releases, in release order.
RELEASES = ("count n", "X-moments Z'Z", "cross-moments Z'y")
#: Fewest channels the default chain and basis take (Savitzky-Golay window 5, a cubic spline basis).
MIN_CHANNELS = 8
