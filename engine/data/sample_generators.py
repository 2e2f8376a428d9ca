"""Seeded generators of PrivaLab's synthetic data sets (``engine.data.samples`` writes them to files).

Every generator takes ``random_state`` (an int, a ``numpy.random.SeedSequence`` or a
``numpy.random.Generator``; ints go through ``np.random.default_rng``) and is deterministic
given it: the same seed gives the same arrays, bit for bit, on the same numpy/scipy build.
Passing a Generator consumes it (so two calls with the same Generator object differ).

Generators (each returns a :class:`SampleBunch`, a ``dict`` whose keys are also attributes):

* :func:`make_nir_spectra`: Beer-Lambert NIR spectra (n x m) of grain-like samples with four
  known constituents (n x 4), multiplicative scatter, baseline drift and noise (PLS).
* :func:`make_solar`: hourly PV output of 44 neighbouring plants whose clouds follow a sparse,
  wind-advected VAR(1) with known coefficient matrix A (VAR / ADMM); spec ``var_admm.md`` 8.1.
* :func:`make_value_chain`: three-stage multistage manufacturing process, process variables of
  each company and the final 7 KPIs (vertical federated PLS); spec ``p3ls.md`` 5.1.
* :func:`make_two_views`: two views with planted, exactly known population canonical
  correlations (CCA).

Dependencies: numpy, pandas, scipy only. No streamlit.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import linalg

__all__ = [
    "NIR_RESPONSES",
    "SampleBunch",
    "make_nir_consortium",
    "make_nir_spectra",
    "make_solar",
    "make_two_views",
    "make_value_chain",
]


class SampleBunch(dict):
    """A ``dict`` whose keys can also be read as attributes (``b["X"]`` or ``b.X``)."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key, value):
        self[key] = value

    def __dir__(self):
        return list(self.keys()) + list(super().__dir__())

    def __setstate__(self, state):  # pickling: the items travel as dict items
        pass


def _rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError("random_state must be an int, a SeedSequence or a numpy Generator, not a bool")
    return np.random.default_rng(random_state)


# =============================================================================================
# 1. NIR spectra
# =============================================================================================

#: Response (constituent) names of :func:`make_nir_spectra`, in column order.
NIR_RESPONSES = ("moisture", "oil", "protein", "starch")

# Constituent mean and sd (in %, corn-like) and their correlation matrix.
_NIR_MEAN = np.array([10.2, 3.5, 8.7, 64.7])
_NIR_SD = np.array([0.40, 0.20, 0.50, 0.80])
_NIR_CORR = np.array([
    [1.00, -0.10, 0.20, -0.30],
    [-0.10, 1.00, 0.15, -0.35],
    [0.20, 0.15, 1.00, -0.50],
    [-0.30, -0.35, -0.50, 1.00],
])

# Absorption bands (centre nm, Gaussian sd nm, relative height) per pure component, and the
# component's peak absorptivity (absorbance per % w/w at the tallest band).
_NIR_BANDS = {
    # water: O-H 2nd overtone 1190, 1st overtone 1450, combination 1940 (strongest)
    "moisture": (0.050, [(1190, 25, 0.12), (1450, 30, 0.55), (1790, 40, 0.08), (1940, 35, 1.00)]),
    # lipid: C-H 2nd overtone 1210, 1st overtone doublet 1725/1760, C-H combinations 2310/2350
    "oil": (0.040, [(1210, 15, 0.25), (1390, 15, 0.15), (1725, 12, 0.70), (1760, 12, 0.60),
                    (2140, 12, 0.30), (2310, 15, 1.00), (2350, 15, 0.80)]),
    # protein: N-H 1st overtone 1510, N-H combinations 1980/2055, amide 2180
    "protein": (0.025, [(1510, 30, 0.40), (1980, 25, 0.50), (2055, 25, 0.90), (2180, 20, 1.00),
                        (2290, 20, 0.40)]),
    # starch: O-H/C-H of carbohydrate 1200, 1580, 2100 (strongest), 2280, 2320
    "starch": (0.006, [(1200, 30, 0.30), (1430, 40, 0.35), (1580, 35, 0.45), (1930, 40, 0.40),
                       (2100, 30, 1.00), (2280, 25, 0.60), (2320, 25, 0.40)]),
    # rest of the matrix (fibre, ash, sugars): 100 - sum of the four, broad cellulose-like bands
    "other": (0.010, [(1490, 50, 0.30), (1820, 60, 0.20), (2090, 45, 0.50), (2340, 30, 0.70)]),
}


def _pure_spectra(wavelengths: np.ndarray) -> tuple[np.ndarray, list]:
    names = list(_NIR_BANDS)
    E = np.zeros((len(names), len(wavelengths)))
    for k, name in enumerate(names):
        peak, bands = _NIR_BANDS[name]
        for centre, width, height in bands:
            E[k] += height * np.exp(-0.5 * ((wavelengths - centre) / width) ** 2)
        E[k] *= peak / E[k].max()
    return E, names


def make_nir_spectra(
    n_samples: int = 120,
    n_channels: int = 350,
    wavelength_start: float = 1100.0,
    wavelength_step: float = 4.0,
    random_state=0,
) -> SampleBunch:
    """Synthetic NIR absorbance spectra of grain-like samples with four known constituents.

    Physics (Beer-Lambert plus the usual diffuse-reflectance artefacts). For sample i:

    * concentrations c_i (% w/w) of moisture, oil, protein, starch ~ multivariate normal with
      means 10.2, 3.5, 8.7, 64.7 and sds 0.40, 0.20, 0.50, 0.80 (corn-like), correlated
      (e.g. protein-starch -0.5, starch negatively with all others) but not collinear; a fifth
      component "other" (fibre, ash, ...) closes the sum to 100 % (about 12.9 +- 0.7 %).
    * pure-component absorptivities e_k(lambda) (per %) are sums of Gaussian bands at NIR
      positions: water 1190/1450/1940 nm (O-H), oil 1210/1725/1760/2310/2350 nm (C-H), protein
      1510/1980/2055/2180 nm (N-H, amide), starch 1200/1580/2100/2280 nm (O-H/C-H), other
      broad cellulose-like bands. Beer-Lambert: a_i(lambda) = sum_k c_ik e_k(lambda) (path length
      folded into e_k), giving absorbances of about 0.3 to 1.
    * multiplicative scatter: gain g_i ~ U(0.9, 1.1) (1 +- 0.1) on the whole spectrum, plus an
      additive offset o_i ~ N(0, 0.03);
    * smooth baseline drift b_i(lambda) = beta_1i u + beta_2i u^2 with u the wavelength scaled to
      [-1, 1], beta_1 ~ N(0, 0.02), beta_2 ~ N(0, 0.01);
    * white measurement noise ~ N(0, 0.0005^2) per channel.

    x_i(lambda) = g_i a_i(lambda) + o_i + b_i(lambda) + noise. Y is the concentration matrix
    itself, so the responses are in the spectra (a PLS model with about 10 components recovers
    each with held-out R^2 > 0.95 at the defaults); the scatter gain is the main nuisance.

    Random draws, in order: concentrations (n x 4 standard normals), gain (n), offset (n),
    baseline coefficients (n x 2), noise (n x m).

    Returns
    -------
    SampleBunch with
        X : (n_samples, n_channels) absorbance spectra.
        Y : (n_samples, 4) constituents in %, columns ``response_names``.
        response_names : ("moisture", "oil", "protein", "starch").
        wavelengths : (n_channels,) nm, ``wavelength_start + wavelength_step * j``.
        pure_spectra : (5, n_channels) absorptivity per % of moisture, oil, protein, starch, other.
        component_names : the 5 names of ``pure_spectra`` rows.
        concentrations : (n_samples, 5) including "other" (rows sum to 100).
        gain, offset : (n_samples,) scatter terms; baseline : (n_samples, n_channels) drift.
    """
    if n_samples < 1 or n_channels < 1:
        raise ValueError("n_samples and n_channels must be positive")
    rng = _rng(random_state)
    wavelengths = wavelength_start + wavelength_step * np.arange(n_channels, dtype=float)
    E, comp_names = _pure_spectra(wavelengths)

    cov = _NIR_CORR * np.outer(_NIR_SD, _NIR_SD)
    L = np.linalg.cholesky(cov)
    Y = _NIR_MEAN + rng.standard_normal((n_samples, 4)) @ L.T
    C = np.column_stack([Y, 100.0 - Y.sum(axis=1)])
    gain = rng.uniform(0.9, 1.1, n_samples)
    offset = rng.normal(0.0, 0.03, n_samples)
    beta = rng.normal(0.0, 1.0, (n_samples, 2)) * np.array([0.02, 0.01])
    span = wavelengths[-1] - wavelengths[0]
    u = (2.0 * (wavelengths - wavelengths[0]) / span - 1.0) if span > 0 else np.zeros(n_channels)
    baseline = beta[:, [0]] * u + beta[:, [1]] * u**2
    noise = rng.normal(0.0, 5e-4, (n_samples, n_channels))
    X = gain[:, None] * (C @ E) + offset[:, None] + baseline + noise
    return SampleBunch(
        X=X, Y=Y, response_names=NIR_RESPONSES, wavelengths=wavelengths, pure_spectra=E,
        component_names=tuple(comp_names), concentrations=C, gain=gain, offset=offset, baseline=baseline,
    )


def make_nir_consortium(
    n_labs: int = 5,
    rows_per_lab: int = 1000,
    n_public: int = 500,
    n_channels: int = 70,
    wavelength_start: float = 1100.0,
    wavelength_step: float = 20.0,
    random_state=4,
) -> SampleBunch:
    """A consortium's pooled NIR calibration set: ``n_labs`` labs' spectra of the same kind of grain, pooled, and
    ``n_public`` unlabelled spectra of the same kind that the consortium publishes (public spectra).

    Each lab's rows are one draw of :func:`make_nir_spectra` (the same physics and instrument model, its own
    samples, scatter, baselines and noise), lab l with the seed ``seed_l`` of ``SeedSequence(random_state)``'s
    ``n_labs + 1`` children (the last one draws the public spectra). The channels are coarser than the single-lab
    sample's (``n_channels`` = 70 at 20 nm from 1100 nm) to keep the file small.

    Returns
    -------
    SampleBunch with
        X : (n_labs * rows_per_lab, n_channels) spectra, labs in order; Y : (same rows, 4) constituents in %.
        lab : (rows,) lab number 1..n_labs of each row.
        X_public : (n_public, n_channels) unlabelled spectra (published: public).
        response_names, wavelengths : as :func:`make_nir_spectra`.
    """
    if n_labs < 1 or rows_per_lab < 1 or n_public < 1:
        raise ValueError("n_labs, rows_per_lab and n_public must be positive")
    seeds = np.random.SeedSequence(random_state).spawn(n_labs + 1)

    def draw(n: int, seed: np.random.SeedSequence) -> SampleBunch:
        rng = np.random.default_rng(seed)
        return make_nir_spectra(n, n_channels, wavelength_start, wavelength_step, random_state=rng)

    labs = [draw(rows_per_lab, s) for s in seeds[:-1]]
    public = draw(n_public, seeds[-1])
    return SampleBunch(
        X=np.vstack([b.X for b in labs]), Y=np.vstack([b.Y for b in labs]),
        lab=np.repeat(np.arange(1, n_labs + 1), rows_per_lab), X_public=public.X,
        response_names=NIR_RESPONSES, wavelengths=public.wavelengths,
    )


# =============================================================================================
# 2. Multi-site solar PV (var_admm.md section 8.1)
# =============================================================================================

_SOLAR_LAT0, _SOLAR_LON0 = 38.57, -7.91
_KM_PER_DEG_LAT = 110.574
_KM_PER_DEG_LON_EQ = 111.320
_WIND_DEG = {"north": 0.0, "east": 90.0, "south": 180.0, "west": 270.0}


def _upwind_vector(wind_from) -> np.ndarray:
    """Unit vector (east, north) pointing towards where the wind comes from."""
    if isinstance(wind_from, str):
        key = wind_from.strip().lower()
        if key not in _WIND_DEG:
            raise ValueError(f"wind_from must be one of {sorted(_WIND_DEG)} or degrees, got {wind_from!r}")
        deg = _WIND_DEG[key]
    else:
        deg = float(wind_from)
    th = np.deg2rad(deg)
    v = np.array([np.sin(th), np.cos(th)])
    v[np.abs(v) < 1e-12] = 0.0
    return v


def make_solar(
    n_sites: int = 44,
    start: str = "2011-02-01 00:00",
    end: str = "2013-03-06 23:00",
    a: float = 0.1,
    c: float = 0.8,
    sig: float = 0.6,
    ell: float = 5.0,
    mu: float = 1.0,
    wind_from="west",
    random_state=1,
) -> SampleBunch:
    """Hourly PV output of ``n_sites`` neighbouring plants with wind-advected clouds (spec 8.1).

    Physics, exactly as ``/work/shared/spec/var_admm.md`` section 8.1:

    * Sites uniform in a 30 x 30 km square centred at (38.57 N, 7.91 W) (x_km east, y_km north,
      in [-15, 15]; lat = 38.57 + y/110.574, lon = -7.91 + x/(111.320 cos 38.57°)); capacity
      cap_i ~ U(2, 6) kW. Hourly UTC stamps from ``start`` to ``end`` inclusive
      (defaults: T = 18360).
    * Clear sky: declination dec = 23.45° sin(2 pi (284 + doy)/365); hour angle
      w = 15° (hour + 0.5 + lon/15 - 12) (hour = UTC clock hour of the stamp);
      cos z = sin(lat) sin(dec) + cos(lat) cos(dec) cos(w); CS_i = 0.8 cap_i max(cos z, 0)^1.15.
    * Clouds: latent x_t (n) follows the VAR(1) x_t = A x_{t-1} + e_t, A = a I + c D,
      e_t ~ N(0, Sigma), Sigma_ij = sig^2 exp(-dist_ij/ell). D[i, j] are row-normalised weights
      exp(-dist_ij/ell) over the sites j lying at least 0.5 km upwind of i (displacement along
      the direction the wind comes from) and within 6 km; rows without such sites are 0. Upwind
      is a strict order, so D is nilpotent (acyclic) and the spectral radius of A is exactly a.
      x_0 is drawn from the stationary law N(0, Gamma), Gamma = A Gamma A' + Sigma.
    * Daily regime (one per UTC day, shared by all sites): r_d = 0.7 r_{d-1} + sqrt(0.51) N(0, 1),
      r_0 ~ N(0, 1) (stationary, unit variance).
    * Clear-sky index k = 1.05 / (1 + exp(-(mu + r_d + x_t))); P = max(0, CS k (1 + 0.02 N(0, 1))).
    * Normalised y = P / CS in daylight (cos z > 0), 0 at night, clipped to [0, 1.2].

    Measured (defaults, seed 1, full span): daytime (cos z > 0) mean of y = 0.686, sd = 0.247
    (spec: about 0.70 and 0.24); 49.8 % of the site-hours are daylight; max y 1.107; D has 89
    upwind links (7 sites have none); about 1 s. On 2011-02-01 .. 2011-04-01 (60 days) seeds
    1, 2, 3 give mean 0.691, 0.715, 0.782 and sd 0.222, 0.213, 0.206 (the daily regime makes
    short spans vary).

    Random draws, in order: site x, y (n x 2 uniforms), capacity (n), regime r_0 and daily
    innovations, x_0 (n standard normals), e (T x n standard normals, times chol(Sigma)'),
    power noise (T x n).

    Returns
    -------
    SampleBunch with
        P : (T, n) DataFrame, power in kW, index = hourly DatetimeIndex named "time" (UTC,
            tz-naive), columns ``site_01`` ..
        CS : (T, n) DataFrame, clear-sky power (kW).
        y : (T, n) DataFrame, normalised output in [0, 1.2] (0 at night).
        coords : (n, 4) DataFrame indexed by site: x_km, y_km, lat, lon.
        capacity : (n,) Series, kW.
        sites : (n, 6) DataFrame: site, x_km, y_km, lat, lon, capacity_kw (= solar_sites.csv).
        A : (n, n) true cloud VAR matrix, column form x_t = A x_{t-1} (A[i, j]: weight of
            site j's last value in site i's equation).
        B : (n, n) = A.T, the row form of the spec's section 1 (row = source, column = target).
        D : (n, n) upwind weights; Sigma : (n, n) innovation covariance.
        cloud : (T, n) DataFrame, latent x_t; regime : (n_days,) Series r_d indexed by date.
        daylight : (T, n) boolean DataFrame, cos z > 0.
    """
    if n_sites < 1:
        raise ValueError("n_sites must be positive")
    rng = _rng(random_state)
    n = int(n_sites)
    names = [f"site_{i:02d}" for i in range(1, n + 1)]
    # --- sites
    xy = rng.uniform(-15.0, 15.0, (n, 2))
    capacity = rng.uniform(2.0, 6.0, n)
    lat = _SOLAR_LAT0 + xy[:, 1] / _KM_PER_DEG_LAT
    lon = _SOLAR_LON0 + xy[:, 0] / (_KM_PER_DEG_LON_EQ * np.cos(np.deg2rad(_SOLAR_LAT0)))
    # --- time and clear sky
    times = pd.date_range(pd.Timestamp(start), pd.Timestamp(end), freq="h", name="time")
    if times.tz is not None:
        times = times.tz_convert("UTC").tz_localize(None).rename("time")
    T = len(times)
    if T < 1:
        raise ValueError("end must not be before start")
    doy = times.day_of_year.to_numpy(dtype=float)
    hour = (times.hour + times.minute / 60.0).to_numpy(dtype=float)
    dec = np.deg2rad(23.45 * np.sin(2.0 * np.pi * (284.0 + doy) / 365.0))[:, None]
    w = np.deg2rad(15.0 * (hour[:, None] + 0.5 + lon[None, :] / 15.0 - 12.0))
    latr = np.deg2rad(lat)[None, :]
    cosz = np.sin(latr) * np.sin(dec) + np.cos(latr) * np.cos(dec) * np.cos(w)
    day = cosz > 0
    CS = 0.8 * capacity[None, :] * np.maximum(cosz, 0.0) ** 1.15
    # --- cloud VAR(1)
    diff = xy[None, :, :] - xy[:, None, :]  # diff[i, j] = p_j - p_i
    dist = np.sqrt((diff**2).sum(axis=2))
    upwind = diff @ _upwind_vector(wind_from)  # how far j lies upwind of i
    W = np.where((upwind >= 0.5) & (dist <= 6.0), np.exp(-dist / ell), 0.0)
    rows = W.sum(axis=1, keepdims=True)
    D = np.divide(W, rows, out=np.zeros_like(W), where=rows > 0)
    A = a * np.eye(n) + c * D
    Sigma = sig**2 * np.exp(-dist / ell)
    Lsig = linalg.cholesky(Sigma, lower=True)
    Gamma = linalg.solve_discrete_lyapunov(A, Sigma)
    Gamma = 0.5 * (Gamma + Gamma.T)
    # --- daily regime
    day_index = (times.normalize() - times[0].normalize()).days.to_numpy()
    n_days = int(day_index[-1]) + 1
    r = np.empty(n_days)
    r[0] = rng.standard_normal()
    innov = rng.standard_normal(n_days - 1) * np.sqrt(0.51)
    for d in range(1, n_days):
        r[d] = 0.7 * r[d - 1] + innov[d - 1]
    # --- cloud path
    x0 = linalg.cholesky(Gamma, lower=True) @ rng.standard_normal(n)
    e = rng.standard_normal((T, n)) @ Lsig.T
    X = np.empty((T, n))
    prev = x0
    At = A.T
    for t in range(T):
        prev = prev @ At + e[t]
        X[t] = prev
    # --- power
    k = 1.05 / (1.0 + np.exp(-(mu + r[day_index][:, None] + X)))
    P = np.maximum(0.0, CS * k * (1.0 + 0.02 * rng.standard_normal((T, n))))
    y = np.zeros((T, n))
    np.divide(P, CS, out=y, where=day)
    y = np.clip(y, 0.0, 1.2)

    coords = pd.DataFrame({"x_km": xy[:, 0], "y_km": xy[:, 1], "lat": lat, "lon": lon},
                          index=pd.Index(names, name="site"))
    cap = pd.Series(capacity, index=coords.index, name="capacity_kw")
    sites = coords.reset_index().assign(capacity_kw=capacity)
    frame = lambda v: pd.DataFrame(v, index=times, columns=names)  # noqa: E731
    day_dates = pd.date_range(times[0].normalize(), periods=n_days, freq="D", name="date")
    return SampleBunch(
        P=frame(P), CS=frame(CS), y=frame(y), coords=coords, capacity=cap, sites=sites,
        A=A, B=A.T.copy(), D=D, Sigma=Sigma, cloud=frame(X), regime=pd.Series(r, index=day_dates, name="regime"),
        daylight=frame(day),
    )


# =============================================================================================
# 3. Three-stage value chain (p3ls.md section 5.1)
# =============================================================================================

#: Per-stage Y width, A_i range, P(A_ij = 0), B_i range (Dataset-1 configuration of p3ls.md 5.1).
_VC_STAGES = (  # (n_y, a_range, a_zero, b_range)
    (5, (-1.0, 2.0), 0.15, (-0.01, 0.02)),
    (6, (-3.0, 3.0), 0.20, (-0.03, 0.03)),
    (7, (-3.0, 2.0), 0.25, (-0.03, 0.02)),
)
_VC_B_ZERO = 0.999
_VC_NOISE_VAR = 0.001
_VC_N_PREV = 3
_VC_RANK, _VC_TAIL = 4.1, 0.05


def _low_rank_matrix(rng, n_samples, n_features, effective_rank=_VC_RANK, tail_strength=_VC_TAIL):
    """scikit-learn ``make_low_rank_matrix`` profile: X = U diag(s) V', s_j bell + tail."""
    kk = min(n_samples, n_features)
    u, _ = np.linalg.qr(rng.standard_normal((n_samples, kk)))
    v, _ = np.linalg.qr(rng.standard_normal((n_features, kk)))
    j = np.arange(kk, dtype=float)
    s = (1 - tail_strength) * np.exp(-((j / effective_rank) ** 2)) + tail_strength * np.exp(-0.1 * j / effective_rank)
    return (u * s) @ v.T


def _quadratic_terms(U: np.ndarray) -> np.ndarray:
    """All products u_a u_b, a <= b (n x p(p+1)/2), in row-major (a, b) order."""
    a, b = np.triu_indices(U.shape[1])
    return U[:, a] * U[:, b]


def make_value_chain(n_samples: int = 1000, widths=(10, 20, 20), random_state=2) -> SampleBunch:
    """Three-stage multistage process (after Shi & Zhou 2009), spec ``p3ls.md`` section 5.1.

    Physics: three production stages in series, one company each. Stage i has process variables
    X_i (n x widths[i]) and receives Ý_{i-1} = the first 3 columns of the previous stage's
    quality responses Y_{i-1} (raw; none for stage 1). With U_lin = [X_i, Ý_{i-1}] and U_qd = all
    products u_a u_b (a <= b) of U_lin's columns,

        Y_i = U_lin A_i' + U_qd B_i' + V_i,   V_i ~ N(0, 0.001) i.i.d. (sd 0.0316).

    Dataset-1 configuration (default widths 10, 20, 20):

    ======  =====  ==============  ===========  ================
    stage   Y_i    A_i ~           P(A_ij = 0)  B_i ~
    ======  =====  ==============  ===========  ================
    1       5      U(-1, 2)        0.15         U(-0.01, 0.02)
    2       6      U(-3, 3)        0.20         U(-0.03, 0.03)
    3       7      U(-3, 2)        0.25         U(-0.03, 0.02)
    ======  =====  ==============  ===========  ================

    P(B_ij = 0) = 0.999 everywhere; each coefficient is zeroed independently. Each X_i is drawn
    independently with the scikit-learn ``make_low_rank_matrix`` profile s_j = 0.95 exp(-(j/4.1)^2)
    + 0.05 exp(-0.1 j/4.1) (random orthonormal U, V; about 90 % of the variance in 4 singular
    vectors), then its columns are standardised (mean 0, sd 1, ddof 0) before simulating. The
    target is Y = Y_3 (7 KPIs), owned by company 3; Y_1, Y_2 are not model inputs. Stage 3's Y
    depends on X_1, X_2 only through Ý_2 (and Ý_1 inside it), so the upstream blocks carry
    most of the signal.

    Random draws, per stage in order: X_i (n x k then widths[i] x k normals for U, V),
    A_i values, A_i zero mask, B_i values, B_i zero mask, V_i.

    Returns
    -------
    SampleBunch with
        blocks : [X_1 (n x 10), X_2 (n x 20), X_3 (n x 20)] standardised process variables.
        Y : (n, 7) stage-3 KPIs (= Y_stages[2]).
        Y_stages : [Y_1 (n x 5), Y_2 (n x 6), Y_3 (n x 7)].
        A : [A_1 (5 x 10), A_2 (6 x 23), A_3 (7 x 23)] linear coefficients (columns: X_i then Ý_{i-1}).
        B : [B_1 (5 x 55), B_2 (6 x 276), B_3 (7 x 276)] quadratic coefficients (columns: the
            pairs a <= b of U_lin in ``np.triu_indices`` order).
        noise_var : 0.001; block_names : ("s1", "s2", "s3"); kpi_names : ("kpi_1", .., "kpi_7").
    """
    widths = tuple(int(w) for w in widths)
    if len(widths) != 3 or min(widths) < 1:
        raise ValueError("widths must be three positive integers (stage 1, 2, 3 process variables)")
    if n_samples < 2:
        raise ValueError("n_samples must be at least 2")
    rng = _rng(random_state)
    blocks, Ys, As, Bs = [], [], [], []
    prev = None
    for width, (n_y, a_range, a_zero, b_range) in zip(widths, _VC_STAGES, strict=False):
        X = _low_rank_matrix(rng, n_samples, width)
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        U = X if prev is None else np.column_stack([X, prev[:, :_VC_N_PREV]])
        Uq = _quadratic_terms(U)
        A = rng.uniform(*a_range, (n_y, U.shape[1]))
        A[rng.random(A.shape) < a_zero] = 0.0
        B = rng.uniform(*b_range, (n_y, Uq.shape[1]))
        B[rng.random(B.shape) < _VC_B_ZERO] = 0.0
        V = rng.normal(0.0, np.sqrt(_VC_NOISE_VAR), (n_samples, n_y))
        Y = U @ A.T + Uq @ B.T + V
        blocks.append(X)
        Ys.append(Y)
        As.append(A)
        Bs.append(B)
        prev = Y
    return SampleBunch(
        blocks=blocks, Y=Ys[-1], Y_stages=Ys, A=As, B=Bs, noise_var=_VC_NOISE_VAR,
        block_names=("s1", "s2", "s3"), kpi_names=tuple(f"kpi_{i}" for i in range(1, Ys[-1].shape[1] + 1)),
    )


# =============================================================================================
# 4. Two views with known canonical correlations
# =============================================================================================

def _random_mixing(rng, d: int) -> np.ndarray:
    """Random invertible d x d matrix Q1 diag(exp(U(-1, 1))) Q2 (condition number <= e^2)."""
    q1, _ = np.linalg.qr(rng.standard_normal((d, d)))
    q2, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return (q1 * np.exp(rng.uniform(-1.0, 1.0, d))) @ q2


def _inv_sqrt(S: np.ndarray) -> np.ndarray:
    w, V = np.linalg.eigh(S)
    return (V / np.sqrt(w)) @ V.T


def make_two_views(
    n_samples: int = 2000,
    dx: int = 10,
    dy: int = 8,
    correlations=(0.9, 0.7, 0.4),
    noise: float = 0.0,
    random_state=3,
) -> SampleBunch:
    """Two views X (n x dx), Y (n x dy) with exactly known population canonical correlations.

    Construction: K = len(correlations) shared latent factors S (n x K, standard normal). Latent
    coordinates z_x = [sqrt(rho) * S + sqrt(1 - rho) * E_x, F_x] and z_y = [sqrt(rho) * S +
    sqrt(1 - rho) * E_y, F_y], with E, F independent standard normal (F_x: dx - K, F_y: dy - K
    private dimensions). Hence corr(z_x,k, z_y,k) = rho_k, and every other pair of latent
    coordinates is independent. The views are X = z_x M_x + noise * N_x and Y = z_y M_y +
    noise * N_y with random invertible mixing matrices M_x (dx x dx), M_y (dy x dy) (i.e.
    X = S A_x + (view noise), A_x = [diag(sqrt(rho)), 0] M_x). CCA is invariant to invertible
    linear maps of each view, so with ``noise = 0`` the population canonical correlations are
    exactly ``correlations`` followed by min(dx, dy) - K zeros, and the canonical variates are
    z_x,k = X @ x_weights[:, k] (x_weights = first K columns of M_x^-1). With ``noise > 0``
    (isotropic measurement noise of that sd added after mixing) the true values are computed
    from the population covariances: singular values of Sxx^-1/2 Sxy Syy^-1/2, with
    Sxx = M_x'M_x + noise^2 I, Syy = M_y'M_y + noise^2 I, Sxy = M_x' R M_y, R = [diag(rho), 0].

    Random draws, in order: M_x, M_y (each two dxd normal matrices and d uniforms), S, E_x,
    E_y, F_x, F_y, then N_x, N_y if noise > 0.

    Returns
    -------
    SampleBunch with
        X : (n, dx); Y : (n, dy).
        true_correlations : (min(dx, dy),) population canonical correlations, descending.
        planted : (K,) the requested correlations.
        x_weights : (dx, K), y_weights : (dy, K) true canonical weights (exact when noise = 0;
            unit-variance variates).
        latent : (n, K) shared factors S; Mx, My : mixing matrices; noise : the noise sd.
    """
    rho = np.asarray(correlations, dtype=float).ravel()
    K = rho.size
    if K > min(dx, dy):
        raise ValueError(f"{K} planted correlations need dx and dy >= {K}")
    if np.any(rho < 0) or np.any(rho >= 1):
        raise ValueError("correlations must lie in [0, 1)")
    if noise < 0:
        raise ValueError("noise must be >= 0")
    rng = _rng(random_state)
    Mx = _random_mixing(rng, dx)
    My = _random_mixing(rng, dy)
    S = rng.standard_normal((n_samples, K))
    Ex = rng.standard_normal((n_samples, K))
    Ey = rng.standard_normal((n_samples, K))
    Fx = rng.standard_normal((n_samples, dx - K))
    Fy = rng.standard_normal((n_samples, dy - K))
    zx = np.column_stack([np.sqrt(rho) * S + np.sqrt(1 - rho) * Ex, Fx])
    zy = np.column_stack([np.sqrt(rho) * S + np.sqrt(1 - rho) * Ey, Fy])
    X = zx @ Mx
    Y = zy @ My
    if noise > 0:
        X = X + noise * rng.standard_normal(X.shape)
        Y = Y + noise * rng.standard_normal(Y.shape)
        R = np.zeros((dx, dy))
        R[np.arange(K), np.arange(K)] = rho
        Sxx = Mx.T @ Mx + noise**2 * np.eye(dx)
        Syy = My.T @ My + noise**2 * np.eye(dy)
        true = np.linalg.svd(_inv_sqrt(Sxx) @ (Mx.T @ R @ My) @ _inv_sqrt(Syy), compute_uv=False)
    else:
        true = np.concatenate([np.sort(rho)[::-1], np.zeros(min(dx, dy) - K)])
    Mxi, Myi = np.linalg.inv(Mx), np.linalg.inv(My)
    return SampleBunch(
        X=X, Y=Y, true_correlations=true, planted=rho, x_weights=Mxi[:, :K], y_weights=Myi[:, :K],
        latent=S, Mx=Mx, My=My, noise=float(noise),
    )
