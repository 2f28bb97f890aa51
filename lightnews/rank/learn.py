"""Rank: a personal ranker that learns from what one reader does.

The feed's other signals are the same rules for everyone (who wrote it, who
discusses it, how close it is to a saved paper). This one is learned per
reader, as the recommenders that work best do (Scholar Inbox: a logistic
regression per user on paper embeddings; arxiv-sanity-lite: a linear SVM per
tag on TF-IDF): a logistic regression (or a linear SVM, ``Params.loss``) over
each paper's stored sentence vector joined to its TF-IDF words (the stems of
:func:`paper_terms`, as :func:`lexical.analyze` finds them, the title counted
``Params.title_weight`` times, or pairs of them too, ``Params.ngrams``; IDF
taken from the training papers, which are mostly a random sample of the
library).

What it learns from:

- **saves** (positive), each saved list its own *interest*; saves in no list
  form the interest ``saved``; "more like this" counts as a save;
- **reads** (weak positive, ``read_weight``), each in the interest whose
  saves it is nearest by meaning;
- **"not interested"**, papers by muted scholars and papers with a muted
  keyword (negative, ``negative_weight``);
- **random papers of the library the reader has not touched** (weak
  negatives: most of a library is not what one reader wants).

Separate interests stay separate: one model per interest, each against the
same negatives (never against another interest's saves). Mixed fairly: each
interest's score is taken relative to its own scores on the random papers (a
z-score), so an interest of three saves weighs as much as one of three
hundred, and a paper's score is its best interest's. Each score says which
interest brought it and which paper of that interest is nearest by meaning
(:class:`Because`).

Measured (``bench/feed_eval.py``, docs/benchmarks.md): the settings of
:data:`DEFAULT` were chosen on the development readers only, by
cross-validation over them (``bench/fit_learner.py``; see :class:`Params`).

Needs the ``semantic`` extra (vectors; scikit-learn fits the model):
without it, or without a save, :func:`train_reader_model` returns None and
the feed ranks without this signal. A trained model is kept in the store as
JSON (:func:`model_to_json`), trained off the feed's path: :mod:`.trained`.
"""

from __future__ import annotations

import base64
import json
import math
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from lightnews.embed.lexical import words as stems_of
from lightnews.settings import Settings
from lightnews.store import Store
from lightnews.store.readers import ReaderId

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT",
    "SAVED",
    "Because",
    "Interest",
    "Params",
    "ReaderModel",
    "TrainingSet",
    "WordFeatures",
    "fit_reader_model",
    "model_document",
    "model_from_document",
    "model_from_json",
    "model_to_json",
    "paper_terms",
    "train_reader_model",
]

#: The interest of saves in no list.
SAVED = "saved"
#: Papers' explanations kept with one reader's model (a few feeds' candidates).
MEMO_MOST = 5_000


@dataclass(frozen=True, slots=True)
class Params:
    """The model's knobs.

    The defaults (``DEFAULT``) were chosen on the benchmark's development readers
    alone, never on its test readers: coordinate ascent over these knobs by nDCG +
    AUC on PaperTweet's 117 development readers (351 papers left out), checked by
    5-fold cross-validation over those readers (docs/benchmarks.md, "Learned feed
    ranking")::

        PYTHONPATH=. .venv/bin/python bench/fit_learner.py --most 3

    A second search from these defaults (2026-12-07: word pairs, C 0.1-1, the blend
    0.5-1) chose ``ngrams=2, c=0.1`` on every development reader (85.0 nDCG / 98.2
    AUC against 85.1 / 98.1), but its cross-validated estimate fell below staying
    here (84.8 / 98.1 against 85.1 / 98.1), and pairs cost a training twice the CPU
    and the stored model five times the bytes: the defaults were kept.

    A third search (2026-12-07: the model, the hinge loss at C 0.3 with the blend 0.5
    or a logistic regression at C 10 without it; then the title counted 6, 3 or 1
    times) chose the logistic regression and a title counted 3 times (85.7 / 98.5 on
    every development reader, against 85.1 / 98.0); cross-validated, 85.0 / 98.5
    against 85.1 / 98.0 for staying (nDCG + AUC, the criterion, up by 0.4): taken.

    ``read_weight`` and ``min_df`` were not searched (the benchmark has no reads).
    ``negative_weight`` cannot be chosen on PaperTweet (no explicit negatives):
    it is the smallest of 5, 10, 20 and 40 with which one "not interested" lowers
    similar papers by a tenth of a standard deviation more than others
    (test_learn.py); on CSFCube's development readers it changes AUC explicit by
    0.1 at most (96.5-96.6).
    """

    #: Scale of the sentence vector against the TF-IDF words (both unit length):
    #: 0.5 (the words weigh more) beat 1 and 2, and either alone.
    vector_weight: float = 0.5
    #: Scale of the TF-IDF words (0: the sentence vector alone).
    word_weight: float = 1.0
    #: Inverse regularisation strength of the classifier (10 for the logistic loss,
    #: of 0.3-30; the hinge loss's best was 0.3).
    c: float = 10.0
    #: Random papers of the library taken as weak negatives (2,000 of 500-2,000: a
    #: training reads and analyses each, some 0.5 s of CPU in all at 2,000).
    background: int = 2000
    #: Weight of an explicit negative ("not interested", muted) against a random paper.
    negative_weight: float = 10.0
    #: Weight of a read paper against a saved one.
    read_weight: float = 0.3
    #: Share of closeness to the nearest saved paper blended into an interest's score
    #: (0 of 0-1 for the logistic loss; 0.5 for the hinge loss).
    nearest_share: float = 0.0
    #: Words found in fewer training papers are left out.
    min_df: int = 2
    #: 1: the words are single stems (kept); 2: pairs of adjacent stems too, as
    #: arxiv-sanity-lite's bigrams (a tie on dev at C 0.3: 85.1 / 98.1 both; some 27,000
    #: words against 5,700, a stored model of 1 MB against 0.2 MB).
    ngrams: int = 1
    #: Words found in more than this share of the training papers are left out
    #: (1.0: none, kept over arxiv-sanity-lite's 0.1).
    max_df: float = 1.0
    #: Weigh the classes so that the saves weigh as much as all the negatives (kept).
    balanced: bool = True
    #: ``"logistic"`` (logistic regression, as Scholar Inbox; chosen by the third
    #: search) or ``"hinge"`` (a linear SVM, as arxiv-sanity-lite; the first's choice).
    loss: str = "logistic"
    #: How many times a title's words count in a paper's terms (:func:`paper_terms`):
    #: 3 of 1, 3 and 6 (the library's keyword search counts them ``TITLE_WEIGHT``, 6).
    title_weight: int = 3


DEFAULT = Params()


def paper_terms(
    title: str, abstract: str, ngrams: int | None = None, title_weight: int | None = None
) -> Counter[str]:
    """A paper's terms and their counts, the title's counted ``title_weight`` times: its
    stems (:func:`lexical.analyze`'s) and, for ``ngrams`` 2, each pair of adjacent stems
    (``"a b"``, stop words left out first, as arxiv-sanity-lite's bigrams). By default
    what :data:`DEFAULT` learns from (pairs take memory and time where no model uses
    them: the feed keeps every pool paper's terms)."""
    pairs = (DEFAULT.ngrams if ngrams is None else ngrams) > 1
    weight = DEFAULT.title_weight if title_weight is None else title_weight
    stems = stems_of(abstract)
    counts = Counter(stems)
    if pairs:
        counts.update([f"{a} {b}" for a, b in pairwise(stems)])
    stems = stems_of(title)
    for term in (*stems, *(f"{a} {b}" for a, b in pairwise(stems) if pairs)):
        counts[term] += weight
    return counts


@dataclass(frozen=True, slots=True)
class Interest:
    """One interest of a reader: a saved list's name and its papers (row ids)."""

    name: str
    papers: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TrainingSet:
    """What one reader's model learns from, as paper row ids."""

    interests: tuple[Interest, ...]
    reads: tuple[int, ...] = ()
    negatives: tuple[int, ...] = ()
    background: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Because:
    """Why a paper scored as it did: its best interest and that interest's nearest paper."""

    interest: str
    paper_id: int  # the saved paper of that interest nearest by meaning
    similarity: float  # cosine of the two papers' vectors
    score: float


#: Papers' features as the store keeps them: ``paper ids -> (vectors by id, words by id)``.
FeatureSource = Callable[
    [Sequence[int]], tuple[Mapping[int, "npt.NDArray[np.float32]"], Mapping[int, Counter[str]]]
]


@dataclass(frozen=True, slots=True)
class WordFeatures:
    """TF-IDF over stems: sublinear term frequency times IDF, unit length."""

    vocabulary: Mapping[str, int]
    idf: npt.NDArray[np.float64]

    @classmethod
    def fit(
        cls, documents: Sequence[Counter[str]], min_df: int, max_df: float = 1.0, ngrams: int = 1
    ) -> WordFeatures:
        """Terms of ``documents`` (:func:`paper_terms`) in ``min_df`` of them at least and
        ``max_df`` of them at most; ``ngrams`` 1: single stems, 2: pairs too."""
        import numpy as np

        df: Counter[str] = Counter()
        for counts in documents:
            df.update(counts.keys())
        n = len(documents)
        most = max_df * n
        terms = sorted(
            t for t, k in df.items() if min_df <= k <= most and (ngrams > 1 or " " not in t)
        )
        idf = np.array([math.log((1 + n) / (1 + df[t])) + 1 for t in terms])
        return cls({t: i for i, t in enumerate(terms)}, idf)

    def transform(self, documents: Sequence[Counter[str]]) -> Any:
        """A sparse matrix, one unit-length row per document."""
        import numpy as np
        from scipy import sparse

        column = self.vocabulary.get
        cols: list[int] = []
        counts: list[int] = []
        ends = [0]
        for document in documents:  # the one loop in Python: a dictionary look-up per word
            for term, count in document.items():
                col = column(term)
                if col is not None:
                    cols.append(col)
                    counts.append(count)
            ends.append(len(cols))
        indices = np.array(cols, dtype=np.int64)
        values = (1 + np.log(np.array(counts, dtype=np.float64))) * self.idf[indices]
        starts = np.array(ends, dtype=np.int64)
        squares = np.add.reduceat(np.append(values * values, 0.0), starts[:-1])
        squares[starts[1:] == starts[:-1]] = 0.0  # an empty row's reduceat is its neighbour's
        norms = np.sqrt(squares)
        norms[norms == 0] = 1.0
        values /= np.repeat(norms, np.diff(starts))
        return sparse.csr_matrix(
            (values, indices, starts), shape=(len(documents), len(self.vocabulary))
        )


@dataclass(frozen=True, slots=True)
class _Profile:
    """One interest's fitted model and what its explanations point at."""

    name: str
    coef: npt.NDArray[np.float64]
    intercept: float
    mean: float  # of its scores on the random papers
    std: float
    papers: tuple[int, ...]
    vectors: npt.NDArray[np.float32]  # of ``papers``, one row each
    near_mean: float
    near_std: float


@dataclass(frozen=True, slots=True)
class ReaderModel:
    """One reader's learned ranker: a score per paper, and why."""

    params: Params
    words: WordFeatures
    profiles: tuple[_Profile, ...]
    source: FeatureSource | None = field(default=None, compare=False)
    #: What :meth:`explain` worked out, by paper (None: no vector), kept with the model as
    #: its process keeps it (:mod:`.trained`): a paper's score does not change while the
    #: model does not, and a reader's candidates are mostly the same at each request.
    memo: dict[int, Because | None] | None = field(default=None, compare=False, repr=False)

    @property
    def interests(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.profiles)

    def score(self, paper_ids: Sequence[int]) -> dict[int, float]:
        """Each paper's score (papers without a vector are left out): higher is better,
        0 is as good as a random paper of the library, 1 a standard deviation above."""
        return {p: b.score for p, b in self.explain(paper_ids).items()}

    def explain(self, paper_ids: Sequence[int]) -> dict[int, Because]:
        """Each paper's score with the interest and saved paper that brought it."""
        if self.source is None:
            raise ValueError("this model was fitted without a store: use score_features")
        memo = self.memo if self.memo is not None else {}
        todo = [p for p in paper_ids if p not in memo]
        if todo:
            vectors, words = self.source(todo)
            known = [p for p in todo if p in vectors]
            if known:
                import numpy as np

                matrix = np.stack([vectors[p] for p in known])
                found = self.score_features(matrix, [words.get(p, Counter()) for p in known])
                memo.update(zip(known, found, strict=True))
            if len(memo) > MEMO_MOST:
                memo.clear()  # a reader's candidates of long ago: start again
            memo.update((p, None) for p in todo if p not in vectors)
        return {p: b for p in paper_ids if (b := memo.get(p)) is not None}

    def vector_scores(
        self, vectors: npt.NDArray[np.float32], nearest: int = 64
    ) -> npt.NDArray[np.float32]:
        """Each paper's best interest score as far as its vector alone tells: the
        vectors' part of each linear model and closeness to (at most ``nearest``,
        evenly taken) saved papers of the interest; the words' part is left out.

        A matrix product, cheap over thousands of papers: it shortlists the papers
        that :meth:`score_features` then scores in full (a maximum-inner-product
        search, as a vector index would run it, done exactly over the few given)."""
        import numpy as np

        dim = vectors.shape[1]
        best: npt.NDArray[np.float32] | None = None
        for profile in self.profiles:
            weights = (profile.coef[:dim] * self.params.vector_weight).astype(np.float32)
            z = (vectors @ weights + np.float32(profile.intercept - profile.mean)) / np.float32(
                profile.std
            )
            if self.params.nearest_share:
                own = profile.vectors
                if len(own) > nearest:
                    own = own[np.linspace(0, len(own) - 1, nearest).astype(int)]
                near = (vectors @ own.T).max(axis=1)
                share = np.float32(self.params.nearest_share / profile.near_std)
                z = z + share * (near - np.float32(profile.near_mean))
            best = z if best is None else np.maximum(best, z)
        return best if best is not None else np.zeros(len(vectors), dtype=np.float32)

    def score_features(
        self, vectors: npt.NDArray[np.float32], words: Sequence[Counter[str]]
    ) -> list[Because]:
        """Scores of papers given their vectors (unit rows) and words, in order."""
        import numpy as np

        features = _join(vectors, self.words.transform(words), self.params)
        best: Any = None
        which: Any = None
        for i, profile in enumerate(self.profiles):
            z = _z(profile, features, vectors, self.params)
            if best is None:
                best, which = z, np.zeros(len(z), dtype=int)
            else:
                better = z > best
                best = np.where(better, z, best)
                which = np.where(better, i, which)
        found = []
        for row in range(len(vectors)):
            profile = self.profiles[int(which[row])]
            similarity = profile.vectors @ vectors[row]
            nearest = int(np.argmax(similarity))
            found.append(
                Because(
                    profile.name,
                    profile.papers[nearest],
                    float(similarity[nearest]),
                    float(best[row]),
                )
            )
        return found


def _join(vectors: Any, words: Any, params: Params) -> Any:
    from scipy import sparse

    return sparse.hstack(
        [sparse.csr_matrix(vectors * params.vector_weight), words * params.word_weight],
        format="csr",
    )


def _z(profile: _Profile, features: Any, vectors: Any, params: Params) -> Any:
    raw = (features @ profile.coef + profile.intercept - profile.mean) / profile.std
    if params.nearest_share:
        near = (vectors @ profile.vectors.T).max(axis=1)
        raw = raw + params.nearest_share * (near - profile.near_mean) / profile.near_std
    return raw


def fit_reader_model(
    training: TrainingSet,
    vectors: Mapping[int, npt.NDArray[np.float32]],
    words: Mapping[int, Counter[str]],
    params: Params = DEFAULT,
    source: FeatureSource | None = None,
) -> ReaderModel | None:
    """Fit one model per interest (None: no interest has a paper with a vector).

    Pure: papers are row ids, their vectors and words are given.
    """
    import numpy as np

    interests = [
        Interest(i.name, tuple(p for p in dict.fromkeys(i.papers) if p in vectors))
        for i in training.interests
    ]
    interests = [i for i in interests if i.papers]
    if not interests:
        return None
    liked = {p for i in interests for p in i.papers}
    negatives = [p for p in dict.fromkeys(training.negatives) if p in vectors and p not in liked]
    disliked = set(negatives)
    background = [
        p
        for p in dict.fromkeys(training.background)
        if p in vectors and p not in liked and p not in disliked
    ]
    reads = [
        p
        for p in dict.fromkeys(training.reads)
        if p in vectors and p not in liked and p not in disliked
    ]
    centroids = np.stack([np.mean([vectors[p] for p in i.papers], axis=0) for i in interests])
    read_home = (
        np.argmax(np.stack([vectors[p] for p in reads]) @ centroids.T, axis=1)
        if reads
        else np.zeros(0, dtype=int)
    )
    everyone = [*liked, *reads, *negatives, *background]
    word_features = WordFeatures.fit(
        [words.get(p, Counter()) for p in everyone], params.min_df, params.max_df, params.ngrams
    )

    def features(papers: Sequence[int]) -> Any:
        matrix = np.stack([vectors[p] for p in papers])
        return _join(
            matrix, word_features.transform([words.get(p, Counter()) for p in papers]), params
        )

    shared = negatives + background
    shared_x = features(shared) if shared else None
    background_vectors = np.stack([vectors[p] for p in background]) if background else None
    profiles = []
    for index, interest in enumerate(interests):
        own_reads = [p for p, home in zip(reads, read_home, strict=True) if home == index]
        positives = list(interest.papers) + own_reads
        weights = [1.0] * len(interest.papers) + [params.read_weight] * len(own_reads)
        labels = [1] * len(positives)
        if shared_x is None:  # nothing to learn against: closeness alone
            x = features(positives)
            coef = np.zeros(x.shape[1])
            intercept = 0.0
        else:
            from scipy import sparse

            x = sparse.vstack([features(positives), shared_x], format="csr")
            labels += [0] * len(shared)
            weights += [params.negative_weight] * len(negatives) + [1.0] * len(background)
            model = _classifier(params)
            model.fit(x, labels, sample_weight=weights)
            coef = np.asarray(model.coef_[0], dtype=np.float64)
            intercept = float(model.intercept_[0])
        own_vectors = np.stack([vectors[p] for p in interest.papers])
        if shared_x is not None and background:
            scores = shared_x[len(negatives) :] @ coef + intercept
            near = (background_vectors @ own_vectors.T).max(axis=1)
            mean, std = float(scores.mean()), float(scores.std()) or 1.0
            near_mean, near_std = float(near.mean()), float(near.std()) or 1.0
        else:
            mean, std, near_mean, near_std = 0.0, 1.0, 0.0, 1.0
        profiles.append(
            _Profile(
                interest.name,
                coef,
                intercept,
                mean,
                std,
                interest.papers,
                own_vectors,
                near_mean,
                near_std,
            )
        )
    return ReaderModel(params, word_features, tuple(profiles), source)


def _classifier(params: Params) -> Any:
    weight = "balanced" if params.balanced else None
    if params.loss == "hinge":
        from sklearn.svm import LinearSVC

        return LinearSVC(C=params.c, class_weight=weight, max_iter=10000, random_state=0)
    if params.loss != "logistic":
        raise ValueError(f"loss must be 'logistic' or 'hinge', got {params.loss!r}")
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=params.c, class_weight=weight, max_iter=2000)


# -- from the store ---------------------------------------------------------------------


def store_features(store: Store, model: str) -> FeatureSource:
    """Papers' stored vectors (from encoder ``model``) and words, read when asked."""

    def read(
        paper_ids: Sequence[int],
    ) -> tuple[dict[int, npt.NDArray[np.float32]], dict[int, Counter[str]]]:
        from lightnews.embed.index import from_blob

        ids = list(dict.fromkeys(int(p) for p in paper_ids))
        vectors: dict[int, npt.NDArray[np.float32]] = {}
        words: dict[int, Counter[str]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            vectors.update((p, from_blob(blob)) for p, blob in store.vectors_of(chunk, model))
            words.update((p, paper_terms(t, a)) for p, t, a in store.paper_texts_of(chunk))
        return vectors, words

    return read


def train_reader_model(
    store: Store,
    reader: ReaderId,
    settings: Settings,
    params: Params = DEFAULT,
    seed: int | None = None,
) -> ReaderModel | None:
    """The reader's model, learned from what they saved, read, hid and muted.

    None when it cannot learn: no semantic extra or vectors, or nothing saved
    (the feed then ranks without it). ``seed`` fixes the random papers taken
    as weak negatives (tests); by default each training draws anew.
    """
    from lightnews.embed import semantic_unavailable

    if semantic_unavailable(settings):
        return None
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return None
    model = str(settings.semantic)
    signals = store.learning_signals(reader)
    if not signals.saved:
        return None
    by_list: dict[str, list[int]] = {}
    for paper_id, name in signals.saved:
        by_list.setdefault(name or SAVED, []).append(paper_id)
    rng = random.Random(seed)
    touched = {p for p, _ in signals.saved} | set(signals.read) | set(signals.not_interested)
    background = [
        p for p in store.random_paper_ids(params.background, model, rng) if p not in touched
    ]
    source = store_features(store, model)
    vectors, words = source([*touched, *signals.muted, *background])
    keywords = [k.lower() for k in store.mutes(reader).keyword]
    muted_words = [p for p in background if keywords and _mentions(words.get(p), keywords)]
    training = TrainingSet(
        interests=tuple(Interest(name, tuple(papers)) for name, papers in sorted(by_list.items())),
        reads=signals.read,
        negatives=(*signals.not_interested, *signals.muted, *muted_words),
        background=tuple(p for p in background if p not in set(muted_words)),
    )
    return fit_reader_model(training, vectors, words, params, source)


def _mentions(words: Counter[str] | None, keywords: Sequence[str]) -> bool:
    """Whether a paper's words include a muted keyword (as its stems)."""
    if not words:
        return False
    from lightnews.embed.lexical import words as stems

    return any(all(s in words for s in stems(k)) and stems(k) for k in keywords)


# -- kept in the store ------------------------------------------------------------------

#: The layout of :func:`model_to_json`'s document (a new layout: a new number). 2: the
#: words count a title 3 times, no longer 6 (a stored model of layout 1 learned from
#: other counts, so it is trained anew).
LAYOUT = 2


def model_to_json(model: ReaderModel) -> str:
    """The model as a JSON document: its knobs, words and each interest's profile, the
    arrays as base64 of their little-endian bytes (exact, and no pickle: loading runs no
    code). Its papers' features are not in it: :func:`model_from_json` takes a source."""
    return json.dumps(model_document(model), separators=(",", ":"))


def model_document(model: ReaderModel) -> dict[str, Any]:
    """:func:`model_to_json`'s document, before it is text (to be put in a larger one)."""
    return {
        "layout": LAYOUT,
        "params": asdict(model.params),
        "vocabulary": sorted(model.words.vocabulary, key=model.words.vocabulary.__getitem__),
        "idf": _array(model.words.idf, "<f8"),
        "profiles": [
            {
                "name": p.name,
                "coef": _array(p.coef, "<f8"),
                "intercept": p.intercept,
                "mean": p.mean,
                "std": p.std,
                "papers": list(p.papers),
                "vectors": _array(p.vectors, "<f4"),
                "near_mean": p.near_mean,
                "near_std": p.near_std,
            }
            for p in model.profiles
        ],
    }


def model_from_json(text: str, source: FeatureSource | None = None) -> ReaderModel:
    """The model :func:`model_to_json` wrote, reading its papers' features from ``source``;
    raises ValueError for a document of another layout (the caller trains anew)."""
    return model_from_document(json.loads(text), source)


def model_from_document(found: Any, source: FeatureSource | None = None) -> ReaderModel:
    """The model of :func:`model_document`'s document (parsed JSON)."""
    import numpy as np

    if not isinstance(found, dict) or found.get("layout") != LAYOUT:
        raise ValueError("not a reader model of this layout")
    words = WordFeatures(
        {t: i for i, t in enumerate(found["vocabulary"])},
        _unarray(found["idf"]).astype(np.float64),
    )
    profiles = tuple(
        _Profile(
            str(p["name"]),
            _unarray(p["coef"]).astype(np.float64),
            float(p["intercept"]),
            float(p["mean"]),
            float(p["std"]),
            tuple(int(i) for i in p["papers"]),
            _unarray(p["vectors"]).astype(np.float32),
            float(p["near_mean"]),
            float(p["near_std"]),
        )
        for p in found["profiles"]
    )
    return ReaderModel(Params(**found["params"]), words, profiles, source)


def _array(values: Any, dtype: str) -> dict[str, Any]:
    import numpy as np

    exact = np.ascontiguousarray(values, dtype=dtype)
    return {
        "dtype": dtype,
        "shape": list(exact.shape),
        "data": base64.b64encode(exact.tobytes()).decode("ascii"),
    }


def _unarray(found: Mapping[str, Any]) -> Any:
    import numpy as np

    dtype = str(found["dtype"])
    if dtype not in ("<f8", "<f4"):
        raise ValueError(f"unexpected array type {dtype!r}")
    data = base64.b64decode(found["data"])
    return np.frombuffer(data, dtype=dtype).reshape([int(n) for n in found["shape"]]).copy()
