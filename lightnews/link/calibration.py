"""Calibration: the fitted model that turns a match's features into a probability.

A link's confidence must mean what it says: of the links asserted at 0.9,
nine in ten are right. Hand-set bonuses and penalties cannot promise that,
so title and "Surname: short title" links are decided by logistic models
fitted (``bench/fit_linker.py``) on generated mentions of real papers and on
real text that names no paper (abstracts, lab blog paragraphs, posts), and
checked on a held-out split (``bench/linking_eval.py``).

The fitted coefficients ship as plain numbers in ``linker_weights.json``
beside this module, so deciding a link needs no numerical library: a dot
product and a logistic function.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = [
    "ANNOUNCEMENT_FEATURES",
    "MEANING_FEATURES",
    "REFERENCE_FEATURES",
    "TITLE_FEATURES",
    "WEIGHTS",
    "WORDS_FEATURES",
    "Model",
    "feature_value",
    "load_models",
    "model",
]

WEIGHTS = Path(__file__).with_name("linker_weights.json")

#: What a title found in text is judged by (see ``title_features.describe_match``).
TITLE_FEATURES = (
    "recall",  # share of the cited form's information found in the text
    "full_recall",  # share of the whole title's information found
    "precision",  # share of the matched stretch's information the title explains
    "information",  # nats found, over the library's bar (capped)
    "coverage",  # share of the title's telling words present
    "order",  # share of matched words in the title's order
    "density",  # matched words over the stretch's length
    "stray",  # telling words right around the stretch that the title lacks
    "typo",  # share of the credit from misspelt words
    "exact",  # the whole title, word for word
    "partial",  # cited without its subtitle, or by it alone
    "coined",  # one rare coined name heads the title ("FastVLM")
    "short",  # the title has at most two telling words
    "margin",  # over the next paper competing for the same words
    "surname",  # an author's surname (any position, typos tolerated) named nearby
    "late",  # the paper appeared well after the text was written
    "whole",  # the text is a title by itself (a heading, a link's words)
    "unique",  # a word found that only this paper's title has ("AdEMAMix")
    "named",  # the text writes the rare name the title coins ("FastVLM", "VGGT")
    "own_line",  # the stretch is a line of its own
    "quoted",  # in quotes or emphasis
    "title_case",  # share of its words capitalised
    "after_colon",  # right after a colon ("Paper of the day: ...")
    "prose",  # share of ordinary lower-case words right around it
)

#: What a "Surname: short title" reference is judged by (see ``titles.score_reference``).
REFERENCE_FEATURES = (
    "share",  # share of the short title's information the paper's title holds
    "information",  # nats found (capped)
    "title_share",  # share of the paper's title the short form covers
    "order",  # short title words in the title's order
    "surname_first",  # the surname is the first author's
    "surname_other",  # the surname is another author's (often the senior one)
    "surname_typo",  # a surname one or two letters off
    "margin",  # over the next paper
    "late",  # the paper appeared well after the text was written
    "short",  # the short title has at most two telling words
)

#: What a scholar's post is judged by against one of their recent papers (see
#: ``announcements.judge_announcement``; fitted by ``bench/announce_eval.py --fit``).
ANNOUNCEMENT_FEATURES = (
    "words",  # share of the post's information the paper's title and abstract hold
    "information",  # nats the post shares with the paper, over 20 (capped at 1)
    "title_words",  # share of the title's information the post writes
    "meaning",  # cosine of the post and the paper (title and abstract) in the encoder
    "words_margin",  # words over the scholar's next recent paper
    "meaning_margin",  # meaning over the scholar's next recent paper
    "announces",  # "new paper", "preprint", "accepted at", "we show"
    "months",  # calendar months between the paper's first version and the post (0-3)
    "post_information",  # nats the post's own words carry, over 40 (capped at 1)
    "named",  # the post names a work by a title of its own (quoted, or Title Case after "paper")
    "named_fit",  # share of that name's information the paper's title holds
    "information_margin",  # nats shared over the next recent paper's, over 20 (-1 to 1)
    "unexplained",  # nats of the post's own words the paper does not hold, over 20 (capped)
    "phrases",  # nats of the post's word pairs the paper writes side by side, over 20 (capped)
    "phrases_margin",  # phrases over the scholar's next recent paper
    "rarest_shared",  # the rarest word the post and the paper share, its nats over 10 (capped)
    "rarest_missing",  # the rarest word of the post the paper lacks, its nats over 10 (capped)
)
#: The words evidence whose pairwise products both models weigh as well: "much of the
#: post, and its phrases" must count for more than either alone (chosen by
#: cross-validation over dev accounts, as were the products with meaning below).
PAIRED_WORDS = (
    "words",
    "information",
    "title_words",
    "words_margin",
    "information_margin",
    "phrases",
    "phrases_margin",
    "unexplained",
    "post_information",
    "rarest_shared",
    "rarest_missing",
)
#: ... and with the encoder, meaning and its margin among them.
PAIRED_MEANING = (*PAIRED_WORDS, "meaning", "meaning_margin")
#: What the model with the encoder weighs: every feature and the products of
#: :data:`PAIRED_MEANING` ("meaning*words").
MEANING_FEATURES = ANNOUNCEMENT_FEATURES + tuple(
    f"{a}*{b}" for a, b in itertools.combinations(PAIRED_MEANING, 2)
)
#: The same without the encoder (a library without the ``semantic`` extra, or on another
#: encoder), with the products of :data:`PAIRED_WORDS` ("words*phrases").
WORDS_FEATURES = tuple(f for f in ANNOUNCEMENT_FEATURES if not f.startswith("meaning")) + tuple(
    f"{a}*{b}" for a, b in itertools.combinations(PAIRED_WORDS, 2)
)
#: Every route's features, as the weights file must hold them.
ROUTES = {
    "title": TITLE_FEATURES,
    "reference": REFERENCE_FEATURES,
    "announcement": MEANING_FEATURES,
    "announcement-words": WORDS_FEATURES,
}


def feature_value(values: Mapping[str, float], name: str) -> float:
    """A feature's value: a named one as given, a product ("words*phrases") of its factors."""
    if "*" in name:
        first, second = name.split("*", 1)
        return values[first] * values[second]
    return values[name]


@dataclass(frozen=True, slots=True)
class Model:
    """A logistic model over named features: ``sigmoid(intercept + coef . x)``.

    A feature named ``a*b`` is the product of features ``a`` and ``b``.
    """

    features: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float

    def probability(self, values: Mapping[str, float]) -> float:
        z = self.intercept + sum(
            c * feature_value(values, f) for f, c in zip(self.features, self.coef, strict=True)
        )
        if z < -40:
            return 0.0
        return 1.0 / (1.0 + math.exp(-z))


def load_models(path: Path = WEIGHTS) -> dict[str, Model]:
    """The models in a weights file, checked against the features the linker computes."""
    document = json.loads(path.read_text(encoding="utf-8"))
    models: dict[str, Model] = {}
    for route, names in ROUTES.items():
        entry = document.get(route)
        if entry is None:
            continue  # not fitted yet: asking for it raises KeyError in ``model``
        features = tuple(str(f) for f in entry["features"])
        if features != names:
            raise ValueError(
                f"{path.name}: the {route} model was fitted on other features "
                f"({', '.join(features)}); refit it with bench/fit_linker.py"
            )
        models[route] = Model(
            features, tuple(float(c) for c in entry["coef"]), float(entry["intercept"])
        )
    return models


@cache
def model(route: str) -> Model:
    """The shipped model for ``route`` (``title``, ``reference``, ``announcement``, ...)."""
    return load_models()[route]
