"""How many labels, judge calls and prompts a target interval width needs, per label design,
from a fully labelled pilot (docs/budget.md, "Planning").

For a metric whose per-prompt estimate θ̂_q has variance V = σ²_between + E_q[v_q], the interval
± 1.96·sd/√k has width w = 3.92·√(V/k), so k = ⌈3.92² V / w²⌉ prompts reach w.  The pilot gives
σ²_between (the spread of its per-prompt full-label values) and, for every prompt, the design
variance v_q of each design at each budget, to first order (Horvitz & Thompson 1952; Cochran,
"Sampling Techniques", 3rd ed., 1977, Sec. 6.5 and 9A): the estimate's error is the Horvitz–
Thompson error of Σ_j z_j with the linearised variable

    z_j = a_j e_j                      best-of-n (a: its positional weights under the RM)
    z_j = (a_j − R/N) e_j / D          RETA (R the prompt's RETA, D its mean label)

and e_j = J_j − α_q − β·x_j the residual of the labels on the estimators' working model (an
intercept per prompt; slopes, pooled across prompts, on a cheap judge's predictions when there
is one and on every RM's scores), fitted on the pilot's responses.
Poisson sampling (rm-guided) has v = Σ z_j² (1 − π_j)/π_j; simple random sampling of m
(uniform) v = N² (1 − m/N)/m · S²_z.  Fewer judge samples per label than the pilot had add
Σ_j a_j² σ²_j (1/s − 1/s₀) / π_j (÷ D² for RETA), σ²_j the judge's sample variance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._positional import rank_weights, reta_weights
from rmaudit.metrics.reta import reta_n_range

from .design import by_response, guide_importance, rm_guided_inclusion

Z = 1.959963984540054  # the normal quantile of a 95% interval
BUDGETS = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 3 / 8, 1 / 2, 3 / 4)
SAMPLES = (1, 2, 3, 5, 10)
#: metrics whose estimand moves with the labels' noise: they threshold a label (which of two
#: responses the oracle prefers), so a noisier label flips pairs and changes what is measured
NOISE_DEPENDENT = ("pairwise-accuracy",)


@dataclass(frozen=True)
class Pilot:
    """A fully labelled pilot: per prompt, labels J, each label's judge-sample variance (NaN
    when a label had one sample), every RM's scores by RM, and optional cheap predictions."""

    labels: list[np.ndarray]
    sample_variance: list[np.ndarray]
    samples: int
    scores: dict[str, list[np.ndarray]]
    predictions: list[np.ndarray] | None = None


@dataclass(frozen=True)
class WidthTarget:
    """A metric the plan must reach a width on: ``kind`` "reta" (at ``param`` = η) or "bon"
    (at ``param`` = n)."""

    kind: str
    param: float

    @property
    def name(self) -> str:
        """As the run summary heads its column: ``RETA(1/4)``, ``RETA(0.3)``, ``BoN@16``."""
        if self.kind != "reta":
            return f"BoN@{int(self.param)}"
        # display.formatting.eta_label's form; metrics may not import display (pyproject)
        fraction = Fraction(self.param).limit_denominator(1024)
        if fraction.numerator == 1 and abs(float(fraction) - self.param) < 1e-12:
            return f"RETA(1/{fraction.denominator})"
        return f"RETA({self.param:.3g})"


@dataclass(frozen=True)
class Option:
    """One way to label: ``design`` "full", "uniform" or "rm-guided", with or without the cheap
    judge, a budget (fraction of N) and judge samples per label, and what it spends at its
    prompts: labels and oracle calls, and every other resource the plan spends — cheap-judge
    calls, generations (prompts × N) and RM scorings (× the RMs).  ``reaches``: its predicted
    width over the target's (the largest across targets and RMs; ≤ 1 where it reaches them);
    ``feasible``: the pool can supply the prompts."""

    design: str
    cheap: bool
    budget: float
    samples: int
    prompts: int
    labels: float
    calls: float
    feasible: bool
    cheap_calls: float = 0.0
    generations: float = 0.0
    scorings: float = 0.0
    reaches: float = 1.0


@dataclass(frozen=True)
class Prices:
    """The price of one call of each resource a plan spends, in one currency (USD, or oracle
    calls when the oracle has no cost model).  The defaults price oracle calls only."""

    oracle: float = 1.0
    cheap: float = 0.0
    generation: float = 0.0
    scoring: float = 0.0

    def of(self, option: Option) -> float:
        """What ``option`` spends in total."""
        return (
            option.calls * self.oracle
            + option.cheap_calls * self.cheap
            + option.generations * self.generation
            + option.scorings * self.scoring
        )


def _weights(target: WidthTarget, size: int) -> np.ndarray:
    if target.kind == "reta":
        ns = tuple(int(v) for v in reta_n_range(size))
        return reta_weights(size, ns, (float(target.param),), False)[0]
    return rank_weights(size, int(target.param), 1)


def label_residuals(pilot: Pilot, cheap: bool) -> list[np.ndarray]:
    """e = J − α_q − β·x: the labels' residuals on the estimators' working model — an intercept
    per prompt, slopes pooled across prompts on the cheap judge's predictions when ``cheap`` and
    every RM's scores — fitted by least squares on the pilot's responses centred within their
    prompt (as :func:`rmaudit.metrics.budget.estimators.model_slopes` fits them)."""

    def centred(pools):
        return np.concatenate([pool - pool.mean() for pool in pools])

    labels = centred(pilot.labels)
    columns = [centred(pilot.predictions)] if cheap else []
    columns += [centred(scores) for scores in pilot.scores.values()]
    design = np.column_stack(columns)
    coefficients, *_ = np.linalg.lstsq(design, labels, rcond=None)
    residuals = labels - design @ coefficients
    return np.split(residuals, np.cumsum([pool.size for pool in pilot.labels])[:-1])


def _design_variance(z: np.ndarray, inclusion: np.ndarray, design: str) -> float:
    if design == "full":
        return 0.0
    if design == "rm-guided":
        return float((z**2 * (1 - inclusion) / inclusion).sum())
    size, m = z.size, inclusion.sum()
    return float(size**2 * (1 - m / size) / m * z.var(ddof=1))


def design_inclusion(
    pilot: Pilot, design: str, budget: float, guides: Sequence[str]
) -> list[np.ndarray]:
    """Each pilot prompt's inclusion probabilities under a design ("full", "uniform" or
    "rm-guided" guided by ``guides``) at a budget."""
    inclusion = []
    for q, labels in enumerate(pilot.labels):
        size = labels.size
        if design == "rm-guided":
            importance = guide_importance(np.array([pilot.scores[g][q] for g in guides]))
            inclusion.append(rm_guided_inclusion(importance, max(2.0, budget * size)))
        else:
            m = size if design == "full" else max(2, round(budget * size))
            inclusion.append(np.full(size, m / size))
    return inclusion


def _linearised(pilot: Pilot, target: WidthTarget, rm: str, q: int) -> tuple[float, np.ndarray]:
    """Prompt q's full-label value of the target and the weights c_j of its linearisation,
    value error ≈ Σ_j c_j e_j: a_j for best-of-n, (a_j − R/N)/D for RETA."""
    labels = pilot.labels[q]
    a = by_response(_weights(target, labels.size), pilot.scores[rm][q])
    if target.kind != "reta":
        return float(a @ labels), a
    mean = labels.mean()
    value = float(a @ labels / mean)
    return value, (a - value / labels.size) / mean


def _extra_noise(pilot: Pilot, q: int, samples: int) -> np.ndarray:
    """Each response's judge variance added by ``samples`` judge samples per label instead of
    the pilot's: σ²_j (1/s − 1/s₀) (0 where the pilot had one sample)."""
    return np.nan_to_num(pilot.sample_variance[q]) * max(0.0, 1 / samples - 1 / pilot.samples)


def per_prompt_variance(
    pilot: Pilot,
    target: WidthTarget,
    rm: str,
    design: str,
    inclusion: list[np.ndarray],
    residuals: list[np.ndarray],
    samples: int,
) -> tuple[float, float]:
    """(σ²_between, mean design + judge variance) of the target for one RM under one option:
    a design with its :func:`design_inclusion` and the :func:`label_residuals` of its working
    model, at ``samples`` judge samples per label."""
    values, within = [], []
    for q in range(len(pilot.labels)):
        value, c = _linearised(pilot, target, rm, q)
        values.append(value)
        within.append(
            _design_variance(c * residuals[q], inclusion[q], design)
            + float((c**2 * _extra_noise(pilot, q, samples) / inclusion[q]).sum())
        )
    return float(np.var(values, ddof=1)), float(np.mean(within))


def label_floor(pilot: Pilot, target: WidthTarget, rm: str, width: float) -> float:
    """The fewest one-sample labels that any design could spend to reach ``width`` on one RM's
    target, granted unlimited prompts and a cheap judge predicting the pilot's labels exactly:
    the judge noise of one sample is all that is left, Σ_j c_j² ν_j / π_j per prompt (c the
    linearised weights of :func:`_linearised`, ν the extra noise of one sample), and
    labels L = k·Σπ over k prompts.  By Cauchy–Schwarz, (Σπ)(Σ c²ν/π) ≥ (Σ|c|√ν)², with equality
    at π ∝ |c|√ν, so L ≥ E_q[(Σ_j |c_j| √ν_j)²] / V with V = (width / 2z)², the variance the
    width allows; as prompts grow, the between-prompt term σ²_between·Σπ/V vanishes."""
    spend = []
    for q in range(len(pilot.labels)):
        _, c = _linearised(pilot, target, rm, q)
        spend.append(float(np.abs(c) @ np.sqrt(_extra_noise(pilot, q, 1))) ** 2)
    return float(np.mean(spend)) / (width / (2 * Z)) ** 2


def prompts_needed(
    pilot: Pilot,
    targets: Sequence[WidthTarget],
    width: dict[tuple[str, str], float],
    design: str,
    inclusion: list[np.ndarray],
    residuals: list[np.ndarray],
    samples: int,
) -> int:
    """The prompts k = ⌈(2z)² V / w²⌉ that reach every target's width on every RM."""
    needed = 0
    for target in targets:
        for rm in pilot.scores:
            between, within = per_prompt_variance(
                pilot, target, rm, design, inclusion, residuals, samples
            )
            variance = (2 * Z) ** 2 * (between + within) / width[(target.name, rm)] ** 2
            needed = max(needed, int(np.ceil(variance)))
    return needed


@dataclass(frozen=True)
class Spending:
    """What one prompt of a benchmark spends besides labels: N generations, N scorings per RM,
    and, with the cheap judge, ``cheap_per_response`` cheap calls per response (0 when the
    cheap judge is one of the RMs, whose scorings are already counted).  ``cheap_always``: the
    cheap judge is one of the RMs that is paid per call (an LLM judge over an API, not among
    the ``rms``), so its ratings are cheap calls in every option, with it or without."""

    per_prompt: int
    rms: int
    cheap_per_response: int = 1
    cheap_always: bool = False


def priced_option(
    design: str,
    cheap: bool,
    budget: float,
    samples: int,
    *,
    prompts: int,
    needed: int,
    spending: Spending,
    max_prompts: int | None,
) -> Option:
    """The option run at ``prompts`` prompts, ``needed`` of which reach the targets."""
    n = spending.per_prompt
    per_prompt = n if design == "full" else max(2.0, budget * n)
    return Option(
        design,
        cheap,
        budget,
        samples,
        prompts,
        prompts * per_prompt,
        prompts * per_prompt * samples,
        max_prompts is None or prompts <= max_prompts,
        cheap_calls=(
            prompts * n * spending.cheap_per_response if cheap or spending.cheap_always else 0.0
        ),
        generations=float(prompts * n),
        scorings=float(prompts * n * spending.rms),
        reaches=float(np.sqrt(needed / prompts)) if prompts else float("inf"),
    )


def design_options(
    pilot: Pilot,
    targets: Sequence[WidthTarget],
    width: dict[tuple[str, str], float],
    *,
    guides: Sequence[str],
    max_prompts: int | None,
    per_prompt: int,
    budgets: Sequence[float] = BUDGETS,
    samples: Sequence[int] = SAMPLES,
    spending: Spending | None = None,
) -> list[Option]:
    """Every option's cost to reach ``width[(target name, rm)]`` for every target and RM;
    what each spends besides labels per ``spending`` (default: N scorings per RM of the
    pilot, one cheap call per response with the cheap judge)."""
    if len(pilot.labels) < 3:
        raise MetricInputError("a pilot needs at least 3 fully labelled prompts", field="pilot")
    cheap_options = (False, True) if pilot.predictions is not None else (False,)
    choices = [("full", False, 1.0)] + [
        (design, cheap, budget)
        for design in ("uniform", "rm-guided")
        for cheap in cheap_options
        for budget in budgets
        if budget * per_prompt >= 2
    ]
    if not guides:
        choices = [c for c in choices if c[0] != "rm-guided"]
    residuals = {cheap: label_residuals(pilot, cheap) for cheap in cheap_options}
    spending = spending or Spending(per_prompt, len(pilot.scores))
    options = []
    for design, cheap, budget in choices:
        inclusion = design_inclusion(pilot, design, budget, guides)
        for s in samples:
            if s > pilot.samples:
                continue
            needed = prompts_needed(pilot, targets, width, design, inclusion, residuals[cheap], s)
            options.append(
                priced_option(
                    design,
                    cheap,
                    budget,
                    s,
                    prompts=needed,
                    needed=needed,
                    spending=spending,
                    max_prompts=max_prompts,
                )
            )
    return options


ORACLE_CALLS = Prices()


def recommend(options: Sequence[Option], prices: Prices = ORACLE_CALLS) -> Option:
    """The feasible option that costs least in total at ``prices``; never one that loses to
    full labelling (full labelling is among the options, so the cheapest is at worst full
    labelling)."""
    feasible = [o for o in options if o.feasible] or list(options)
    return min(feasible, key=lambda o: (prices.of(o), o.design != "full"))


def loses(option: Option, options: Sequence[Option], prices: Prices = ORACLE_CALLS) -> bool:
    """Whether a budgeted option costs more at ``prices`` than full labelling at its best."""
    full = [prices.of(o) for o in options if o.design == "full" and o.feasible]
    return bool(full) and option.design != "full" and prices.of(option) > min(full)
