"""Embedding, the vector index and search by meaning, on the demo library.

These need the semantic extra (CI installs it); without it they skip and
say so, and ``test_without_the_extra_search_is_lexical_and_says_why`` covers
what a user without it sees.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from lightnews.embed import embed_papers, forget_cached, open_semantic
from lightnews.embed.encoders import load_encoder, missing_packages
from lightnews.embed.index import VectorIndex
from lightnews.model import SearchFilters
from lightnews.search import MEANING_FLOOR, related_papers, search_papers
from lightnews.settings import Settings
from lightnews.store import SQLiteStore

DEFAULT = str(Settings(environ={}).semantic)  # the encoder a library gets by default

semantic_extra = pytest.mark.skipif(
    bool(missing_packages(DEFAULT)) or bool(missing_packages("static")),
    reason="needs the semantic extra: pip install -e '.[semantic]'",
)
# Real titles (and one abstract) of papers in the shared corpus.
REAL_TEXTS = [
    "Depth Pro: Sharp Monocular Metric Depth in Less Than a Second",
    "Attention Is All You Need",
    "DeepSeek-R1: Incentivizing Reasoning Capability in LLMs via Reinforcement Learning",
    "Contamination-Resistant Evaluation of Large Language Models",
    "We present a foundation model for zero-shot metric monocular depth estimation. Our model, "
    "Depth Pro, synthesizes high-resolution depth maps with unparalleled sharpness and "
    "high-frequency details. The predictions are metric, with absolute scale, without relying "
    "on the availability of metadata such as camera intrinsics.",
]


@pytest.fixture
def library(demo_database: Path, tmp_path: Path) -> Iterator[SQLiteStore]:
    """A private copy of the demo library (built with its vectors when the extra is here)."""
    db = tmp_path / "library.db"
    shutil.copy(demo_database, db)
    for extra in demo_database.parent.glob(demo_database.name + ".*"):
        shutil.copy(extra, tmp_path / extra.name.replace(demo_database.name, db.name))
    forget_cached()
    store = SQLiteStore(db)
    yield store
    store.close()
    forget_cached()


@pytest.fixture
def on() -> Settings:
    return Settings(environ={})


@semantic_extra
def test_the_demo_library_is_embedded_and_a_rerun_has_nothing_to_do(
    library: SQLiteStore, on: Settings
) -> None:
    titled = library.db.execute("SELECT count(*) FROM papers WHERE title != ''").fetchone()[0]
    assert library.vector_count(DEFAULT) == titled > 10
    assert library.count_unembedded() == 0
    again = embed_papers(library, on)
    assert (again.embedded, again.remaining) == (0, 0)
    index_file, meta = VectorIndex.paths(library.path, DEFAULT)
    assert index_file.exists() and meta.exists()


@semantic_extra
def test_search_finds_by_meaning_what_shares_no_word_with_the_query(
    library: SQLiteStore, on: Settings
) -> None:
    found = search_papers(library, "cheaper attention for long sequences", settings=on)
    assert found.mode == "hybrid" and found.note is None
    assert found[0].title.startswith("Sparse Ring Attention")
    assert found[0].matched == ("meaning",)
    # Words and meaning agreeing put a paper first; both are named on the hit.
    both = search_papers(library, "few-step diffusion distillation with consistency", settings=on)
    assert both[0].arxiv_id == "2511.01186" and set(both[0].matched) == {"words", "meaning"}


@semantic_extra
def test_a_surname_or_nonsense_has_no_neighbours_by_meaning(
    library: SQLiteStore, on: Settings
) -> None:
    assert search_papers(library, "banana bread recipe", settings=on) == []
    for hit in search_papers(library, "Lindqvist", settings=on):
        assert hit.matched == ("words",)


@semantic_extra
def test_made_up_words_and_a_phrase_no_paper_is_about_give_no_invented_results(
    library: SQLiteStore, on: Settings
) -> None:
    nothing = search_papers(library, "zzzxqy", settings=on)
    assert nothing == [] and nothing.note is not None and "no results" in nothing.note
    # A paraphrase sharing no word with its paper is found by meaning (the default
    # encoder holds it above its floor; the static one does not: see the switch test).
    paraphrase = search_papers(library, "benchmark leakage into training data", settings=on)
    assert paraphrase[0].arxiv_id == "2510.03172" and paraphrase[0].matched == ("meaning",)
    # "key-value cache": the one paper with those words, not nine papers near by meaning.
    kv = search_papers(library, "key-value cache", settings=on)
    assert [h.title.split(":")[0] for h in kv] == ["Sparse Ring Attention"]
    assert "words" in kv[0].matched


@semantic_extra
def test_filters_and_excluded_words_apply_to_hits_found_by_meaning(
    library: SQLiteStore, on: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The floor under hits by meaning alone is lowered: this is about filters.
    monkeypatch.setitem(MEANING_FLOOR, str(on.semantic), 0.2)
    query = "cheaper attention for long sequences"
    everything = search_papers(library, query, settings=on)
    titles = [h.title for h in everything]
    assert any("Sparse Ring Attention" in t for t in titles)
    assert any("Linear-Time Kernelized Attention" in t for t in titles)
    robotics = search_papers(library, query, settings=on, filters=SearchFilters(subject="cs.RO"))
    assert robotics and len(robotics) < len(everything)
    for hit in robotics:  # the subject filter matches any of a paper's categories
        assert "cs.RO" in library.get_paper(hit.arxiv_id).categories
    without = search_papers(library, query + " -ring", settings=on)
    assert not any("Ring" in h.title for h in without)
    assert any("Kernelized" in h.title for h in without)


@semantic_extra
def test_paging_through_fused_results_never_repeats_a_paper(
    library: SQLiteStore, on: Settings
) -> None:
    pages = [
        search_papers(library, "learning", settings=on, limit=4, offset=n * 4) for n in range(4)
    ]
    ids = [h.arxiv_id for page in pages for h in page]
    assert len(ids) == len(set(ids)) > 4


@semantic_extra
def test_related_papers_fuse_meaning_and_words_and_leave_the_paper_out(
    library: SQLiteStore, on: Settings
) -> None:
    related = related_papers(library, "2511.18342", limit=5, settings=on)
    assert related.mode == "hybrid"
    assert "2511.18342" not in [h.arxiv_id for h in related]
    # The other attention paper is the nearest by any measure.
    assert related[0].arxiv_id == "2510.18421"
    assert any("meaning" in h.matched for h in related)


@semantic_extra
def test_a_changed_abstract_is_embedded_again_and_the_index_follows(
    library: SQLiteStore, on: Settings
) -> None:
    paper_id = library.db.execute("SELECT id FROM papers WHERE arxiv_id = '2510.03172'").fetchone()[
        0
    ]
    with library.transaction():
        library.db.execute(
            "UPDATE papers SET title = 'Protein folding with equivariant networks', "
            "abstract = 'We predict protein structure from amino acid sequences.' WHERE id = ?",
            (paper_id,),
        )
    assert library.count_unembedded() == 1
    assert library.paper_vector("2510.03172", DEFAULT) is None
    report = embed_papers(library, on)
    assert report.embedded == 1 and report.remaining == 0
    found = search_papers(library, "predicting the structure of proteins", settings=on)
    assert found[0].arxiv_id == "2510.03172"
    # A fresh process (a server started later) loads the saved index and agrees.
    forget_cached()
    again = search_papers(library, "predicting the structure of proteins", settings=on)
    assert again[0].arxiv_id == "2510.03172"


@semantic_extra
def test_switching_encoders_drops_the_old_vectors(library: SQLiteStore, on: Settings) -> None:
    library.save_vectors("other-model", [(1, b"\0\0" * 8)])
    assert library.other_models(DEFAULT)
    embed_papers(library, on)
    assert not library.other_models(DEFAULT)
    assert library.count_unembedded() == 0


@semantic_extra
def test_a_large_library_gets_the_inverted_file_index(
    library: SQLiteStore, on: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    from lightnews.embed import index as index_module

    monkeypatch.setattr(index_module, "EXACT_UP_TO", 4)
    semantic = open_semantic(library, on)
    built = VectorIndex.build(library, DEFAULT, semantic.encoder.dim)
    assert built.size == library.vector_count(DEFAULT)
    assert "IVF" in type(built._index).__name__
    found = semantic.vector_of("2511.18342")
    assert found is not None
    nearest = built.search(found[1].astype(np.float32), 3)
    assert nearest[0][0] == found[0] and nearest[0][1] > 0.99


@semantic_extra
def test_a_replaced_database_does_not_inherit_the_old_index(
    library: SQLiteStore, on: Settings, tmp_path: Path
) -> None:
    index_file, meta = VectorIndex.paths(library.path, DEFAULT)
    other = SQLiteStore(tmp_path / "other.db")
    shutil.copy(index_file, VectorIndex.paths(other.path, DEFAULT)[0])
    shutil.copy(meta, VectorIndex.paths(other.path, DEFAULT)[1])
    other.db.execute(
        "INSERT INTO papers (arxiv_id, title, abstract, content_hash, first_seen, modified) "
        "VALUES ('2501.00001', 'Protein folding', 'Structures of proteins.', 'x', '', '')"
    )
    embed_papers(other, on)
    found = search_papers(other, "protein structure prediction", settings=on)
    assert [h.arxiv_id for h in found] == ["2501.00001"]
    other.close()


@semantic_extra
def test_switching_encoders_reembeds_the_library_and_switching_back_too(
    library: SQLiteStore, on: Settings
) -> None:
    titled = library.vector_count(DEFAULT)
    static = on.with_overrides(semantic="static")
    report = embed_papers(library, static)
    assert (report.encoder, report.embedded, report.remaining) == ("static", titled, 0)
    assert library.vector_count("static") == titled and not library.has_vectors(DEFAULT)
    # The static encoder holds this paraphrase below its fitted floor: by words only.
    found = search_papers(library, "benchmark leakage into training data", settings=static)
    assert found.mode == "hybrid" and "close enough in meaning" in (found.note or "")
    # Back in the same process: the cached index of the first encoder catches up
    # on the new rows (every paper's vector replaced, none twice).
    back = embed_papers(library, on)
    assert (back.encoder, back.embedded) == (DEFAULT, titled)
    assert library.vector_count(DEFAULT) == titled and not library.has_vectors("static")
    found = search_papers(library, "benchmark leakage into training data", settings=on)
    assert found[0].title.startswith("Contamination-Resistant Evaluation")
    related = related_papers(library, "2511.18342", limit=20, settings=on)
    assert len({h.arxiv_id for h in related}) == len(related) > 0
    assert open_semantic(library, on).index.size == titled


int8_extra = pytest.mark.skipif(
    bool(missing_packages("minilm-int8")) or bool(missing_packages("minilm")),
    reason="needs the semantic extra (onnxruntime, and PyTorch to export and compare)",
)


@int8_extra
def test_the_int8_encoder_is_exported_once_and_gives_minilms_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    import numpy as np

    from lightnews.embed.encoders import MiniLMEncoder

    monkeypatch.setenv("LIGHTNEWS_MODEL_CACHE", str(tmp_path))
    encoder = load_encoder("minilm-int8")
    said = capfd.readouterr()
    # One line says what happens; no progress bar or library warning around it.
    assert said.out == ""
    assert said.err.startswith("Preparing the minilm-int8 encoder") and said.err.count("\n") == 1
    model = tmp_path / "minilm-l6-v2-int8-v1" / "model.onnx"
    assert 10e6 < model.stat().st_size < 40e6  # int8: a quarter of the 90 MB of weights
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []
    made = model.stat().st_mtime_ns

    vectors = encoder.encode(REAL_TEXTS)
    assert vectors.shape == (len(REAL_TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    reference = MiniLMEncoder(max_tokens=128).encode(REAL_TEXTS)
    cosines = np.sum(vectors * reference, axis=1)
    assert cosines.min() > 0.97, cosines
    # A text gets nearly the same vector alone (one thread) as in a batch padded
    # to a longer text (two threads): padding is masked. Not exactly the same:
    # activations are quantized with one scale per batch (measured 0.98-0.995).
    alone = encoder.encode([REAL_TEXTS[1]])[0]
    batch = encoder.encode([REAL_TEXTS[4], *REAL_TEXTS])
    assert float(alone @ batch[2]) > 0.97
    assert np.allclose(encoder.encode(REAL_TEXTS), vectors)  # and the same batch, the same
    assert encoder.encode([]).shape == (0, 384)

    capfd.readouterr()
    again = load_encoder("minilm-int8")  # a second process finds it made
    assert capfd.readouterr().err == "" and model.stat().st_mtime_ns == made
    assert np.allclose(again.encode(REAL_TEXTS), vectors, atol=1e-6)


@semantic_extra
def test_the_default_encoder_encodes_queries_from_many_threads_at_once() -> None:
    import threading

    encoder = load_encoder(DEFAULT)  # the web server's threads share one
    expected = encoder.encode(["sparse attention query 7"])[0]
    errors: list[BaseException] = []
    same: list[bool] = []

    def run() -> None:
        try:
            for n in range(40):
                vector = encoder.encode([f"sparse attention query {n % 10}"])[0]
                if n % 10 == 7:  # a query is encoded alone: always the same vector
                    same.append(bool(abs(vector - expected).max() < 1e-6))
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[:2]
    assert len(same) == 32 and all(same)


def test_a_failed_export_says_why_and_leaves_nothing_half_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("filelock", reason="needs the semantic extra")
    from lightnews.embed import int8
    from lightnews.embed.encoders import SemanticUnavailable

    def broken(folder: Path) -> None:
        (folder / "traced.onnx").write_bytes(b"half")
        raise OSError("No space left on device")

    monkeypatch.setenv("LIGHTNEWS_MODEL_CACHE", str(tmp_path))
    monkeypatch.setattr(int8, "_export", broken)
    monkeypatch.setattr(
        "lightnews.embed.encoders.missing_packages", lambda name: []
    )  # as if the extra were complete
    with pytest.raises(SemanticUnavailable, match="No space left on device"):
        load_encoder("minilm-int8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["minilm-l6-v2-int8-v1.lock"]
    assert capfd.readouterr().err.startswith("Preparing the minilm-int8 encoder")


def test_without_the_extra_search_is_lexical_and_says_why(
    library: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "faiss" else real_find_spec(name, *a),
    )
    forget_cached()
    monkeypatch.setattr("lightnews.embed._encoders", {})
    found = search_papers(library, "attention", settings=Settings(environ={}))
    assert found.mode == "lexical" and found
    assert found.note is not None and "faiss-cpu" in found.note and "semantic" in found.note
    related = related_papers(library, "2511.18342", settings=Settings(environ={}))
    assert related.mode == "lexical" and "faiss-cpu" in (related.note or "")


def test_semantic_off_is_lexical_and_says_so(library: SQLiteStore) -> None:
    off = Settings(environ={"LIGHTNEWS_SEMANTIC": "off"})
    found = search_papers(library, "attention", settings=off)
    assert found.mode == "lexical" and "off" in (found.note or "")
    assert all(h.matched == ("words",) for h in found)


@semantic_extra
def test_processes_saving_one_index_at_once_leave_a_whole_pair(
    library: SQLiteStore, on: Settings
) -> None:
    """Two refreshes of one library embed and save its index at the same moment."""
    import threading

    semantic = open_semantic(library, on)
    built = VectorIndex.build(library, "static", semantic.encoder.dim)
    failures: list[BaseException] = []

    def save_often() -> None:
        try:
            for _ in range(25):
                built.save(library.path)
        except BaseException as error:  # collected for the assertion
            failures.append(error)

    savers = [threading.Thread(target=save_often) for _ in range(3)]
    for saver in savers:
        saver.start()
    for saver in savers:
        saver.join()
    assert failures == []
    loaded = VectorIndex.load(library.path, "static", semantic.encoder.dim)
    assert loaded is not None and loaded.size == built.size
    assert not list(library.path.parent.glob("*.tmp"))
