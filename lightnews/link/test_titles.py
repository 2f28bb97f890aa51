"""Title linking on a small real store: exact, paraphrased, cut, cited by surname, and not."""

from __future__ import annotations

from lightnews.link.title_features import (
    inside_a_longer_title,
    names_its_subject,
    numbering_clash,
    presents_as_own,
)
from lightnews.link.title_words import stems, stems_of_title, title_weights, tokenize
from lightnews.link.titles import Reference, find_title_mentions, match_reference, score_titles
from lightnews.model import Author, Paper
from lightnews.store import Store

PAPERS = [
    ("2410.02073", "Depth Pro: Sharp Monocular Metric Depth in Less Than a Second", "Bochkovskii"),
    (
        "2410.05229",
        "GSM-Symbolic: Understanding the Limitations of Mathematical Reasoning in "
        "Large Language Models",
        "Mirzadeh",
    ),
    ("2409.03137", "The AdEMAMix Optimizer: Better, Faster, Older", "Pagliardini"),
    ("2409.04431", "Theory, Analysis, and Best Practices for Sigmoid Self-Attention", "Ramapuram"),
    ("2501.00001", "Monocular Depth Estimation with Transformers", "Other"),
    ("2501.00002", "Large Language Models Are Few-Shot Reasoners", "Someone"),
    ("2501.00003", "Attention Is All You Need Again", "Else"),
    ("2501.00004", "A Survey of Optimizers for Deep Learning", "Writer"),
]


def store_with_papers(store: Store) -> Store:
    common = (
        "we they will current addresses this paper study show results models data language "
        "learning method new approach better faster older higher sooner optimizer second "
        "than less much their work which present analysis theory best practices large"
    ).split()
    filler = [
        Paper(
            f"2502.{n:05d}",
            title=f"On {common[n % len(common)]} {common[(n * 7) % len(common)]}",
            abstract=" ".join(common[(n + k) % len(common)] for k in range(0, 40, 3)),
            authors=[Author("A. Person")],
            published="2025-02-01T00:00:00Z",
        )
        for n in range(300)
    ]
    store.save_papers(
        [
            Paper(
                i,
                title=t,
                abstract="An abstract.",
                authors=[Author(f"Ann {s}")],
                published="2024-10-01T00:00:00Z",
            )
            for i, t, s in PAPERS
        ]
        + filler,
        "2025-01-01T00:00:00Z",
    )
    return store


def linked(text: str, store: Store, **options: object) -> list[str]:
    return [m.arxiv_id for m in find_title_mentions(text, store, **options)]  # type: ignore[arg-type]


def test_exact_and_paraphrased_titles_in_running_text(store: Store) -> None:
    store_with_papers(store)
    assert linked(
        "We present Depth Pro: Sharp Monocular Metric Depth in Less Than a Second at ICLR.", store
    ) == ["2410.02073"]
    spun = (
        "At ICLR, researchers will current their work Depth Professional: Sharp Monocular "
        "Metric Depth in Much less Than a Second, which surpasses prior limitations."
    )
    assert linked(spun, store) == ["2410.02073"]
    assert linked(
        "In GSM-Symbolic: Understanding the Limitations of Mathematical Reasoning in "
        "Giant Language Fashions the authors show fragility.",
        store,
    ) == ["2410.05229"]
    assert linked(
        "They will current The AdEMAMix Optimizer: Better, Faster, Older, which addresses this.",
        store,
    ) == ["2409.03137"]
    two = (
        "Two papers: Theory, Evaluation, and Best Practices for Sigmoid Self-Consideration "
        "and, we show in this study with results of their work which present analysis of models, "
        "data, language and learning with a new approach, much later in the same post, "
        "The AdEMAMix Optimizer: Better, Faster, Older."
    )
    assert sorted(linked(two, store)) == ["2409.03137", "2409.04431"]


def test_no_link_without_enough_evidence(store: Store) -> None:
    store_with_papers(store)
    assert linked("We like depth estimation and language models.", store) == []
    assert linked("Attention", store, whole=True) == []
    # A title that is not stored, sharing words with one that is, is not linked.
    assert linked("Sharp Monocular Depth Completion from Sparse Lidar Points", store) == []
    # A paper published long after the text was written cannot be what it names.
    assert (
        linked(
            "Depth Pro: Sharp Monocular Metric Depth in Less Than a Second",
            store,
            published="2020-01-01T00:00:00Z",
        )
        == []
    )


def test_surname_short_title(store: Store) -> None:
    store_with_papers(store)
    found = match_reference(Reference("Pagliardini", "AdEMAMix Optimizer"), store)
    assert found is not None and found.arxiv_id == "2409.03137"
    assert found.method == "surname-title"
    typo = match_reference(Reference("Bochkovskii", "Depth Pro Shrap Monocular"), store)
    assert typo is not None and typo.arxiv_id == "2410.02073"
    assert match_reference(Reference("Nobody", "AdEMAMix Optimizer"), store) is None
    assert match_reference(Reference("Pagliardini", "the of"), store) is None


def test_stems_match_the_index() -> None:
    assert stems("Generative Models, generation!") == ["gener", "model", "gener"]


def test_a_version_sibling_is_not_the_paper_named() -> None:
    def clash(text: str, title: str) -> bool:
        name = text.split(" ")[0]
        return numbering_clash(text, 0, len(name), title)

    assert clash("InternVL3.5 reaches a new state of the art", "InternVL3: Exploring Training")
    assert clash("InternVL3 reaches a new state of the art", "InternVL3.5: Advancing Open")
    assert clash("Wan-Streamer v0.3 streams video", "Wan-Streamer v0.2: Real-Time Video")
    assert not clash("InternVL3 reaches a new state", "InternVL3: Exploring Training")
    assert not clash("AM-Thinking-v1, Qwen3-235B and R1", "AM-Thinking-v1: Reasoning at 32B")
    assert not clash("Depth Pro gives sharp depth", "Depth Pro: Sharp Monocular Metric Depth")
    assert not clash("GPT-4o answers", "Sparse Attention Across 4 Scales")  # no coined name


def test_another_part_of_a_series_is_not_the_paper_named() -> None:
    def clash(text: str, title: str) -> bool:
        return numbering_clash(text, 0, len(text), title)

    asas = "The ASAS-SN Catalog of Variable Stars V: Variables in the Southern Hemisphere"
    assert clash("The ASAS-SN Catalog of Variable Stars VI: An All-Sky Sample", asas)
    gmc = "GMC Collisions as Triggers of Star Formation. III. Density and Magnetically Regulated"
    assert clash("GMC Collisions As Triggers of Star Formation. IV. The Role of", gmc)
    assert clash("our paper, Part 3: faster", "A Study of Scaling, Part 2: Data")
    assert not clash("The ASAS-SN Catalog of Variable Stars V: Variables in the", asas)
    assert not clash("the ASAS-SN catalog of variable stars is out", asas)  # no part written
    assert not clash("What I learned about scaling", "Scaling Laws II: Data")  # a pronoun
    assert not clash("Type II supernovae in nearby galaxies", "What I Learned About Supernovae")


def test_a_title_is_aligned_with_its_own_words_not_an_earlier_mention(
    store: Store,
) -> None:
    store_with_papers(store)
    text = (
        "The work reveals limits of a mathematical reasoning benchmark and introduces a more "
        "rigorous reasoning evaluation for LLMs. In GSM-Symbolic: Understanding the "
        "Limitations of Mathematical Reasoning in Giant Language Fashions, they show it."
    )
    found = {m.arxiv_id: m for m in score_titles(text, store)}
    # The stretch starts at the title (the "LLMs" just before it credits its last words),
    # not back at the sentence before that shares two of its words.
    assert found["2410.05229"].evidence.startswith("LLMs. In GSM-Symbolic")


def test_features_for_a_word_only_one_title_has_and_a_coined_name(store: Store) -> None:
    store_with_papers(store)
    store.save_papers(
        [
            Paper(
                "2412.13303",
                title="FastVLM: Efficient Vision Encoding for Vision Language Models",
            )
        ],
        "2025-01-01T00:00:00Z",
    )

    def features(text: str, arxiv_id: str) -> dict[str, float]:
        found = {m.arxiv_id: dict(m.features) for m in score_titles(text, store)}
        return found[arxiv_id]

    adem = features("They present The AdEMAMix Optimizer: Higher, Sooner, Older.", "2409.03137")
    assert adem["unique"] == 1.0 and adem["named"] == 0.0
    fast = features("FastVLM encodes images for vision language models quickly.", "2412.13303")
    assert fast["named"] == 1.0 and fast["unique"] == 1.0
    # Another version is not the name written.
    other = {m.arxiv_id: dict(m.features) for m in score_titles("FastVLM2 encodes images.", store)}
    assert other.get("2412.13303", {"named": 0.0})["named"] == 0.0
    assert (
        features("Monocular depth in less than a second, with transformers.", "2410.02073")[
            "unique"
        ]
        == 0.0
    )


def test_a_name_the_text_presents_as_its_own_is_told_from_a_mention() -> None:
    title = "TraceLens: Reviewing the Trajectories of Coding Agents"
    own = [
        "We introduce TraceLens, a framework for process-level review of agent runs.",
        "In this paper we present TraceLens: a tool that replays each step.",
        "To address this, we propose a training-free reviewer called TraceLens.",
        "Our reviewer, TraceLens, flags blind retries.",
        "TraceLens (ours) finds twice as many regressions.",
        "Abstract TraceLens is a trajectory reviewer that scores coding agents.",
    ]
    others = [
        "We compare with TraceLens and two trace viewers on 500 runs.",
        "We build on TraceLens to review longer trajectories.",
        "Existing reviewers such as TraceLens score whole runs only.",
        "We release the TraceLens and SWE-Gym distilled trajectories.",
        "We introduce TraceLens 2, which reviews multi-agent runs.",
        "We introduce TraceLens-Pro, a faster reviewer.",
        "Abstract Agent reviews matter; TraceLens scores them.",
    ]
    assert [presents_as_own(t, title) for t in own] == [True] * len(own)
    assert [presents_as_own(t, title) for t in others] == [False] * len(others)
    # A title that coins no name gives nothing to present.
    assert not presents_as_own("We introduce Trajectory Reviews.", "Trajectory Reviews for Agents")


def test_a_papers_own_abstract_does_not_name_another_paper_of_its_name(
    store: Store,
) -> None:
    store_with_papers(store)
    store.save_papers(
        [Paper("2607.06624", title="TraceLens: Reviewing the Trajectories of Coding Agents")],
        "2025-01-01T00:00:00Z",
    )
    own = (
        "Coding agents pass benchmarks by luck. We introduce TraceLens, a framework for "
        "process-level review of agent trajectories, and find blind retries in most runs."
    )
    cited = (
        "Coding agents pass benchmarks by luck. Compared with TraceLens, our reviewer finds "
        "blind retries in most runs."
    )

    def probability(text: str, **options: object) -> float:
        found = {m.arxiv_id: m.probability for m in score_titles(text, store, **options)}  # type: ignore[arg-type]
        return found.get("2607.06624", 0.0)

    # A paper's own abstract (its paper excluded from the links) presents its own TraceLens.
    assert probability(own, exclude=("2605.12925",)) <= 0.05
    # The same abstract citing the stored TraceLens still names it.
    assert probability(cited, exclude=("2605.12925",)) >= 0.8
    # A blog post by the authors announcing their TraceLens names the stored paper.
    assert probability(own) >= 0.8


def test_a_papers_own_abstract_uses_a_plain_title_as_its_topic_not_as_a_citation(
    store: Store,
) -> None:
    store_with_papers(store)
    store.save_papers(
        [
            Paper("2601.00011", title="Rational Curves on Calabi-Yau Threefolds"),
            Paper(
                "2601.00012",
                title="Native Sparse Attention: Hardware-Aligned and Natively Trainable "
                "Sparse Attention",
            ),
        ],
        "2025-01-01T00:00:00Z",
    )

    def probability(text: str, arxiv_id: str, **options: object) -> float:
        found = {m.arxiv_id: m.probability for m in score_titles(text, store, **options)}  # type: ignore[arg-type]
        return found.get(arxiv_id, 0.0)

    topic = (
        "We count holomorphic rational curves in a Calabi-Yau threefold with Wilson lines "
        "and compare the counts with the mirror prediction."
    )
    own = ("2605.00001",)  # the paper the abstract belongs to
    # In a paper's own abstract the plain words are its subject, not a citation...
    assert probability(topic, "2601.00011", exclude=own) <= 0.05
    # ...while the same sentence elsewhere is left to the model.
    assert probability(topic, "2601.00011") > 0.05
    # An abstract that quotes the title, or writes it whole, still names the paper.
    quoted = 'Unlike "Rational Curves on Calabi-Yau Threefolds", we count them with Wilson lines.'
    assert probability(quoted, "2601.00011", exclude=own) >= 0.5
    whole = "We extend Rational Curves on Calabi-Yau Threefolds to manifolds with Wilson lines."
    assert probability(whole, "2601.00011", exclude=own) >= 0.5
    # A title's name before its colon, written as the title writes it, is a name.
    named = "We port Native Sparse Attention to new hardware and halve its cost on long inputs."
    assert probability(named, "2601.00012", exclude=own) >= 0.5


def test_a_name_a_title_is_about_is_not_the_title(store: Store) -> None:
    weight = title_weights(store_with_papers(store))
    title = "Scientific Discovery with the James Webb Space Telescope"
    plain = dict.fromkeys(
        ("exact", "named", "whole", "partial", "quoted", "own_line", "after_colon"), 0.0
    )

    def subject_only(text: str, **features: float) -> bool:
        tokens = tokenize(text)
        own = set(stems_of_title(title))
        found = [i for i, s in enumerate(tokens.stems) if s in own and weight(s) > 0.5]
        return names_its_subject(
            tokens, found[0], found[-1] + 1, title, weight, {**plain, **features}
        )

    # The telescope, named as a telescope: the paper about it is not named.
    assert subject_only("We hunt dark matter using the James Webb Space Telescope (@NASAWebb)")
    # The title's other words are there: a title cited in prose, or in Title Case.
    assert not subject_only("our paper on scientific discovery with the James Webb Space Telescope")
    assert not subject_only("see Scientific Discovery with the James Webb Space Telescope here")
    # Synonyms in the capitalised run: a spun title, not a name alone.
    assert not subject_only("see Scholarly Finding with the James Webb Space Telescope here")
    # Standing as a title: quoted.
    assert not subject_only("the James Webb Space Telescope", quoted=1.0)


def test_a_title_inside_a_longer_titled_title_is_not_the_paper_named(store: Store) -> None:
    store_with_papers(store)
    title = "Monocular Depth Estimation with Transformers"
    # Quoted whole, it is named; inside a longer quoted title, that other title is.
    assert linked(f"Our new paper “{title}” is out", store) == ["2501.00001"]
    longer = f"{title} for Underwater Sonar and Lidar Fusion"
    assert "2501.00001" not in linked(f"Our new paper “{longer}” is out", store)
    assert "2501.00001" not in linked(f'Our new paper "{longer}" is out', store)

    weight = title_weights(store)

    def inside(text: str) -> bool:
        start = text.index("Monocular")
        return inside_a_longer_title(text, start, start + len(title), title, weight)

    assert inside(f'new: "{longer}" <LINK>')
    # A quote that closed before the title, a quoted sentence, a quote on another line.
    assert not inside(f'"Depth Pro" and {longer}')
    assert not inside(f'"We build on {title}. It works well on sonar and lidar fusion."')
    assert not inside(f'"Sonar and lidar fusion\n{title}"')
    # The title with a word or two changed between versions still explains the quote.
    assert not inside(f'"{title} Revisited"')


def test_a_title_inside_a_longer_title_a_post_writes_is_not_the_paper_named(store: Store) -> None:
    store_with_papers(store)
    title = "Monocular Depth Estimation with Transformers"
    longer = f"{title} for Underwater Sonar and Lidar Fusion"
    # After "New paper:" or opening a line, as a quote is read: the longer title is named.
    assert "2501.00001" not in linked(f"New paper: {longer} <LINK>", store)
    assert "2501.00001" not in linked(f"{longer}\n\nWe show how it works. <LINK>", store)
    # The title itself, though the line runs on into its authors, a link or a remark.
    for text in (
        f"New paper: {title}, with @alice.bsky.social and Bob Smith <LINK>",
        f"Our latest preprint: {title} w/ Carol Jones",
        f"{title} (accepted at Underwater Robotics 2025) <LINK>",
        f"New paper: {title} 🎉 Sonar next",
        f"Preprint of our new paper: Alice Smith, Bob Jones, Carol Lee: {title}.\n<LINK>",
        # A word misspelt makes the title no longer: it is not judged as another one.
        "Paper of the day: Monocular Depth Estimation with Transfromers",
    ):
        assert linked(text, store) == ["2501.00001"], text

    weight = title_weights(store)

    def inside(text: str) -> bool:
        start = text.lower().index("monocular")
        return inside_a_longer_title(text, start, start + len(title), title, weight)

    assert inside(f"New preprint, out today: {longer}")
    # Not a title the post writes: in a sentence, after words that introduce nothing, or
    # lower-case prose after the colon.
    assert not inside(f"We extend {longer} here")
    assert not inside(f"Thoughts: {longer}")
    assert not inside(f"New paper: {title.lower()} for underwater sonar and lidar fusion")
