"""Every built-in TUI panel, registered through the same ``register_panels`` hook a plugin uses.

A built-in panel says what it shows and leaves its factory out: its view is the TUI's own
(``rmaudit.tui.panel_views``, by the panel's name), so registering these panels (which every
``load_plugins()`` does) imports no UI toolkit, and no plugin module names the TUI.
"""

from __future__ import annotations

from rmaudit import hookimpl
from rmaudit.components.panels import Panel
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


@hookimpl
def register_panels(register):
    register(
        Panel(
            "reta-curve",
            "RETA curve",
            None,
            curve_keys=(RETA_CURVE,),
            doc="RETA(η) against −log2 η with stderr bars, one line per RM",
        )
    )
    register(
        Panel(
            "best-of-n",
            "Best-of-n",
            None,
            curve_keys=(best_of_n_curve_key(1), best_of_n_curve_key(2)),
            doc="best-of-n and 2nd-best-of-n against n or KL; x toggles the axis",
        )
    )
    register(
        Panel(
            "curve",
            "Curve",
            None,
            catch_all=True,
            doc="any other stored curve, value against its x",
        )
    )
    register(
        Panel(
            "shift",
            "Shift sweep",
            None,
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
            None,
            curve_keys=(RELIABILITY_DIAGRAM,),
            doc="accuracy against mean confidence per confidence bin; the diagonal is "
            "perfect calibration",
        )
    )
    register(
        Panel(
            "regret",
            "Regret",
            None,
            metric_keys=(REGRET_SUMMARY,),
            curve_prefixes=(NDR_CURVE_PREFIX,),
            doc="Rethinking RM Evaluation's Table 1/4 with CIs, observed (accuracy, NDR) of each "
            "proxy on the Regressional Goodhart curve (Fig. 8), and NDR against n or KL",
        )
    )
