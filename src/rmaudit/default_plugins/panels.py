"""Every built-in TUI panel, registered through the same ``register_panels`` hook a plugin uses.

Each factory is named by its path in ``rmaudit.tui.panel_views`` and imported only when the
Curves screen shows the panel, so registering these panels (which every ``load_plugins()``
does) imports no UI toolkit, and no plugin module imports the TUI.
"""

from __future__ import annotations

from rmaudit import hookimpl
from rmaudit.components.vocabulary import (
    NDR_CURVE_PREFIX,
    REGRET_SUMMARY,
    RELIABILITY_DIAGRAM,
    RETA_CURVE,
    SHIFT_QUANTITIES,
    SHIFT_TARGETS,
    best_of_n_curve_key,
    shift_curve_key,
)
from rmaudit.results.panels import Panel

VIEWS = "rmaudit.tui.panel_views"


@hookimpl
def register_panels(register):
    register(
        Panel(
            "reta-curve",
            "RETA curve",
            f"{VIEWS}:reta_curve",
            curve_keys=(RETA_CURVE,),
            doc="RETA(η) against −log2 η with stderr bars, one line per RM",
        )
    )
    register(
        Panel(
            "best-of-n",
            "Best-of-n",
            f"{VIEWS}:best_of_n",
            curve_keys=(best_of_n_curve_key(1), best_of_n_curve_key(2)),
            doc="best-of-n and 2nd-best-of-n against n or KL; x toggles the axis",
        )
    )
    register(
        Panel(
            "curve",
            "Curve",
            f"{VIEWS}:any_curve",
            catch_all=True,
            doc="any other stored curve, value against its x",
        )
    )
    register(
        Panel(
            "shift",
            "Shift sweep",
            f"{VIEWS}:shift_sweep",
            curve_keys=tuple(
                shift_curve_key(q, t) for q in SHIFT_QUANTITIES for t in SHIFT_TARGETS
            ),
            doc="accuracy, confidence, ECE, AUROC and FPR@95 against shift level p, "
            "one line per RM and target (RMs Under Distribution Shift, Fig. 1-2)",
        )
    )
    register(
        Panel(
            "reliability-diagram",
            "Reliability diagram",
            f"{VIEWS}:reliability_diagram",
            curve_keys=(RELIABILITY_DIAGRAM,),
            doc="accuracy against mean confidence per confidence bin; the diagonal is "
            "perfect calibration",
        )
    )
    register(
        Panel(
            "regret",
            "Regret",
            f"{VIEWS}:regret",
            metric_keys=(REGRET_SUMMARY,),
            curve_prefixes=(NDR_CURVE_PREFIX,),
            doc="Rethinking RM Evaluation's Table 1/4 with CIs, observed (accuracy, NDR) of each "
            "proxy on the Regressional Goodhart curve (Fig. 8), and NDR against n or KL",
        )
    )
