"""The executor table of a recipe: validation with one-line errors, and what it resolves to.
None of these start Ray."""

from __future__ import annotations

import importlib.util

import pytest
from _support import SMALL_RECIPE

from rmaudit.recipe import load_recipe
from rmaudit.recipe.executor_options import LocalExecutorOptions, RayExecutorOptions
from rmaudit.run.executors import RayExecutor


@pytest.fixture
def with_executor(write_recipe):
    def write(table: str):
        return write_recipe(SMALL_RECIPE.replace("{extra_rms}", "") + "\n[executor]\n" + table)

    return write


def test_local_is_the_default_and_the_executor_is_not_part_of_the_run(write_recipe, with_executor):
    plain = load_recipe(write_recipe())
    assert plain.executor == LocalExecutorOptions()
    pytest.importorskip("ray")
    on_ray = load_recipe(with_executor('name = "ray"\naddress = "auto"\nnum_workers = 8\n'))
    assert on_ray.executor == RayExecutorOptions(name="ray", address="auto", num_workers=8)
    assert on_ray.run_key == plain.run_key


@pytest.mark.parametrize(
    "table, message",
    [
        ('name = "dask"', "executor.name: unknown executor; known: local, ray (got 'dask')"),
        ("num_workers = 2", "executor.name: missing executor name; known: local, ray"),
        (
            'name = "ray"\nnum_worker = 2',
            "executor.num_worker: unknown option; did you mean 'num_workers'?",
        ),
        (
            'name = "ray"\nnum_workers = 0',
            "executor.num_workers: Input should be greater than or equal to 1",
        ),
        (
            'name = "ray"\naddress = "http://head:8265"',
            "executor.address: expected 'auto', "
            "'ray://HOST[:PORT]' or 'HOST:PORT' (omit it to start Ray on this machine) (got 'http://head:8265')",
        ),
        (
            'name = "ray"\n[executor.reward_models]\nnum_gpu = 1',
            "executor.reward_models.num_gpu: unknown option; did you mean 'num_gpus'?",
        ),
    ],
)
def test_bad_executor_tables_exit_2_with_one_line(with_executor, rmaudit, table, message):
    pytest.importorskip("ray")  # a valid ray table would otherwise fail on the missing install
    recipe = with_executor(table)
    result = rmaudit("run", str(recipe), "--db", str(recipe.with_suffix(".db")))
    assert result.code == 2
    assert result.err.strip().startswith(f"Error: {recipe}: {message}"), result.err
    assert not recipe.with_suffix(".db").exists()


def test_ray_not_installed_says_how_to_install_it(with_executor, rmaudit, monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "ray" else find_spec(name, *args),
    )
    recipe = with_executor('name = "ray"')
    result = rmaudit("run", str(recipe), "--dry-run")
    assert result.code == 2
    assert result.err.strip() == (
        f"Error: {recipe}: executor.name: the ray executor needs Ray, "
        f"which is not installed: pip install 'rmaudit[ray]' (got 'ray')"
    )


def test_pools_take_stage_overrides_over_the_executor_defaults():
    options = RayExecutorOptions(
        name="ray",
        num_workers=4,
        num_gpus=1,
        oracle={"num_workers": 2, "num_gpus": 0},
        reward_models={"num_gpus": 0.5},
    )
    assert options.pool("oracle").model_dump() == {"num_workers": 2, "num_cpus": 1.0, "num_gpus": 0}
    assert options.pool("reward_model").model_dump() == {
        "num_workers": 4,
        "num_cpus": 1.0,
        "num_gpus": 0.5,
    }
    assert options.pool("reference_policy").model_dump() == {
        "num_workers": 4,
        "num_cpus": 1.0,
        "num_gpus": 1,
    }


def test_an_api_components_concurrency_is_split_across_its_pool():
    from rmaudit.default_plugins.llm_judge_oracle import LlmJudgeOracle
    from rmaudit.default_plugins.simulated import SimulatedRM

    executor = RayExecutor(RayExecutorOptions(name="ray"))
    judge = LlmJudgeOracle(
        LlmJudgeOracle.Options(base_url="http://127.0.0.1:1/v1", model="m", concurrency=16)
    )
    shares = [o.concurrency for o in executor.worker_options(judge, 3)]
    assert shares == [6, 5, 5]
    assert all(
        o.model_copy(update={"concurrency": 16}) == judge.options
        for o in executor.worker_options(judge, 3)
    )
    rm = SimulatedRM()
    assert executor.worker_options(rm, 2) == [rm.options, rm.options]
