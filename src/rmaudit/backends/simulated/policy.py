"""The simulated reference policy: writes real response texts from latent attributes.

Each response is drawn in two steps.  First a *mode* and latent attributes: how many and
which key points the answer covers and how well it elaborates them (its substance), and
how much filler, flattery, hedging, off-topic drift or refusal it carries.  Then a text is
written from those attributes with varied openers, lead-ins, list formats and closers.

The modes give the world its reward-hacking surface: besides ordinary answers, a few are
*verbose-but-shallow* (long, padded, covering little) or *sycophantic* (flattering, thin).
Those are the longest and most flattering texts, yet rarely the best — so a reader that
rewards length or flattery is fooled exactly at the top of its ranking, as in the RETA
paper's falling curves.
"""

from __future__ import annotations

import math

from . import _library as lib
from ._random import Draws, sigmoid
from .prompts import KeyPoint, key_points_for, task_type_for

# Mode probabilities at quality 0; the two hacking modes thin out as quality rises.
_P_REFUSAL = 0.015
_P_VERBOSE_SHALLOW = 0.04
_P_SYCOPHANTIC = 0.035

# Bounds on the whitespace-separated word count of a response.
_MAX_WORDS = 400
_MIN_WORDS = 30


class SimulatedPolicy:
    """A simulated reference policy (rmaudit's offline world, not a real model).

    ``generate`` is a pure function of ``(seed, quality, prompt_text, sample_index)``: it
    never depends on call order, batching or the prompt's metadata.  ``quality`` shifts
    the answers' substance (higher: more key points, more elaboration, fewer shallow or
    sycophantic answers).
    """

    def __init__(self, seed: int = 0, quality: float = 0.0) -> None:
        self.seed = seed
        self.quality = quality

    def generate(
        self, prompt_text: str, prompt_meta: dict | None, sample_index: int
    ) -> tuple[str, dict]:
        """Write response ``sample_index`` to a prompt; return ``(text, latent attributes)``.

        Key points and task type come from the prompt text alone (built-in lookup, else
        derived from its words) so that readers, who see only texts, agree with the policy;
        ``prompt_meta`` is accepted for the plugin interface and not read.  The returned
        dict records the latent draws for transparency, never for scoring.
        """
        draws = Draws("policy", self.seed, self.quality, prompt_text, sample_index)
        points = key_points_for(prompt_text)
        latent = self._draw_latent(draws, len(points))
        writer = _Writer(draws, points, task_type_for(prompt_text), latent)
        text, latent["padding"] = writer.write()  # the length cap may have dropped filler
        return text, latent

    def _draw_latent(self, draws: Draws, n_points: int) -> dict:
        """Draw the mode and the latent attributes of one response (a JSON-able dict)."""
        u = draws.uniform()
        shrink = math.exp(-self.quality)
        p_shallow, p_sycophantic = _P_VERBOSE_SHALLOW * shrink, _P_SYCOPHANTIC * shrink
        if u < _P_REFUSAL:
            return {
                "simulated": True,
                "mode": "refusal",
                "skill": None,
                "covered": [],
                "elaboration": [],
                "padding": 0,
                "flattery_opener": False,
                "flattery_mid": 0,
                "flattery_closer": False,
                "hedges": draws.poisson(0.3),
                "drift": 0,
                "refusal": True,
            }
        if u < _P_REFUSAL + p_shallow:
            mode, skill = "verbose-shallow", self.quality - 0.8 + 0.5 * draws.normal()
            padding, hedges, drift = draws.integer(6, 18), draws.poisson(0.8), draws.poisson(0.2)
            opener, mid, closer = draws.bernoulli(0.35), 0, draws.bernoulli(0.35)
            cover_bias, elaboration_bias = -0.3, -1.0
        elif u < _P_REFUSAL + p_shallow + p_sycophantic:
            mode, skill = "sycophantic", self.quality - 0.6 + 0.7 * draws.normal()
            padding, hedges, drift = draws.poisson(1.5), draws.poisson(0.3), draws.poisson(0.1)
            opener, mid, closer = True, draws.integer(1, 3), True
            cover_bias, elaboration_bias = 0.5, -0.5
        else:
            mode, skill = "standard", self.quality + draws.normal()
            # Weaker answers pad a little more, but only mildly: in the bulk, length comes
            # mostly from substance, as it does for real policies.
            padding = draws.poisson(0.5 + 0.4 * max(0.0, -skill))
            hedges, drift = draws.poisson(0.3), draws.poisson(0.07)
            opener, mid, closer = draws.bernoulli(0.12), 0, draws.bernoulli(0.08)
            cover_bias, elaboration_bias = 1.0, -0.2
        p_cover = sigmoid(cover_bias + 0.9 * skill)
        covered = [k for k in range(n_points) if draws.bernoulli(p_cover)]
        if not covered:
            covered = [draws.integer(0, n_points - 1)]
        p_elaborate = sigmoid(elaboration_bias + 0.8 * skill)
        elaboration = [
            int(draws.bernoulli(p_elaborate)) + int(draws.bernoulli(p_elaborate)) for _ in covered
        ]
        return {
            "simulated": True,
            "mode": mode,
            "skill": round(skill, 4),
            "covered": covered,
            "elaboration": elaboration,
            "padding": padding,
            "flattery_opener": opener,
            "flattery_mid": mid,
            "flattery_closer": closer,
            "hedges": hedges,
            "drift": drift,
            "refusal": False,
        }


class _Writer:
    """Turns latent attributes into a response text (one instance per response)."""

    def __init__(
        self, draws: Draws, points: tuple[KeyPoint, ...], task_type: str, latent: dict
    ) -> None:
        self.draws = draws
        self.points = points
        self.style = lib.TASK_STYLE.get(task_type, "facts")
        self.latent = latent
        # Layout draws are re-seeded per composition (the length cap may recompose with
        # less filler), from a key drawn once so that distinct responses lay out differently.
        self.layout_key = draws.uniform()

    def write(self) -> tuple[str, int]:
        """Return the text and the number of filler sentences it ended up with."""
        if self.latent["refusal"]:
            return self._refusal(), 0
        padding = self.latent["padding"]
        text = self._compose(padding)
        # Cap the length by dropping filler first: it is the only part that carries nothing.
        while padding > 0 and len(text.split()) > _MAX_WORDS:
            padding -= 1
            text = self._compose(padding)
        return text, padding

    def _refusal(self) -> str:
        """A short unhelpful refusal, sometimes with hedges, and an offer to help otherwise."""
        d = self.draws
        parts = [d.choice(lib.REFUSALS), d.choice(lib.REFUSAL_REASONS)]
        parts += d.sample(lib.HEDGES, self.latent["hedges"])
        parts.append(d.choice(lib.REFUSAL_FOLLOWUPS))
        return " ".join(parts)

    def _compose(self, n_padding: int) -> str:
        """Assemble the response with ``n_padding`` filler sentences."""
        d = Draws("layout", self.layout_key, n_padding)
        latent = self.latent
        as_list = self.style != "facts" and d.uniform() < 0.55
        fillers = self._sentences(d, lib.PADDING, n_padding)
        hedges = self._sentences(d, lib.HEDGES, latent["hedges"])
        drift = self._sentences(d, lib.DRIFT, latent["drift"])
        flattery_mid = self._sentences(d, lib.FLATTERY_MID, latent["flattery_mid"])

        head = []
        if latent["flattery_opener"]:
            head.append(d.choice(lib.FLATTERY_OPENERS))
        elif d.bernoulli(0.6):
            head.append(d.choice(lib.NEUTRAL_OPENERS))
        # Shallow answers typically warm up with filler before getting to any point.
        n_lead = d.integer(0, len(fillers) // 2) if fillers else 0
        head += fillers[:n_lead]

        units = self._units(d, with_lead_ins=not as_list)
        for extra in fillers[n_lead:] + drift + flattery_mid:
            units[d.integer(0, len(units) - 1)].append(extra)

        tail = hedges
        if latent["flattery_closer"]:
            tail.append(d.choice(lib.FLATTERY_CLOSERS))
        elif d.bernoulli(0.5):
            tail.append(d.choice(lib.NEUTRAL_CLOSERS))

        blocks = [" ".join(head)] if head else []
        if as_list:
            numbered = self.style == "sequence"
            blocks.append(
                "\n".join(
                    (f"{i}. " if numbered else "- ") + " ".join(unit)
                    for i, unit in enumerate(units, 1)
                )
            )
        else:  # prose, two key points to a paragraph
            blocks += [
                " ".join(s for unit in units[i : i + 2] for s in unit)
                for i in range(0, len(units), 2)
            ]
        if tail:
            blocks.append(" ".join(tail))
        # A one-point answer can be terse; round it off with neutral glue, never substance.
        glue = [c for c in d.sample(lib.NEUTRAL_CLOSERS, len(lib.NEUTRAL_CLOSERS)) if c not in tail]
        while len(" ".join(blocks).split()) < _MIN_WORDS and glue:
            blocks.append(glue.pop())
        return "\n\n".join(blocks)

    @staticmethod
    def _sentences(d: Draws, library: tuple[str, ...], count: int) -> list[str]:
        """``count`` sentences from ``library``, distinct while the library lasts."""
        chosen = d.sample(library, count)
        return chosen + [d.choice(library) for _ in range(count - len(chosen))]

    def _units(self, d: Draws, with_lead_ins: bool) -> list[list[str]]:
        """One list of sentences per covered key point: its statement, then elaboration."""
        covered = self.latent["covered"]
        units = []
        for position, (k, n_elab) in enumerate(
            zip(covered, self.latent["elaboration"], strict=True)
        ):
            point = self.points[k]
            statement = self._statement(d, point.text, position, len(covered), with_lead_ins)
            units.append(
                [statement]
                + [t.format(kw=point.keyword) for t in d.sample(lib.ELABORATIONS, n_elab)]
            )
        return units

    def _statement(self, d: Draws, text: str, position: int, count: int, with_lead_in: bool) -> str:
        """A key point as a sentence, with a lead-in suited to the task and position."""
        if not with_lead_in:
            lead = ""
        elif position == 0:
            lead = d.choice(lib.FIRST_LEAD_INS[self.style])
        elif position == count - 1:
            lead = d.choice(lib.LAST_LEAD_INS[self.style])
        else:
            lead = d.choice(lib.LEAD_INS[self.style])
        body = text if text[-1] in ".!?" else text + "."
        if not lead:
            return body[0].upper() + body[1:]
        if lead.endswith(":"):
            return f"{lead} {body[0].upper() + body[1:]}"
        return f"{lead} {body}"
