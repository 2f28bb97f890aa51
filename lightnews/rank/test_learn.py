"""The learned ranker on real papers (the shared Hugging Face corpus), on both backends.

A reader saves robotics papers (in a list) and speech papers (in none); the
library also holds video-generation papers and others. "Not interested" on a
video-generation paper must lower the other video-generation papers, and
each score must name the interest and saved paper that brought it; reads
count as weak positives.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lightnews.embed import embed_papers, forget_cached
from lightnews.embed.encoders import missing_packages
from lightnews.model import Paper
from lightnews.rank.learn import SAVED, ReaderModel, train_reader_model
from lightnews.settings import Settings
from lightnews.store import Store
from lightnews.store.readers import ReaderId

SETTINGS = Settings(environ={})
NOW = "2026-08-01T00:00:00+00:00"
READER = ReaderId(7)

pytestmark = pytest.mark.skipif(
    bool(missing_packages(str(SETTINGS.semantic))),
    reason="needs the semantic extra: pip install -e '.[semantic]'",
)

TOPICS = {"robot": 8, "speech": 6, "video generation": 8}
OTHERS = 60


def corpus_papers(shared: Path) -> dict[str, list[Paper]]:
    """Real papers by topic (their title names it), and others that name none."""
    found: dict[str, list[Paper]] = {topic: [] for topic in (*TOPICS, "other")}
    path = shared / "corpus" / "hf-papers" / "hf-papers-11k.jsonl"
    for line in path.open(encoding="utf-8"):
        row = json.loads(line)
        if not row.get("content_text"):
            continue  # a few entries have a title alone
        title = row["title"].lower()
        topic = next((t for t in TOPICS if t in title), "other")
        want = TOPICS.get(topic, OTHERS)
        if any(t in f"{title} {row['content_text'].lower()}" for t in TOPICS) and topic == "other":
            continue
        if len(found[topic]) < want:
            arxiv_id = row["id"].rsplit("/", 1)[-1]
            found[topic].append(
                Paper(
                    arxiv_id,
                    title=row["title"],
                    abstract=row["content_text"],
                    categories=["cs.LG"],
                    published="2025-03-01",
                )
            )
    return found


@pytest.fixture
def library(store: Store, shared: Path) -> Iterator[tuple[Store, dict[str, list[int]]]]:
    papers = corpus_papers(shared)
    store.save_papers([p for group in papers.values() for p in group], NOW)
    forget_cached()
    embed_papers(store, SETTINGS)
    ids = {
        topic: [store.paper_row_id(p.arxiv_id) or 0 for p in group]
        for topic, group in papers.items()
    }
    yield store, ids
    forget_cached()


def saved_by_topic(store: Store, ids: dict[str, list[int]], topic: str, count: int) -> list[int]:
    keys = store.papers_by_rowids(ids[topic][:count])
    for hit in keys.values():
        store.mark_story(READER, hit.arxiv_id, NOW, saved=True)
    return ids[topic][:count]


def trained(store: Store) -> ReaderModel:
    model = train_reader_model(store, READER, SETTINGS, seed=1)
    assert model is not None
    return model


def test_not_interested_lowers_similar_papers(library: tuple[Store, dict[str, list[int]]]) -> None:
    store, ids = library
    assert train_reader_model(store, READER, SETTINGS) is None  # nothing saved yet
    robots = saved_by_topic(store, ids, "robot", 4)
    for hit in store.papers_by_rowids(robots[:2]).values():
        store.set_saved_list(READER, hit.arxiv_id, "robots")
    saved_by_topic(store, ids, "speech", 3)
    model = trained(store)
    assert set(model.interests) == {"robots", SAVED}

    video = ids["video generation"]
    candidates = ids["robot"][4:] + ids["speech"][3:] + video[1:] + ids["other"]
    before = model.score(candidates)
    assert set(before) == set(candidates)  # every candidate has a vector and a score

    store.set_paper_feedback(READER, video[0], "not-interested", NOW)
    after = trained(store).score(candidates)
    drops = {p: before[p] - after[p] for p in candidates}
    video_drop = sum(drops[p] for p in video[1:]) / len(video[1:])
    robot_drop = sum(drops[p] for p in ids["robot"][4:]) / len(ids["robot"][4:])
    assert all(drops[p] > 0 for p in video[1:]), drops
    assert video_drop > robot_drop + 0.1, (video_drop, robot_drop)

    store.set_paper_feedback(READER, video[0], None, NOW)  # taken back: as before
    again = trained(store).score(candidates)
    assert all(abs(again[p] - before[p]) < 1e-6 for p in candidates)


def test_each_score_names_its_interest_and_saved_paper(
    library: tuple[Store, dict[str, list[int]]],
) -> None:
    store, ids = library
    robots = saved_by_topic(store, ids, "robot", 2)  # a small interest...
    for hit in store.papers_by_rowids(robots).values():
        store.set_saved_list(READER, hit.arxiv_id, "robots")
    speech = saved_by_topic(store, ids, "speech", 5)  # ...beside a larger one
    model = trained(store)
    why = model.explain(ids["robot"][2:] + ids["speech"][5:] + ids["other"])
    for paper_id in ids["robot"][2:]:
        assert why[paper_id].interest == "robots"
        assert why[paper_id].paper_id in robots
    assert all(why[p].interest == SAVED and why[p].paper_id in speech for p in ids["speech"][5:])
    # Mixed fairly: the two-paper interest's papers rank above the unrelated ones too.
    unrelated = sorted(why[p].score for p in ids["other"])
    assert min(why[p].score for p in ids["robot"][2:]) > unrelated[len(unrelated) // 2]
    assert min(why[p].score for p in ids["speech"][5:]) > unrelated[len(unrelated) // 2]


def test_reads_count(library: tuple[Store, dict[str, list[int]]]) -> None:
    store, ids = library
    saved_by_topic(store, ids, "speech", 3)
    candidates = ids["robot"]
    before = trained(store).score(candidates)
    for hit in store.papers_by_rowids(ids["robot"][:3]).values():
        store.mark_story(READER, hit.arxiv_id, NOW, read=True)
    after = trained(store).score(candidates)
    assert all(after[p] > before[p] for p in ids["robot"][3:])  # reads pull their like up


def test_word_features_are_unit_tf_idf_rows() -> None:
    from collections import Counter

    import numpy as np

    from lightnews.rank.learn import WordFeatures

    documents = [
        Counter({"robot": 3, "arm": 1}),
        Counter(),
        Counter({"robot": 1, "speech": 2}),
        Counter({"speech": 1, "rare": 1}),
        Counter(),
    ]
    words = WordFeatures.fit(documents, min_df=2)
    assert set(words.vocabulary) == {"robot", "speech"}  # "arm" and "rare" in one paper each
    matrix = words.transform(documents).toarray()
    assert matrix.shape == (5, 2)
    assert not matrix[1].any() and not matrix[4].any()  # no words: a zero row, not NaN
    assert np.allclose(np.linalg.norm(matrix[[0, 2, 3]], axis=1), 1.0)
    robot, speech = words.vocabulary["robot"], words.vocabulary["speech"]
    # Sublinear term frequency times IDF, then unit length: (1 + ln 1) vs (1 + ln 2), same IDF.
    assert matrix[2, speech] / matrix[2, robot] == pytest.approx(1 + np.log(2))
    assert set(WordFeatures.fit(documents, min_df=1, max_df=0.3).vocabulary) == {"arm", "rare"}


def test_paper_terms_count_a_title_as_many_times_as_the_setting_says() -> None:
    from lightnews.rank.learn import DEFAULT, paper_terms

    assert paper_terms("Robot arms", "The robot learns.", title_weight=1)["robot"] == 2
    assert paper_terms("Robot arms", "The robot learns.", title_weight=3)["robot"] == 4
    assert paper_terms("Robot arms", "The robot learns.", title_weight=3)["learn"] == 1
    assert paper_terms("Robot arms", "")["arm"] == DEFAULT.title_weight  # by default


def test_paper_terms_pair_adjacent_stems_and_ngrams_choose_them() -> None:
    from lightnews.rank.learn import DEFAULT, WordFeatures, paper_terms

    title_weight = DEFAULT.title_weight

    assert set(paper_terms("Robot arms", "Robot learning", ngrams=1)) == {"robot", "arm", "learn"}
    terms = paper_terms("Robot arms", "The robot learns grasping of arms.", ngrams=2)
    assert terms["robot"] == 1 + title_weight and terms["arm"] == 1 + title_weight
    assert terms["robot arm"] == title_weight  # a pair of the title, not of the abstract
    assert terms["robot learn"] == 1 and terms["grasp arm"] == 1  # stop words left out first
    assert "arm robot" not in terms  # no pair across the title and the abstract
    documents = [terms, paper_terms("Robot arms", "", ngrams=2)]
    assert set(WordFeatures.fit(documents, min_df=2).vocabulary) == {"robot", "arm"}
    assert set(WordFeatures.fit(documents, min_df=2, ngrams=2).vocabulary) == {
        "robot",
        "arm",
        "robot arm",
    }


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
@pytest.mark.parametrize("word_weight", [0.0, 1.0])
def test_each_loss_ranks_the_saved_papers_like_first(loss: str, word_weight: float) -> None:
    from collections import Counter

    import numpy as np

    from lightnews.rank.learn import Interest, Params, TrainingSet, fit_reader_model

    rng = np.random.default_rng(3)
    centre = rng.normal(size=16)
    near = [centre + 0.5 * rng.normal(size=16) for _ in range(12)]
    far = [rng.normal(size=16) for _ in range(60)]
    vectors = {i: (v / np.linalg.norm(v)).astype(np.float32) for i, v in enumerate(near + far)}
    words = {
        i: Counter({"robot": 2, f"w{i % 3}": 1}) if i < 12 else Counter({f"w{i % 7}": 1})
        for i in vectors
    }
    training = TrainingSet((Interest(SAVED, tuple(range(8))),), background=tuple(range(12, 52)))
    params = Params(loss=loss, word_weight=word_weight, nearest_share=0.0)
    model = fit_reader_model(training, vectors, words, params)
    assert model is not None
    ranked = [*range(8, 12), *range(52, 72)]
    found = model.score_features(np.stack([vectors[p] for p in ranked]), [words[p] for p in ranked])
    scores = [b.score for b in found]
    assert min(scores[:4]) > max(scores[4:])  # the saved papers' likes above every other
    with pytest.raises(ValueError, match="loss must be"):
        fit_reader_model(training, vectors, words, Params(loss="squared"))
