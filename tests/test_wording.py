"""One way to write a share: a budget's description and its labelled share agree."""

from __future__ import annotations

from rmaudit.recipe.budget import LabelBudget
from rmaudit.results.labelling import Labelling, labelling_line


def test_a_budget_and_its_labelled_share_are_written_alike():
    _, budget = LabelBudget.from_oracle_table(
        {"budget": 0.375}, file="recipe.toml", rm_labels=(), per_prompt=8
    )
    assert budget is not None
    line = labelling_line(
        Labelling(
            design=budget.design,
            budget=0.375,
            labels_per_prompt=None,
            guide=(),
            description=budget.describe(),
            labelled=3,
            responses=8,
            fraction=3 / 8,
            cheap_judge=None,
        )
    )
    assert line.count("37.5%") == 2 and "38%" not in line
