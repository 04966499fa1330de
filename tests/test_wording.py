"""One way to write a share: a budget's description and its labelled share agree."""

from __future__ import annotations

from rmaudit.recipe.budget import LabelBudget
from rmaudit.results.labelling import labelling_line


def test_a_budget_and_its_labelled_share_are_written_alike():
    budget = LabelBudget(fraction=0.375, per_prompt=None, design="uniform", guide=(), seed=0)
    line = labelling_line(
        {
            "description": budget.describe(),
            "labelled": 3,
            "responses": 8,
            "fraction": 3 / 8,
            "cheap_judge": None,
        }
    )
    assert line.count("37.5%") == 2 and "38%" not in line
