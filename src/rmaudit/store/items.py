"""The content-addressed items stages store: prompts, selections, responses, oracle labels, RM
scores, preference pairs and pair sets, benchmarks, and the components that made them.

Writes are ``insert or ignore`` of rows as tuples in the tables' column order; each call is
atomic (a savepoint inside the caller's transaction, if any).  "Which of these keys are
stored" is answered for the keys asked about, by primary-key lookups (or by reading a
component's rows whole where they are few times as many), so it costs as much as the stage's
work, not as much as the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from .item_records import (
    Inclusion,
    LabelledItem,
    StoredLabel,
    StoredPrompt,
    StoredResponse,
)
from .json_columns import dumps, json_object
from .pair_records import StoredPair
from .records import BENCHMARK_COLUMNS, BenchmarkRow, ComponentRow, benchmark_columns, benchmark_row
from .tables import RANGE_READ, Table, chunks, marks

#: a benchmark's responses (selection key, policy key, N), by selection position then sample
#: index
_IN_BENCHMARK_ORDER = """from selections s join responses r on r.prompt_id = s.prompt_id
   where s.selection_key = ? and r.policy_key = ? and r.sample_index < ?
   order by s.position, r.sample_index"""


class Items(Table):
    # -- components ---------------------------------------------------------------------
    def add_component(self, c: ComponentRow) -> None:
        self._insert(
            "insert or ignore into components (key, kind, name, version, options, "
            "simulated) values (?, ?, ?, ?, ?, ?)",
            [(c.key, c.kind, c.name, c.version, dumps(c.options), int(c.simulated))],
        )

    def components(self, keys: Sequence[str]) -> list[ComponentRow]:
        return self._components(f"key in ({marks(keys)})", list(keys))

    def components_named(self, kind: str, name: str) -> list[ComponentRow]:
        """Every stored component of ``kind`` called ``name``."""
        return self._components("kind = ? and name = ?", [kind, name])

    def _components(self, where: str, params: list) -> list[ComponentRow]:
        rows = self.store.execute(
            "select key, kind, name, version, options, simulated from components where " + where,
            params,
        ).fetchall()
        parse = partial(json_object, path=self.store.path, field="components.options")
        return [
            ComponentRow(key, kind, name, version, parse(options), bool(simulated))
            for key, kind, name, version, options, simulated in rows
        ]

    # -- prompts and selections -----------------------------------------------------------
    def add_prompts(self, rows: Iterable[StoredPrompt]) -> None:
        self._insert(
            "insert or ignore into prompts (id, text, meta) values (?, ?, ?)",
            ((p.id, p.text, dumps(p.meta)) for p in rows),
        )

    def prompts(self, ids: Sequence[str]) -> dict[str, StoredPrompt]:
        """id → text and meta of those of ``ids`` stored."""
        found = {}
        for chunk in chunks(list(ids)):
            for pid, text, meta in self.store.execute(
                f"select id, text, meta from prompts where id in ({marks(chunk)})", list(chunk)
            ):
                meta = json_object(meta, self.store.path, "prompts.meta")
                found[pid] = StoredPrompt(pid, text, meta)
        return found

    def add_selection(self, selection_key: str, prompt_ids: Sequence[str]) -> None:
        self._insert(
            "insert or ignore into selections (selection_key, position, prompt_id) "
            "values (?, ?, ?)",
            ((selection_key, i, pid) for i, pid in enumerate(prompt_ids)),
        )

    def selection(self, selection_key: str) -> list[str]:
        """The prompt ids of a stored selection, in order (empty when not stored)."""
        return [
            row[0]
            for row in self.store.execute(
                "select prompt_id from selections where selection_key = ? order by position",
                [selection_key],
            )
        ]

    # -- responses ----------------------------------------------------------------------
    def add_responses(
        self, rows: Iterable[StoredResponse], *, read_back: bool = False
    ) -> list[StoredResponse]:
        """Store the responses; with ``read_back``, return them as the store reads them back
        (their meta parsed from what it wrote), so a stage can keep them without a read."""
        written = [(*r[:5], dumps(r.meta)) for r in rows]
        self._insert(
            "insert or ignore into responses (id, prompt_id, policy_key, sample_index, "
            "text, meta) values (?, ?, ?, ?, ?, ?)",
            written,
        )
        return [self._response_record(row) for row in written] if read_back else []

    def stored_responses(self, ids: Sequence[str]) -> set[str]:
        return self._stored("select id from responses where id in", [], ids, "responses")

    def responses(self, ids: Sequence[str]) -> list[StoredResponse]:
        """The stored rows of ``ids`` (in no particular order)."""
        rows: list[StoredResponse] = []
        for chunk in chunks(list(ids)):
            rows += map(
                self._response_record,
                self.store.execute(
                    f"select id, prompt_id, policy_key, sample_index, text, meta from responses "
                    f"where id in ({marks(chunk)})",
                    list(chunk),
                ),
            )
        return rows

    def _response_record(self, row: tuple) -> StoredResponse:
        """A response row as the store reads it back (its meta parsed)."""
        meta = json_object(row[5], self.store.path, "responses.meta")
        return StoredResponse._make((*row[:5], meta))

    def has_responses(self, policy_key: str) -> bool:
        """Whether the policy wrote any stored response."""
        return self._any("responses", "policy_key = ?", policy_key)

    # -- oracle labels --------------------------------------------------------------------
    def add_labels(self, rows: Iterable[StoredLabel]) -> None:
        self._insert(
            "insert or ignore into oracle_labels (response_id, oracle_key, score, "
            "samples, cost_usd, prompt_tokens, completion_tokens) "
            "values (?, ?, ?, ?, ?, ?, ?)",
            ((*r[:3], dumps(list(r.samples)), *r[4:]) for r in rows),
        )

    def labelled(self, oracle_key: str, response_ids: Sequence[str]) -> set[str]:
        return self._stored_by("oracle_labels", "oracle_key", oracle_key, response_ids)

    def label_scores(self, oracle_key: str, response_ids: Sequence[str]) -> dict[str, float]:
        """The stored scores of those of ``response_ids`` the oracle labelled."""
        return self._values("oracle_labels", "oracle_key", oracle_key, response_ids)

    def has_labels(self, oracle_key: str) -> bool:
        return self._any("oracle_labels", "oracle_key = ?", oracle_key)

    # -- RM scores ------------------------------------------------------------------------
    def add_scores(self, rm_key: str, scores: Mapping[str, float]) -> None:
        """``scores``: response id → score, as :meth:`scores` reads them back."""
        self._insert(
            "insert or ignore into rm_scores (rm_key, response_id, score) values (?, ?, ?)",
            ((rm_key, rid, score) for rid, score in scores.items()),
        )

    def scored(self, rm_key: str, response_ids: Sequence[str]) -> set[str]:
        return self._stored_by("rm_scores", "rm_key", rm_key, response_ids)

    def has_scores(self, rm_key: str) -> bool:
        return self._any("rm_scores", "rm_key = ?", rm_key)

    def scores(self, rm_key: str, response_ids: Sequence[str] | None = None) -> dict[str, float]:
        """Every stored score of an RM (or those of ``response_ids`` at least), by response id."""
        return self._values("rm_scores", "rm_key", rm_key, response_ids)

    def _values(
        self, table: str, column: str, key: str, response_ids: Sequence[str] | None
    ) -> dict[str, float]:
        """The ``score`` of each row of the component ``key`` (every one, or those of
        ``response_ids`` at least: read by chunks where it holds many more, as ``_stored_by``
        does), by response id."""
        every = f"select response_id, score from {table} where {column} = ?"
        if response_ids is not None:
            unique = list(dict.fromkeys(response_ids))
            (held,) = self.store.execute(
                f"select count(*) from {table} where {column} = ?", [key]
            ).fetchone()
            if held > RANGE_READ * len(unique):
                found: dict[str, float] = {}
                for chunk in chunks(unique):
                    found.update(
                        self.store.execute(
                            f"{every} and response_id in ({marks(chunk)})", [key, *chunk]
                        ).fetchall()
                    )
                return found
        return dict(self.store.execute(every, [key]).fetchall())

    # -- benchmarks -----------------------------------------------------------------------
    def add_benchmark(self, benchmark: BenchmarkRow) -> None:
        self._insert(
            f"insert or ignore into benchmarks ({', '.join(BENCHMARK_COLUMNS)}) "
            f"values ({marks(BENCHMARK_COLUMNS)})",
            [benchmark_columns(benchmark)],
        )

    def add_inclusion(self, benchmark_id: str, inclusion: Mapping[str, Inclusion]) -> None:
        """Response id → its inclusion in a budgeted benchmark's design (as read back)."""
        self._insert(
            "insert or ignore into inclusion (benchmark_id, response_id, probability, drawn) "
            "values (?, ?, ?, ?)",
            ((benchmark_id, rid, i.probability, int(i.drawn)) for rid, i in inclusion.items()),
        )

    def inclusion(self, benchmark_id: str) -> dict[str, Inclusion]:
        """Response id → its inclusion in the benchmark's label design."""
        rows = self.store.execute(
            "select response_id, probability, drawn from inclusion where benchmark_id = ?",
            [benchmark_id],
        )
        return {rid: Inclusion(probability, bool(drawn)) for rid, probability, drawn in rows}

    def benchmark(self, benchmark_id: str) -> BenchmarkRow | None:
        cursor = self.store.execute(
            f"select {', '.join(BENCHMARK_COLUMNS)} from benchmarks where id = ?", [benchmark_id]
        )
        row = cursor.fetchone()
        if row is None:
            return None
        return benchmark_row(dict(zip(BENCHMARK_COLUMNS, row, strict=True)), self.store.path)

    def benchmark_responses(
        self, selection_key: str, policy_key: str, per_prompt: int
    ) -> list[StoredResponse]:
        """A benchmark's stored responses, by selection position then sample index."""
        rows = self.store.execute(
            "select r.id, r.prompt_id, r.policy_key, r.sample_index, r.text, r.meta "
            + _IN_BENCHMARK_ORDER,
            [selection_key, policy_key, per_prompt],
        ).fetchall()
        return [self._response_record(row) for row in rows]

    def benchmark_response_ids(
        self, selection_key: str, policy_key: str, per_prompt: int
    ) -> list[str]:
        """The ids of :meth:`benchmark_responses`, in the same order, without their texts."""
        rows = self.store.execute(
            "select r.id " + _IN_BENCHMARK_ORDER, [selection_key, policy_key, per_prompt]
        ).fetchall()
        return [row[0] for row in rows]

    def benchmark_labels(self, benchmark: BenchmarkRow) -> list[LabelledItem]:
        """A benchmark's labelled responses, by selection position then sample index: under a
        label design those its design drew (a label stored for another benchmark is not this
        one's)."""
        path = self.store.path
        return [
            LabelledItem(pid, rid, score, json_object(meta, path, "responses.meta"))
            for pid, rid, score, meta in self._labelled(benchmark, "r.meta")
        ]

    def benchmark_oracle_scores(self, benchmark: BenchmarkRow) -> dict[str, dict[str, float]]:
        """Prompt id → response id → oracle score of :meth:`benchmark_labels`, in benchmark
        order, without the responses' metadata: the labels read as the oracle's range, not
        looked up response by response (a third of the time), where no design draws them."""
        if benchmark.design is not None:
            rows = self._labelled(benchmark)
        else:
            ids = self.store.execute(
                "select r.prompt_id, r.id " + _IN_BENCHMARK_ORDER,
                [benchmark.selection_key, benchmark.policy_key, benchmark.per_prompt],
            ).fetchall()
            labels = self.label_scores(benchmark.oracle_key, [rid for _, rid in ids])
            rows = [(pid, rid, labels[rid]) for pid, rid in ids if rid in labels]
        by_prompt: dict[str, dict[str, float]] = {}
        for pid, rid, score in rows:
            by_prompt.setdefault(pid, {})[rid] = score
        return by_prompt

    def _labelled(self, benchmark: BenchmarkRow, *columns: str) -> list[tuple]:
        drawn = (
            "join inclusion i on i.benchmark_id = ? and i.response_id = r.id and i.drawn = 1"
            if benchmark.design is not None
            else ""
        )
        return self.store.execute(
            f"""select r.prompt_id, r.id, l.score{"".join(", " + c for c in columns)}
               from selections s join responses r on r.prompt_id = s.prompt_id
               join oracle_labels l on l.oracle_key = ? and l.response_id = r.id
               {drawn}
               where s.selection_key = ? and r.policy_key = ? and r.sample_index < ?
               order by s.position, r.sample_index""",
            [
                benchmark.oracle_key,
                *([benchmark.id] if benchmark.design is not None else []),
                benchmark.selection_key,
                benchmark.policy_key,
                benchmark.per_prompt,
            ],
        ).fetchall()

    # -- preference pairs -----------------------------------------------------------------
    def add_pairs(self, rows: Iterable[StoredPair]) -> None:
        self._insert(
            "insert or ignore into pairs (id, prompt_id, chosen_id, rejected_id, "
            "subset, meta, shift_target, shift_level, perturber_key, original_pair_id) "
            "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((*p[:5], dumps(p.meta), *p[6:10]) for p in rows),
        )

    def stored_pairs(self, ids: Sequence[str]) -> set[str]:
        return self._stored("select id from pairs where id in", [], ids, "pairs")

    def add_pair_set(self, key: str, pairs: Sequence[StoredPair]) -> None:
        """Store a pair set: its pairs in order, each with what the source said of it there."""
        self._insert(
            "insert or ignore into pair_sets (pair_set_key, position, pair_id, meta) "
            "values (?, ?, ?, ?)",
            ((key, i, p.pair_id, dumps(p.meta)) for i, p in enumerate(pairs)),
        )

    def lacks_pair_set_meta(self, key: str) -> bool:
        """Whether a stored pair set has positions without their own meta (stored before
        schema version 10)."""
        return self._any("pair_sets", "pair_set_key = ? and meta is null", key)

    def fill_pair_set_meta(self, key: str, metas: Sequence[dict[str, Any]]) -> None:
        """Give the positions of a stored pair set that lack it their meta."""
        self._insert(
            "update pair_sets set meta = ? where pair_set_key = ? and position = ? "
            "and meta is null",
            ((dumps(meta), key, i) for i, meta in enumerate(metas)),
        )

    def pair_set(self, key: str) -> list[str]:
        """The pair ids of a stored pair set, in order (empty when not stored)."""
        return [
            row[0]
            for row in self.store.execute(
                "select pair_id from pair_sets where pair_set_key = ? order by position", [key]
            )
        ]
