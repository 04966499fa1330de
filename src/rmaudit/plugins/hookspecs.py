"""Hook specifications: one collector hook per component kind (docs/architecture.md,
"Plugin kinds").

Every ``register_<kind>`` hook receives a ``register`` callback; a plugin calls it once
per component class it provides.  The class must subclass the base class of that kind
in :mod:`rmaudit.components`, carry a unique ``name`` and an ``Options`` model.
"""

import pluggy

hookspec = pluggy.HookspecMarker("rmaudit")


@hookspec
def register_prompt_sources(register):
    """Register :class:`rmaudit.components.PromptSource` classes (where prompts come from).

    Preference-pair datasets register here too, as :class:`rmaudit.components.PairSource`
    subclasses: they give their prompts to ``[prompts.source]`` and their pairs to
    ``[pairs.source]``.
    """


@hookspec
def register_prompt_samplers(register):
    """Register :class:`rmaudit.components.PromptSampler` classes (which prompts to keep)."""


@hookspec
def register_embedders(register):
    """Register :class:`rmaudit.components.Embedder` classes (prompt texts → vectors)."""


@hookspec
def register_reference_policies(register):
    """Register :class:`rmaudit.components.ReferencePolicy` classes (prompt → responses)."""


@hookspec
def register_oracles(register):
    """Register :class:`rmaudit.components.Oracle` classes (response → trusted score)."""


@hookspec
def register_reward_models(register):
    """Register :class:`rmaudit.components.RewardModel` classes (response → RM score)."""


@hookspec
def register_process_reward_models(register):
    """Register :class:`rmaudit.components.ProcessRewardModel` classes (solution steps → a
    score per step)."""


@hookspec
def register_shift_perturbers(register):
    """Register :class:`rmaudit.components.ShiftPerturber` classes (text → shifted text)."""


@hookspec
def register_metrics(register):
    """Register :class:`rmaudit.components.Metric` classes (scores + oracle → results)."""


@hookspec
def register_benchmark_sources(register):
    """Register :class:`rmaudit.components.BenchmarkSource` classes (labelled benchmarks
    assembled from files made elsewhere, such as AlpacaEval outputs and annotations)."""


@hookspec
def register_commands(cli):
    """Add subcommands to the ``rmaudit`` click group passed as ``cli``."""


@hookspec
def register_panels(register):
    """Register :class:`rmaudit.results.panels.Panel` instances: views of stored results in
    ``rmaudit tui``.

    A panel names the curve and scalar metric keys it shows and a factory that builds its
    Textual widget when the panel is displayed; import Textual inside the factory, never at
    module level, so headless use of rmaudit does not need it.
    """
