"""Audit suites: the presets behind ``rmaudit audit`` (docs/audit.md).

A suite is a recipe template shipped with rmaudit: which public data it reads (pinned to a
source and version), which pair sources parse it and which metrics it computes.  Given the
reward models to audit and where the data lies (:mod:`.data`), :mod:`.build` turns it into
the same validated :class:`~rmaudit.recipe.Recipe` that ``rmaudit run`` reads from a file,
and that a user can print as TOML and keep.  :mod:`.model_arguments` turns the command's MODEL
arguments into reward-model tables; :mod:`.audit_verdict` reads each suite's headline numbers
back.  :mod:`.suite` says what a suite holds; the suites themselves are in
:mod:`.pair_presets`, :mod:`.bon_presets`, :mod:`.math_presets` and
:mod:`.process_presets`.
"""

from __future__ import annotations

from rmaudit.errors import BadInput

from .bon_presets import BON_SUITES
from .math_presets import MATH_SUITES
from .pair_presets import JUDGEBENCH_PAIRS, PAIR_SUITES
from .process_presets import PRMBENCH_CLASSES, PROCESS_SUITES, PROCESSBENCH_SPLITS
from .suite import Suite

__all__ = [
    "JUDGEBENCH_PAIRS",
    "PRMBENCH_CLASSES",
    "PROCESSBENCH_SPLITS",
    "RESULTS_SUFFIX",
    "SUITES",
    "Suite",
    "get_suite",
]

#: the results file every audit writes is named after its DB with this ending
#: (``rmaudit-audit.db`` → ``rmaudit-audit.results.json``), so two DBs in one folder keep theirs
RESULTS_SUFFIX = ".results.json"

#: every suite, in the order ``rmaudit audit`` runs and lists them (the suites of process
#: reward models run only when named with --suite)
SUITES: dict[str, Suite] = {
    suite.name: suite for suite in (*PAIR_SUITES, *BON_SUITES, *MATH_SUITES, *PROCESS_SUITES)
}


def get_suite(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise BadInput(
            f"unknown suite; known: {', '.join(SUITES)}", field="--suite", value=name
        ) from None
