"""Every hook in hookspecs.py, exercised by a plugin registered through it (test_docs.py checks
that each hook name appears in some test, as Datasette does).

A toy world registers one component of each pipeline kind and a full ``rmaudit run`` uses them
all; the shift perturber, the CLI command and the TUI panel, which a run does not use, are
checked on their own.
"""

from __future__ import annotations

import sqlite3
import textwrap

import numpy as np

from rmaudit import hookimpl, plugins
from rmaudit.components import (
    BenchmarkContent,
    BenchmarkSource,
    Embedder,
    Generation,
    Metric,
    MetricOutput,
    MetricValue,
    Oracle,
    OracleLabel,
    ProcessRewardModel,
    PromptSampler,
    PromptSource,
    ReferencePolicy,
    RewardModel,
    ShiftPerturber,
    Solution,
)
from rmaudit.components.keys import content_key
from rmaudit.testing import check_shift_perturber


class CountingPrompts(PromptSource):
    """Six prompts asking to count to k."""

    name = "toy-prompts"

    def load(self):
        return [(f"Count to {k}.", {"k": k}) for k in range(1, 7)]


class LengthEmbedder(Embedder):
    """Embeds a prompt as (its length, 1)."""

    name = "toy-length"

    def embed(self, texts):
        return np.array([[len(text), 1.0] for text in texts])


class ShortestPrompts(PromptSampler):
    """The three prompts with the shortest embeddings' first coordinate, in pool order."""

    name = "toy-shortest"
    needs_embeddings = True

    def sample(self, prompts, embeddings):
        return sorted(np.argsort(embeddings[:, 0], kind="stable")[:3].tolist())


class Counter(ReferencePolicy):
    """Sample i counts from 0 to i."""

    name = "toy-counter"

    def generate(self, batch):
        return [Generation(" ".join(str(x) for x in range(i + 1))) for _, i in batch]


class WordCount(Oracle):
    """1 + the number of words."""

    name = "toy-words"

    def label(self, batch):
        return [OracleLabel(score=1.0 + len(r.text.split())) for _, r in batch]


class CharCount(RewardModel):
    """The number of characters."""

    name = "toy-chars"

    def score(self, batch):
        return [float(len(r.text)) for _, r in batch]


class TopPick(Metric):
    """Mean oracle score of the RM's favourite response."""

    name = "toy-top-pick"

    def compute(self, inputs):
        value = float(
            np.mean([j[np.argmax(y)] for j, y in zip(inputs.oracle, inputs.scores, strict=True)])
        )
        return MetricOutput(values=[MetricValue("top_pick", "top pick", value)])


class Shout(ShiftPerturber):
    """Upper-cases the text (a shift of style, not content)."""

    name = "toy-shout"

    def perturb(self, text, *, seed):
        return text.upper()


class ShortSteps(ProcessRewardModel):
    """Trusts short steps."""

    name = "toy-short-steps"

    def score_steps(self, batch):
        return [[1.0 / (1 + len(step)) for step in solution.steps] for solution in batch]


class ToyWorld:
    """One plugin object implementing every hook."""

    @hookimpl
    def register_prompt_sources(self, register):
        register(CountingPrompts)

    @hookimpl
    def register_prompt_samplers(self, register):
        register(ShortestPrompts)

    @hookimpl
    def register_embedders(self, register):
        register(LengthEmbedder)

    @hookimpl
    def register_reference_policies(self, register):
        register(Counter)

    @hookimpl
    def register_oracles(self, register):
        register(WordCount)

    @hookimpl
    def register_reward_models(self, register):
        register(CharCount)

    @hookimpl
    def register_shift_perturbers(self, register):
        register(Shout)

    @hookimpl
    def register_process_reward_models(self, register):
        register(ShortSteps)

    @hookimpl
    def register_metrics(self, register):
        register(TopPick)

    @hookimpl
    def register_commands(self, cli):
        import click

        @cli.command(name="toy-hello")
        @click.argument("who")
        def hello(who):
            """Greet WHO."""
            click.echo(f"hello {who}")

    @hookimpl
    def register_panels(self, register):
        from rmaudit.results.panels import Panel

        register(
            Panel("toy-panel", "Toy", lambda context, curve_key: None, metric_keys=("top_pick",))
        )


RECIPE = """
[prompts.source]
name = "toy-prompts"

[prompts.sampler]
name = "toy-shortest"

[prompts.embedder]
name = "toy-length"

[responses]
per_prompt = 4

[responses.policy]
name = "toy-counter"

[oracle]
name = "toy-words"

[[reward_models]]
label = "chars"
name = "toy-chars"

[[metrics]]
name = "toy:toy-top-pick"
"""


def test_a_run_uses_components_from_every_pipeline_hook(register_plugin, rmaudit, tmp_path):
    recipe = tmp_path / "toy.toml"
    recipe.write_text(textwrap.dedent(RECIPE))
    db = tmp_path / "toy.db"
    with register_plugin(ToyWorld(), name="toy"):
        result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 0, result.err
    with sqlite3.connect(db) as conn:
        prompts = [row[0] for row in conn.execute("select text from prompts order by text")]
        (value,) = conn.execute(
            "select value from metric_results where key = 'top_pick'"
        ).fetchone()
    # register_prompt_sources + register_embedders + register_prompt_samplers: the 3 shortest
    assert prompts == ["Count to 1.", "Count to 2.", "Count to 3."]
    # register_reference_policies, register_reward_models, register_oracles, register_metrics:
    # the longest count (4 words) is the RM's pick, and the oracle gives it 1 + 4
    assert value == 5.0


def test_register_shift_perturbers(register_plugin):
    with register_plugin(ToyWorld(), name="toy"):
        found = plugins.resolve("shift_perturber", "toy-shout")
    assert found.cls is Shout and found.source == "toy"
    check_shift_perturber(Shout)


def test_register_process_reward_models(register_plugin):
    with register_plugin(ToyWorld(), name="toy"):
        found = plugins.resolve("process_reward_model", "toy-short-steps")
    assert found.cls is ShortSteps and found.source == "toy"
    scores = found.cls().score_steps([Solution("1 + 1?", ("1 + 1", "= 2"))])
    assert scores == [[1 / 6, 1 / 4]]
    assert "toy-short-steps" not in plugins.component_names("process_reward_model")


def test_register_commands_adds_a_cli_subcommand(register_plugin, rmaudit):
    with register_plugin(ToyWorld(), name="toy"):
        result = rmaudit("toy-hello", "world")
    assert (result.code, result.out) == (0, "hello world\n")
    assert rmaudit("toy-hello", "world").code == 2  # gone with the plugin


def test_register_panels_adds_a_tui_panel(register_plugin):
    from rmaudit.results.panels import registered_panels

    with register_plugin(ToyWorld(), name="toy"):
        names = [panel.name for panel in registered_panels()]
    assert "toy-panel" in names
    assert "toy-panel" not in [panel.name for panel in registered_panels()]


class TwoAnswers(BenchmarkSource):
    """Two prompts, three answers each, labelled by hand."""

    name = "toy-two-answers"

    def load(self):
        key = content_key("toy-two-answers", 1)
        return BenchmarkContent(
            header={"title": "hand-labelled", "policy_key": key, "oracle_key": key},
            records=[
                {
                    "prompt": {"text": f"{q} + {q}?"},
                    "responses": [
                        {"text": answer, "sample_index": i, "label": {"score": score}}
                        for i, (answer, score) in enumerate(
                            [(str(2 * q), 3.0), ("no idea", 1.0), (f"{2 * q} because", 2.0)]
                        )
                    ],
                }
                for q in (1, 2)
            ],
        )


class ToyBenchmarks:
    @hookimpl
    def register_benchmark_sources(self, register):
        register(TwoAnswers)


def test_register_benchmark_sources_gives_a_benchmark_a_recipe_audits(
    register_plugin, rmaudit, tmp_path
):
    recipe = tmp_path / "hand.toml"
    recipe.write_text(
        '[benchmark]\nname = "toy-two-answers"\n\n[[reward_models]]\n'
        'label = "length"\nname = "length"\n\n[[metrics]]\nname = "best-of-n"\n'
        "n = [1, 3]\nreport = [3]\n"
    )
    db = tmp_path / "hand.db"
    with register_plugin(ToyBenchmarks(), name="toy-benchmarks"):
        result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 0, result.err
    with sqlite3.connect(db) as conn:
        (value,) = conn.execute("select value from metric_results where key = 'bon@3'").fetchone()
    assert value == 2.0  # length picks "n because" on both prompts, labelled 2
