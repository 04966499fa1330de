"""rmaudit's embedded offline world: prompts, a reference policy, a judge and reward models.

Everything here is *simulated* — no network, no GPU, no real model.  The policy writes
real texts from latent attributes (substance, padding, flattery, hedging, refusal,
off-topic drift); the judge and the reward models read those texts back through
:func:`analyze_response`, so editing a text moves their scores.  The world is tuned to
reproduce the phenomena of the RETA paper (seeds/000): close pairwise accuracies with
diverging RETA curves, reward hacking at small η, best-of-n vs 2nd-best-of-n
disagreement, and ensembles beating their members.
"""

from .features import ResponseFeatures, analyze_response
from .judge import SimulatedJudge
from .policy import SimulatedPolicy
from .prompts import builtin_prompts
from .reward_model import SimulatedRewardModel

SIMULATED_NOTICE = (
    "Simulated: these results come from rmaudit's built-in simulated world "
    "(simulated policy, judge and reward models), not from real models."
)

__all__ = [
    "SIMULATED_NOTICE",
    "ResponseFeatures",
    "SimulatedJudge",
    "SimulatedPolicy",
    "SimulatedRewardModel",
    "analyze_response",
    "builtin_prompts",
]
