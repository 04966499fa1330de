"""check_process_reward_model catches each broken PRM contract and passes a conforming PRM.

Each broken PRM below breaks exactly one contract; the kit must name that contract.  The
built-in PRMs are checked in test_conformance_builtins.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ConfigDict

from rmaudit.components import ComponentOptions, ProcessRewardModel
from rmaudit.errors import BadInput
from rmaudit.testing import ConformanceError, check_component, check_process_reward_model


class _Length(ProcessRewardModel):
    """Shorter steps score higher: conforms."""

    name = "length"

    def score_steps(self, batch):
        return [[1.0 / (1 + len(step)) for step in solution.steps] for solution in batch]


class _OneShort(_Length):
    """Leaves out the last step's score."""

    name = "one-short"

    def score_steps(self, batch):
        return [scores[:-1] for scores in super().score_steps(batch)]


class _NotFinite(_Length):
    """Scores a step without digits NaN."""

    name = "not-finite"

    def score_steps(self, batch):
        return [
            [float("nan") if not any(c.isdigit() for c in step) else 1.0 for step in s.steps]
            for s in batch
        ]


class _BatchMean(_Length):
    """Centres the step scores on the batch's mean: a solution's scores depend on the others."""

    name = "batch-mean"

    def score_steps(self, batch):
        scores = super().score_steps(batch)
        mean = float(np.mean([s for steps in scores for s in steps]))
        return [[s - mean for s in steps] for steps in scores]


class _Loose(ComponentOptions):
    model_config = ConfigDict(extra="ignore")


class _IgnoresUnknownOptions(_Length):
    """Options that drop unknown names silently."""

    name = "ignores-unknown-options"
    Options = _Loose


class _CrashesOnNoSteps(_Length):
    """Raises an IndexError on a solution with no steps."""

    name = "crashes-on-no-steps"

    def score_steps(self, batch):
        return [[1.0 / (1 + len(s.steps[-1]))] * len(s.steps) for s in batch]


@pytest.mark.parametrize(
    "model, contract",
    [
        (_OneShort, "one finite score per step"),
        (_NotFinite, "one finite score per step"),
        (_BatchMean, "batch size"),
        (_IgnoresUnknownOptions, "unknown option"),
        (_CrashesOnNoSteps, "IndexError"),
    ],
)
def test_catches_broken_process_reward_models(model, contract):
    with pytest.raises(ConformanceError, match=contract):
        check_process_reward_model(model)


def test_a_conforming_prm_passes_and_may_refuse_no_steps_with_bad_input():
    check_component(_Length)

    class Strict(_Length):
        """Refuses a solution with no steps."""

        name = "strict"

        def score_steps(self, batch):
            if any(not s.steps for s in batch):
                raise BadInput("a solution with no steps", field="steps")
            return super().score_steps(batch)

    check_process_reward_model(Strict)
