"""rmaudit-ranking: the RETA paper's ranking metrics (App. A.1) as an rmaudit plugin.

The pure functions work on numpy arrays without rmaudit's runner::

    from rmaudit_ranking import hit_rate, mrr, ndcg

The components (``hit-rate``, ``mrr``, ``ndcg``) reach recipes through the ``rmaudit``
entry point declared in this distribution's ``pyproject.toml``.
"""

from rmaudit_ranking.metrics import hit_rate, mrr, ndcg, oracle_ranks

__all__ = ["hit_rate", "mrr", "ndcg", "oracle_ranks"]
