"""The recommended strict edPLS's release names, their ledger notes and its smallest input, shared by the
in-memory fit (``recommended``) and the Dask fit (``lazy_recommended``) so that neither module imports the other
back."""

from engine.methods.baselines import COUNT_AGAIN, SUM_RELEASE
from engine.privacy.ranges import RANGE_RELEASE

__all__ = ["MIN_CHANNELS", "NOTES", "RELEASES"]

#: Ledger names of the three releases, in release order.
RELEASES = ("count n", "X-moments Z'Z", "cross-moments Z'y")
#: Ledger notes of the releases (each recorded by its own draw), the constant fallback's sum included.
NOTES = {
    RANGE_RELEASE: "Gaussian histogram of y over a public log-spaced grid (sensitivity 1): sets y's range",
    COUNT_AGAIN: "noisy row count (Gaussian, sensitivity 1) for the private constant's mean, calibrated jointly "
                 "with the sum of y~",
    SUM_RELEASE: "sum of y~ = clip(y - y_c) / y_bound (sensitivity 1): the private constant predictor",
    RELEASES[0]: "noisy row count (Gaussian, sensitivity 1); sets the released dimension d",
    RELEASES[1]: "Analyze-Gauss on the upper triangle of Z'Z, z = [u f, B] / (sqrt(2) B), u = V'p(x) - c "
                 "clipped to ||u|| <= x_bound (public V, c, B); exact sensitivity sqrt(3)/2",
    RELEASES[2]: "Gaussian on Z'y~, y~ = clip(y - y_c) / y_bound in [-1, 1]; sensitivity ||z|| |y~| <= 1",
}
#: Fewest channels the default chain and basis take (Savitzky-Golay window 5, a cubic spline basis).
MIN_CHANNELS = 8
