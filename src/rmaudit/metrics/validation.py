"""Input checks for metric functions, public so that plugin metrics validate like built-ins.

Each check raises :class:`rmaudit.errors.MetricInputError` ("expected …, got …", with the
parameter at fault in ``field`` and the prompt at fault in ``prompt_index``), which the runner
turns into a one-line exit-code-2 error naming the recipe field and the prompt.

>>> from rmaudit.metrics.validation import check_pools
>>> oracle, scores = check_pools([[1, 2, 3]], [[0.1, 0.2, 0.3]])
>>> oracle[0].dtype, len(scores)
(dtype('float64'), 1)
"""

from rmaudit.metrics._validation import (
    check_fraction,
    check_integer,
    check_pools,
    check_subset_size,
)

__all__ = ["check_fraction", "check_integer", "check_pools", "check_subset_size"]
