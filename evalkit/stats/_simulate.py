"""Simulation of Miller's model and the power of evalkit's own verdict procedure."""

from __future__ import annotations

import math

import numpy as np

from evalkit._settings import ALPHA, CONFIDENCE, N_RESAMPLES_QUICK, POWER, SEED
from evalkit.errors import InputError
from evalkit.stats._bootstrap import paired_delta_interval
from evalkit.stats._frame import check_positive_int
from evalkit.stats._power import DEFAULT_CONCENTRATION, PowerDesign, PowerResult, _number
from evalkit.stats._proportions import proportion_ci
from evalkit.stats._settings import check_threshold
from evalkit.stats._signflip import sign_flip_test
from evalkit.stats._variance import VarianceComponents
from evalkit.stats._verdicts import overall_verdict


def model_components(
    baseline_rate: float,
    effect: float,
    concentration: float = DEFAULT_CONCENTRATION,
    coupling: float = 1.0,
) -> VarianceComponents:
    """Exact variance components of :func:`simulate_arms`'s model (for planning and tests).

    Args:
        baseline_rate: Mean case pass rate in the baseline.
        effect: True difference of mean pass rates.
        concentration: Beta concentration ``a + b`` of case difficulty.
        coupling: Share of cases whose candidate rate follows the case's own difficulty
            (:func:`simulate_arms`); the covariance of the arms scales with it.

    Returns:
        :class:`VarianceComponents` (``n_cases`` and ``n_trials`` are 0: not data-based).
    """
    mu = baseline_rate
    var_a = mu * (1 - mu) / (concentration + 1)
    shrink = headroom_slope(mu, effect)
    var_b = shrink**2 * var_a
    mean_var = (var_a + var_b) / 2
    covariance = coupling * shrink * var_a
    mu_b = mu + effect
    within = ((mu * (1 - mu) - var_a) + (mu_b * (1 - mu_b) - var_b)) / 2
    correlation = covariance / mean_var if mean_var > 0 else float("nan")
    return VarianceComponents(mu, mean_var, within, correlation, 0, 0)


def headroom_slope(baseline_rate: float, effect: float) -> float:
    """Slope of the candidate's rate in the case's difficulty (``q = shift + shrink * p``)."""
    mu = baseline_rate
    return 1 - effect / (1 - mu) if effect >= 0 else 1 + effect / mu


def coupling_for(
    baseline_rate: float, effect: float, concentration: float, correlation: float
) -> float:
    """The :func:`simulate_arms` coupling whose arm correlation is ``correlation``.

    The model's correlation is ``coupling`` times that of the fully coupled model
    (:func:`model_components`), so any correlation between 0 and the coupled one is reached
    exactly; outside that range the nearest end (0 or 1) is returned.

    Args:
        baseline_rate: Mean case pass rate in the baseline.
        effect: True difference of mean pass rates.
        concentration: Beta concentration of case difficulty.
        correlation: Wanted correlation of the arms' true per-case rates.

    Returns:
        The coupling in [0, 1] (1 when the coupled model's correlation is not positive).
    """
    coupled = model_components(baseline_rate, effect, concentration).correlation
    if not math.isfinite(coupled) or coupled <= 0 or not math.isfinite(correlation):
        return 1.0
    return min(1.0, max(0.0, correlation / coupled))


def simulate_arms(
    rng: np.random.Generator,
    n_cases: int,
    n_trials: int,
    effect: float,
    baseline_rate: float,
    concentration: float,
    coupling: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw one paired experiment under Miller's model (the "headroom" model).

    Case difficulty ``p ~ Beta(mu * kappa, (1 - mu) * kappa)``. The candidate's rate of a case
    moves by the same *share* of its headroom: ``q = p + effect * (1 - p) / (1 - mu)`` for a
    gain, ``q = p * (1 + effect / mu)`` for a loss, so ``E[q] - E[p] = effect`` exactly and
    ``q`` stays in [0, 1]. With ``coupling < 1`` a share ``1 - coupling`` of the cases (drawn
    at random) moves an independent difficulty of the same Beta distribution instead of its
    own: both arms keep their distributions (and within-case variances), and the arms'
    correlation is ``coupling`` times the coupled model's (:func:`model_components`).
    Each arm then runs ``n_trials`` independent Bernoulli trials.

    Args:
        rng: Random generator.
        n_cases: Cases.
        n_trials: Trials per case and arm.
        effect: True difference of mean pass rates.
        baseline_rate: Mean baseline rate ``mu``.
        concentration: Beta concentration ``kappa``.
        coupling: Share of cases whose candidate rate follows their own difficulty (1: all,
            the same draws as without the argument).

    Returns:
        ``(baseline, candidate)`` pass-bit matrices of shape ``(n_cases, n_trials)`` (float).
    """
    mu = baseline_rate
    p = rng.beta(mu * concentration, (1 - mu) * concentration, size=n_cases)
    source = p
    if coupling < 1.0:
        other = rng.beta(mu * concentration, (1 - mu) * concentration, size=n_cases)
        source = np.where(rng.random(n_cases) < coupling, p, other)
    q = source + effect * (1 - source) / (1 - mu) if effect >= 0 else source * (1 + effect / mu)
    base = (rng.random((n_cases, n_trials)) < p[:, None]).astype(float)
    cand = (rng.random((n_cases, n_trials)) < q[:, None]).astype(float)
    return base, cand


def simulate_power(
    n_cases: int,
    n_trials: int,
    effect: float,
    baseline_rate: float = 0.5,
    n_sims: int = 500,
    seed: int | None = SEED.default,
    *,
    concentration: float = DEFAULT_CONCENTRATION,
    alpha: float = ALPHA.default,
    threshold: float | None = None,
    n_resamples: int = N_RESAMPLES_QUICK.default,
    resample_trials: bool = False,
    coupling: float = 1.0,
) -> PowerResult:
    """Power of evalkit's own verdict procedure, by simulation of Miller's model.

    Each simulation draws a paired experiment with :func:`simulate_arms` and applies exactly
    the overall procedure of :func:`paired_compare`: paired cluster-bootstrap interval at level
    ``1 - alpha`` (here with ``n_resamples`` replicates, 2,000 by default to keep it quick), the
    sign-flip test over cases, then the verdict rule of :func:`overall_verdict` with the
    practical ``threshold``. Power is the share of simulations
    whose verdict is "improved" (effect > 0) or "regressed" (effect < 0); with ``effect == 0``
    it is the false-alarm rate (any verdict other than "inconclusive").

    Args:
        n_cases: Cases per experiment (>= 2).
        n_trials: Trials per case and arm.
        effect: True difference of mean pass rates (``-mu <= effect <= 1 - mu``).
        baseline_rate: Mean baseline pass rate ``mu``.
        n_sims: Number of simulated experiments.
        seed: Seed; simulation ``i`` uses the ``i``-th child of ``SeedSequence(seed)``.
        concentration: Beta concentration of case difficulty (4 gives Beta(2, 2) at 0.5).
        alpha: Two-sided level of the verdict's interval.
        threshold: Practical threshold (default 0.05).
        n_resamples: Bootstrap replicates per simulated experiment.
        resample_trials: Use the two-stage bootstrap with trial resampling.
        coupling: Share of cases whose candidate rate follows their own difficulty
            (:func:`simulate_arms`; 1, the default, couples every case).

    Returns:
        :class:`PowerResult` with ``method="simulation"``, the Wilson interval of the power
        estimate in ``ci_low``/``ci_high``, and the model's exact variance components.

    Raises:
        InputError: Arguments out of range.

    Examples:
        >>> sim = simulate_power(40, 3, 0.2, n_sims=50, seed=1, n_resamples=500)
        >>> sim.method, sim.n_sims, 0.0 <= sim.power <= 1.0
        ('simulation', 50, True)
    """
    cases = check_positive_int(n_cases, "n_cases", 2)
    trials = check_positive_int(n_trials, "n_trials")
    sims = check_positive_int(n_sims, "n_sims")
    resamples = N_RESAMPLES_QUICK.check(n_resamples)
    mu = _number(baseline_rate, "baseline_rate", 0.0, 1.0, open_low=True)
    if mu >= 1.0:
        raise InputError("The value for `baseline_rate` must be below 1.")
    size = _number(effect, "effect", -mu, 1.0 - mu)
    kappa = _number(concentration, "concentration", 0.0, math.inf, open_low=True)
    alpha = ALPHA.check(alpha)
    level = 1.0 - alpha
    limit = check_threshold(threshold)
    linked = _number(coupling, "coupling", 0.0, 1.0)
    target = "improved" if size > 0 else "regressed" if size < 0 else None
    children = np.random.SeedSequence(seed).spawn(sims)
    hits = 0
    for child in children:
        data_seed, boot_seed = child.generate_state(2)
        rng = np.random.default_rng(int(data_seed))
        base, cand = simulate_arms(rng, cases, trials, size, mu, kappa, linked)
        interval = paired_delta_interval(
            base,
            cand,
            n_resamples=resamples,
            confidence=level,
            seed=int(boot_seed),
            resample_trials=resample_trials,
        )
        diffs = cand.mean(axis=1) - base.mean(axis=1)
        sign = sign_flip_test(diffs, resamples, int(boot_seed))
        outcome = overall_verdict(interval, sign.pvalue, cases, limit).verdict
        hits += outcome == target if target is not None else outcome != "inconclusive"
    estimate = proportion_ci(hits, sims, CONFIDENCE.default, "wilson")
    components = model_components(mu, size, kappa, linked)
    design = PowerDesign(
        baseline_rate=mu,
        var_between=components.var_between,
        var_within=components.var_within,
        correlation=components.correlation,
        alpha=alpha,
        power=POWER.default,
    )
    return PowerResult(
        n_cases=cases,
        n_trials=trials,
        effect=size,
        power=hits / sims,
        alpha=alpha,
        baseline_rate=mu,
        var_between=components.var_between,
        var_within=components.var_within,
        correlation=components.correlation,
        se=math.sqrt(design.omega2(trials) / cases),
        method="simulation",
        ci_low=estimate.ci_low,
        ci_high=estimate.ci_high,
        n_sims=sims,
    )
