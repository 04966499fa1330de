"""Read-only queries behind ``rmaudit tui`` and ``rmaudit report`` (no UI toolkit here).

Everything goes through indexed lookups: a run's metrics and curves by ``run_id``, a
prompt's responses by ``(policy_key, prompt_id)``, a response's score and label by their
primary keys.  The one scan — an RM's scores over the whole benchmark, for the failure
table — reads each score once and aggregates in numpy.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from rmaudit.results import Column, RunSummary
from rmaudit.store import Store
from rmaudit.vocabulary import RETA_PREFIX

#: η used to mark an RM's top set when the run stored no RETA scalar to take it from.
DEFAULT_ETA = 0.25
#: how plots and tables name the results of a metric across all RMs (``scope = "run"``)
ACROSS_RMS = "across RMs"


def top_eta(store: Store, run_id: str) -> float:
    """η of the run's first RETA scalar (what "the RM's top-η set" refers to)."""
    for (params,) in store.db.execute(
            "select params from metric_results where run_id = ? and key like 'reta@%' "
            "order by rowid limit 1", [run_id]):
        eta = json.loads(params or "{}").get("eta")
        if isinstance(eta, (int, float)) and 0 < eta < 1:
            return float(eta)
    return DEFAULT_ETA


def per_prompt_columns(store: Store, summary: RunSummary) -> list[Column]:
    """The scalar metrics the run stored per prompt, RETA first (they rank failures)."""
    stored = {row[0] for row in store.db.execute(
        "select distinct key from per_prompt_results where run_id = ?", [summary.run["id"]])}
    columns = [c for c in summary.columns if c.key in stored]
    return sorted(columns, key=lambda c: not c.key.startswith(RETA_PREFIX))


@dataclass(frozen=True)
class PromptFailure:
    """How one RM's top picks do on one prompt.

    ``gap`` is the oracle's best score among the prompt's responses minus the oracle score
    of the RM's favourite (averaged over the RM's tied favourites, as the tie is broken
    at random): 0 when the RM picks the oracle's best, larger the worse its pick.
    """

    position: int  # the prompt's place in the benchmark
    prompt_id: str
    text: str
    topic: str
    metrics: dict[str, float]  # per-prompt value by metric key
    pick_oracle: float
    best_oracle: float

    @property
    def gap(self) -> float:
        return self.best_oracle - self.pick_oracle


def prompt_failures(store: Store, summary: RunSummary, rm_key: str) -> list[PromptFailure]:
    """One row per benchmark prompt for ``rm_key``, in benchmark order."""
    db, bench, run_id = store.db, summary.benchmark, summary.run["id"]
    prompts = db.execute(
        """select s.position, p.id, p.text, p.meta from selections s join prompts p on p.id = s.prompt_id
           where s.selection_key = ? order by s.position""", [bench["selection_key"]]).fetchall()
    metrics: dict[str, dict[str, float]] = {}
    for key, prompt_id, value in db.execute(
            "select key, prompt_id, value from per_prompt_results where run_id = ? and rm_key = ?",
            [run_id, rm_key]):
        metrics.setdefault(prompt_id, {})[key] = value
    pick, best = _picks(store, bench, rm_key)
    rows = []
    for position, prompt_id, text, meta in prompts:
        if prompt_id not in best:
            continue  # not scored by this RM (an interrupted run): nothing to show
        topic = json.loads(meta or "{}").get("topic", "")
        rows.append(PromptFailure(position, prompt_id, text, str(topic), metrics.get(prompt_id, {}),
                                  pick[prompt_id], best[prompt_id]))
    return rows


def _picks(store: Store, bench: dict, rm_key: str) -> tuple[dict[str, float], dict[str, float]]:
    """Per prompt: the oracle score of the RM's favourite (tie-averaged) and the oracle's best."""
    # "prompt_id in (subquery)" makes SQLite walk the responses index prompt by prompt; a
    # join on selections instead rescans the selection for every response (quadratic).
    rows = store.db.execute(
        """select r.prompt_id, y.score, j.score from responses r
           join rm_scores y on y.response_id = r.id and y.rm_key = ?
           join oracle_labels j on j.response_id = r.id and j.oracle_key = ?
           where r.policy_key = ? and r.sample_index < ?
             and r.prompt_id in (select prompt_id from selections where selection_key = ?)""",
        [rm_key, bench["oracle_key"], bench["policy_key"], bench["per_prompt"],
         bench["selection_key"]]).fetchall()
    if not rows:
        return {}, {}
    names, prompt = np.unique([row[0] for row in rows], return_inverse=True)
    score = np.fromiter((row[1] for row in rows), float, len(rows))
    oracle = np.fromiter((row[2] for row in rows), float, len(rows))
    order = np.lexsort((-score, prompt))  # by prompt, the RM's favourite first
    prompt, score, oracle = prompt[order], score[order], oracle[order]
    starts = np.flatnonzero(np.r_[True, prompt[1:] != prompt[:-1]])
    best = np.maximum.reduceat(oracle, starts)
    tied = score == np.repeat(score[starts], np.diff(np.r_[starts, len(score)]))
    pick = np.add.reduceat(np.where(tied, oracle, 0.0), starts) / np.add.reduceat(tied, starts)
    ids = names[prompt[starts]].tolist()
    return dict(zip(ids, pick.tolist())), dict(zip(ids, best.tolist()))


@dataclass(frozen=True)
class ResponseRow:
    """One response to a prompt: its oracle score and rank, and each requested RM's score and rank."""

    id: str
    sample_index: int
    text: str
    oracle: float
    oracle_rank: int  # 1 = the oracle's best (ties share the best rank)
    scores: dict[str, float]  # by rm_key
    ranks: dict[str, int]  # by rm_key, 1 = the RM's favourite

    @property
    def words(self) -> int:
        return len(self.text.split())


@dataclass(frozen=True)
class PromptDetail:
    prompt_id: str
    text: str
    meta: dict
    responses: list[ResponseRow] = field(default_factory=list)

    def top_set(self, rm_key: str, eta: float) -> set[str]:
        """Ids of the RM's top ⌊η·N⌋ responses (at least one): the set RETA(η) averages."""
        size = max(1, math.floor(eta * len(self.responses)))
        return {r.id for r in self.responses if r.ranks.get(rm_key, size + 1) <= size}


def prompt_detail(store: Store, bench: dict, prompt_id: str, rm_keys: list[str]) -> PromptDetail:
    """A prompt and its responses with the oracle's and each RM's scores and ranks."""
    text, meta = store.db.execute("select text, meta from prompts where id = ?", [prompt_id]).fetchone()
    rows = store.db.execute(
        """select r.id, r.sample_index, r.text, j.score from responses r
           join oracle_labels j on j.response_id = r.id and j.oracle_key = ?
           where r.policy_key = ? and r.prompt_id = ? and r.sample_index < ?
           order by r.sample_index""",
        [bench["oracle_key"], bench["policy_key"], prompt_id, bench["per_prompt"]]).fetchall()
    ids = [row[0] for row in rows]
    oracle_rank = _ranks([row[3] for row in rows])
    scores = {rm_key: response_scores(store, rm_key, ids) for rm_key in rm_keys}
    ranks = {k: dict(zip(ids, _ranks([s.get(i, -math.inf) for i in ids]))) for k, s in scores.items()}
    responses = [ResponseRow(rid, index, body, oracle, rank,
                             {k: s[rid] for k, s in scores.items() if rid in s},
                             {k: r[rid] for k, r in ranks.items()})
                 for (rid, index, body, oracle), rank in zip(rows, oracle_rank)]
    return PromptDetail(prompt_id, text, json.loads(meta or "{}"), responses)


def _ranks(values: list[float]) -> list[int]:
    """1-based descending ranks; tied values share the best of their ranks."""
    descending = -np.asarray(values, dtype=float)
    return (np.searchsorted(np.sort(descending), descending, side="left") + 1).tolist()


# -- preference pairs (the pair failures of rmaudit.pair_failures) ---------------------------

def pair_scores(store: Store, pair_set_key: str, rm_key: str) -> list[tuple]:
    """Every pair of a pair set that ``rm_key`` scored, in order: (position, pair id, subset,
    meta, prompt id, chosen id, rejected id, prompt, chosen, rejected, chosen score, rejected
    score)."""
    return store.db.execute(
        """select s.position, p.id, p.subset, p.meta, p.prompt_id, p.chosen_id, p.rejected_id,
                  q.text, c.text, r.text, sc.score, sr.score
           from pair_sets s join pairs p on p.id = s.pair_id
           join prompts q on q.id = p.prompt_id
           join responses c on c.id = p.chosen_id join responses r on r.id = p.rejected_id
           join rm_scores sc on sc.response_id = p.chosen_id and sc.rm_key = ?
           join rm_scores sr on sr.response_id = p.rejected_id and sr.rm_key = ?
           where s.pair_set_key = ? order by s.position""",
        [rm_key, rm_key, pair_set_key]).fetchall()


def shifted_pair_scores(store: Store, pair_set_key: str, rm_key: str) -> list[tuple]:
    """Every stored shifted copy of the set's pairs that ``rm_key`` scored: (pair id,
    original pair id, shift target, shift level, chosen score, rejected score)."""
    return store.db.execute(
        """select p.id, p.original_pair_id, p.shift_target, p.shift_level, sc.score, sr.score
           from pairs p
           join rm_scores sc on sc.response_id = p.chosen_id and sc.rm_key = ?
           join rm_scores sr on sr.response_id = p.rejected_id and sr.rm_key = ?
           where p.original_pair_id in (select pair_id from pair_sets where pair_set_key = ?)""",
        [rm_key, rm_key, pair_set_key]).fetchall()


def stored_perturbers(store: Store, name: str) -> list[tuple[str, dict]]:
    """(key, options) of every stored shift perturber called ``name`` (one per level p)."""
    return [(key, json.loads(options or "{}")) for key, options in store.db.execute(
        "select key, options from components where kind = 'shift_perturber' and name = ?", [name])]


def pair_texts(store: Store, pair_id: str) -> tuple[str, str, str, str, str]:
    """(prompt, chosen, rejected, chosen id, rejected id) of a stored pair."""
    return store.db.execute(
        """select q.text, c.text, r.text, p.chosen_id, p.rejected_id from pairs p
           join prompts q on q.id = p.prompt_id join responses c on c.id = p.chosen_id
           join responses r on r.id = p.rejected_id where p.id = ?""", [pair_id]).fetchone()


def response_scores(store: Store, rm_key: str, response_ids: list[str]) -> dict[str, float]:
    """``rm_key``'s stored score of each of ``response_ids`` it scored."""
    if not response_ids:
        return {}
    return dict(store.db.execute(
        f"""select response_id, score from rm_scores
            where rm_key = ? and response_id in ({",".join("?" * len(response_ids))})""",
        [rm_key, *response_ids]).fetchall())
