"""What the type checker found: library calls that met None where they needed a value and
failed with an AttributeError or TypeError now say what is missing."""

from __future__ import annotations

import pytest

from rmaudit.benchmark.portable import export_benchmark
from rmaudit.default_plugins.pair_metrics import PairAccuracy
from rmaudit.errors import BadInput
from rmaudit.results.as_json import run_results
from rmaudit.store import Store
from rmaudit.testing import ConformanceError, check_metric
from rmaudit.testing.fake_openai import FakeOpenAI
from rmaudit.testing.samples import sample_benchmark


@pytest.fixture
def store(tmp_path):
    opened = Store.open(tmp_path / "empty.db")
    yield opened
    opened.close()


def test_exporting_an_unknown_benchmark_names_it(store, tmp_path):
    with pytest.raises(BadInput, match="no such benchmark") as raised:
        export_benchmark(store, "0123456789", tmp_path / "out.jsonl")
    assert raised.value.value == "0123456789"
    assert not (tmp_path / "out.jsonl").exists()


def test_the_results_of_an_unknown_run_name_it(store):
    with pytest.raises(BadInput, match="no such run") as raised:
        run_results(store, "0123456789")
    assert raised.value.field == "run"


def test_a_fake_server_has_no_address_before_it_starts():
    server = FakeOpenAI()
    with pytest.raises(RuntimeError, match="before start"):
        server.base_url  # noqa: B018
    with server:
        assert server.base_url.startswith("http://127.0.0.1:")


def test_a_pair_metric_checked_on_benchmark_inputs_is_a_conformance_error():
    with pytest.raises(ConformanceError, match="checked on PairInputs"):
        check_metric(PairAccuracy, sample_benchmark())
