"""The linking harness's data: real papers, generated mentions, real texts that name no paper.

Shared by ``bench/linking_eval.py`` (which reports) and ``bench/fit_linker.py``
(which fits the linker's model), so both see the same cases and the same
split: every paper and every text belongs to ``dev`` or ``test`` by a hash of
its id, the model is fitted on ``dev`` only, and figures are reported on
``test``.

Built from ``../shared/fixtures``: the 11,022 papers of the Hugging Face
papers corpus (no authors), the arXiv API and ``.abs`` records (with
authors, for "Surname: short title"); negatives are every abstract of both
(linked against the library without that paper), paragraphs of the lab blog
feeds, and the texts of the recorded Bluesky records and seed posts.
"""

from __future__ import annotations

import json
import random
import re
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightnews.link import link_item, link_titles  # noqa: E402
from lightnews.model import Author, Item, Mention, Paper  # noqa: E402
from lightnews.normalize.arxiv_ids import parse_arxiv_id  # noqa: E402
from lightnews.sources.arxiv_abs import parse_abs  # noqa: E402
from lightnews.sources.arxiv_api import parse_api_feed  # noqa: E402
from lightnews.sources.feeds import parse_feed  # noqa: E402
from lightnews.store import SQLiteStore  # noqa: E402

SHARED = ROOT.parent / "shared" / "fixtures"

# Word-by-word substitutions of the kind article spinners make (our own table).
SYNONYMS = {
    "learning": ["studying", "training"],
    "large": ["giant", "big"],
    "language": ["linguistic"],
    "models": ["fashions", "mannequins"],
    "model": ["mannequin", "fashion"],
    "attention": ["consideration"],
    "better": ["higher"],
    "faster": ["sooner"],
    "research": ["analysis"],
    "image": ["picture"],
    "images": ["pictures"],
    "generation": ["era", "technology"],
    "generative": ["generating"],
    "video": ["movie"],
    "understanding": ["comprehension"],
    "problems": ["issues"],
    "problem": ["issue"],
    "through": ["via"],
    "via": ["through"],
    "efficient": ["environment friendly"],
    "efficiency": ["effectivity"],
    "training": ["coaching"],
    "data": ["knowledge"],
    "dataset": ["knowledge set"],
    "benchmark": ["yardstick"],
    "evaluation": ["analysis", "assessment"],
    "towards": ["in direction of"],
    "toward": ["in direction of"],
    "using": ["utilizing"],
    "improving": ["bettering"],
    "improve": ["enhance"],
    "improves": ["enhances"],
    "robust": ["sturdy"],
    "scaling": ["rising"],
    "multimodal": ["multi-modal"],
    "vision": ["imaginative and prescient"],
    "agents": ["brokers"],
    "agent": ["dealer"],
    "tasks": ["duties"],
    "task": ["activity"],
    "learn": ["study"],
    "new": ["novel"],
    "novel": ["new"],
    "method": ["methodology"],
    "approach": ["method"],
    "fast": ["quick"],
    "small": ["little"],
    "less": ["much less"],
    "pro": ["professional"],
    "policy": ["coverage"],
    "fine": ["tremendous"],
    "memory": ["reminiscence"],
    "knowledge": ["information"],
    "search": ["seek"],
    "theory": ["principle"],
    "best": ["finest"],
    "limitations": ["constraints"],
    "instructions": ["directions"],
    "follow": ["observe"],
    "text": ["textual content"],
    "control": ["management"],
    "decision": ["choice"],
    "preference": ["choice"],
    "optimization": ["optimisation"],
    "simple": ["easy"],
    "strong": ["sturdy"],
    "effective": ["efficient"],
    "diverse": ["various"],
    "high": ["excessive"],
    "quality": ["high quality"],
    "long": ["lengthy"],
    "short": ["brief"],
    "generalization": ["generalisation"],
}
#: Running text, a line of its own, a quote, a colon: the ways posts and articles cite.
TEMPLATES = [
    "At the conference our team presents {m}, which we are excited to share.",
    "In {m}, the authors study a question many of us have asked.",
    "We also liked {m} - worth a read.",
    "Another highlight of the week was {m}. It builds on earlier work.",
    "{m}",
    "Paper of the day: {m}",
    "The work {m} proposes a different take on an old problem.",
    'New preprint! "{m}" is out, with code.',
    "Reading list for the week:\n{m}\nMore soon.",
    "Thread on our ICLR paper {m} below.",
]
#: "Surname: short title" as notes, talk lists and posts write it.
REFERENCE_TEMPLATES = [
    "{s}: {t}",
    "- {s}: {t}",
    "Talks ICLR2025 {s}: {t} ICLR2025 Other: Another Paper Entirely",
    "NeurIPS 2024 {s}: {t}. We liked the ablations.",
    "{s} et al.: {t}",
]
ID_FORMS: list[Callable[[str, int], str]] = [
    lambda i, v: f"https://arxiv.org/abs/{i}",
    lambda i, v: f"https://arxiv.org/abs/{i}v{v}",
    lambda i, v: f"arxiv.org/pdf/{i}v{v}.pdf",
    lambda i, v: f"https://arxiv.org/html/{i}v{v}",
    lambda i, v: f"arXiv:{i}",
    lambda i, v: f"(arXiv:{i}v{v})",
    lambda i, v: f"https://huggingface.co/papers/{i}",
    lambda i, v: f"https://www.alphaxiv.org/abs/{i}",
    lambda i, v: f"https://doi.org/10.48550/arXiv.{i}",
    lambda i, v: f"http://export.arxiv.org/abs/{i}",
]
NOT_IDS = [
    "Version 2.13.0 is out with 1.5x speedups.",
    "We reached 0.9876 accuracy on 1000.0 hours of audio.",
    "Call 2345.67890 for tickets; doi:10.1145/3580305.3599344.",
    "Released on 2025.10.03 at 14.30 local time.",
    "See github.com/org/repo/releases/tag/2510.02375 for builds.",
    "Page https://example.org/2510.02375/ has nothing to do with arXiv.",
]


def split_of(key: str) -> str:
    """``dev`` or ``test``, by a stable hash of a paper's id or a text's key."""
    return "dev" if zlib.crc32(key.encode()) % 2 == 0 else "test"


@dataclass(slots=True)
class Case:
    """A text to link and what it names (``truth``; empty for a text naming no paper)."""

    kind: str  # the kind of mention, or ``negative:<where the text comes from>``
    key: str
    text: str
    truth: frozenset[str] = frozenset()
    exclude: str | None = None  # the paper the text belongs to (not in its library)
    published: str | None = None
    item_kind: str = "post"
    title: str = ""  # a heading the text stands under (linked as a title by itself)
    also_right: frozenset[str] = field(default_factory=frozenset)

    @property
    def split(self) -> str:
        return split_of(self.key)

    @property
    def negative(self) -> bool:
        return self.kind.startswith("negative:")


def _name_pattern(name: str) -> re.Pattern[str]:
    version = r"(?![\w-]|\.\d|\s+v?\d)"  # "Wan-Streamer v0.3" is not "Wan-Streamer"
    return re.compile(rf"(?<![\w.]){re.escape(name)}{version}")


def coined_name(title: str) -> str | None:
    """The name a title coins before its colon: a capital past its first letter or a
    digit ("AM-Thinking-v1", "VGGT", "Gemini 2.5"), at least three characters."""
    whole = " ".join(title.split())
    if ":" not in whole:
        return None
    name = whole.split(":", 1)[0].strip()
    coined = len(name) >= 3 and bool(re.search(r"[A-Z]", name[1:]) or re.search(r"\d", name))
    return name if coined else None


#: Days before a paper appeared from which a text using its name shows the name is older.
NAME_BEFORE_DAYS = 30


class Names:
    """Which coined names are a paper's own: no other title starts with the name, and no
    abstract written a month or more before the paper appeared used it ("SAGE" heads
    several titles; "BERT", "SAM", "Deep Research", "Gemini 2.5" were in use before the
    paper titled after them). Judged once per name, lazily."""

    def __init__(self, papers: dict[str, Paper]) -> None:
        self.papers = papers
        self.heads: dict[str, list[str]] = {}
        for paper in papers.values():
            name = coined_name(paper.title)
            if name:
                self.heads.setdefault(name, []).append(paper.arxiv_id)
        self.known: dict[str, bool] = {}

    def own(self, name: str, paper: Paper) -> bool:
        known = self.known.get(name)
        if known is None:
            known = len(self.heads.get(name, ())) <= 1 and not self._used_before(name, paper)
            self.known[name] = known
        return known

    def _used_before(self, name: str, paper: Paper) -> bool:
        if not paper.published:
            return False
        when = datetime.fromisoformat(paper.published[:10]) - timedelta(days=NAME_BEFORE_DAYS)
        cutoff = when.date().isoformat()
        pattern = _name_pattern(name)
        return any(
            other.published
            and other.published[:10] < cutoff
            and name in other.abstract
            and pattern.search(" ".join(other.abstract.split()))
            for other in self.papers.values()
        )


_NAMES: dict[int, Names] = {}


_PARENTHESES = re.compile(r"\s*\([^()]*\)")


def _words_pattern(name: str) -> re.Pattern[str]:
    """A coined name written in other case or with other separators ("Jina Embeddings v5
    Text" for "jina-embeddings-v5-text"), over :func:`_words` of a text; not followed by
    another version number."""
    return re.compile(rf"(?<=\s){re.escape(_words(name))}(?=\s)(?!\s+v?\d)")


def _words(text: str) -> str:
    """Lower-case words and numbers only: "OLMo-3" and "Olmo 3", "Big Bench" and "BIG-Bench"
    are the same title written two ways."""
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def names_paper(text: str, paper: Paper, papers: dict[str, Paper] | None = None) -> str | None:
    """How a text taken to name no paper names this one in so many words after all
    (``title``, ``name``, ``subtitle``), or None.

    Abstracts name other papers' models and methods by the names those papers
    coined ("teacher models AM-Thinking-v1, Qwen3 and DeepSeek-R1"; "Visual
    Geometry Grounded Transformer (VGGT)"): a link there is a real mention, not
    a false link. It does when the text holds the paper's whole title (in any
    case or spacing, or without its parenthesised abbreviations: "Atomic Layer
    Deposition/Etching Scientific Figures" for "... Deposition/Etching (ALD/E)
    Scientific Figures"), the coined name before its colon (:func:`coined_name`,
    also in other case or separators: "Jina Embeddings v5 Text"; not
    "Wan-Streamer v0.3" for "Wan-Streamer v0.2") when that name is the paper's
    own (:class:`Names`, when ``papers`` is given), or three or more Title-Case
    words after the colon as written. The same rule on both splits; ``bench/linking_eval.py``
    reports the count with and without it.
    """
    flat = " ".join(text.split())
    whole = " ".join(paper.title.split())
    words = f" {_words(flat)} "
    bare = _PARENTHESES.sub("", whole)  # "... Deposition/Etching (ALD/E) Scientific Figures"
    if (
        whole.lower() in flat.lower()
        or f" {_words(whole)} " in words
        or (bare != whole and len(bare.split()) >= 4 and f" {_words(bare)} " in words)
    ):
        return "title"
    if ":" not in whole:
        return None
    name = coined_name(whole)
    if name and (_name_pattern(name).search(flat) or _words_pattern(name).search(words)):
        if papers is None:
            return "name"
        names = _NAMES.get(id(papers))
        if names is None:
            names = _NAMES[id(papers)] = Names(papers)
        if names.own(name, paper):
            return "name"
    rest = whole.split(":", 1)[1].strip()
    capitals = [w for w in rest.split() if w[:1].isupper()]
    return "subtitle" if len(capitals) >= 3 and rest in flat else None


def is_right(case: Case, arxiv_id: str, papers: dict[str, Paper]) -> bool:
    """Whether linking ``case`` to ``arxiv_id`` is right (for a negative text: it names
    that paper in so many words, :func:`names_paper`)."""
    if arxiv_id in case.truth or arxiv_id in case.also_right:
        return True
    paper = papers.get(arxiv_id)
    return (
        case.negative
        and paper is not None
        and names_paper(case.text or case.title, paper, papers) is not None
    )


def load_corpus() -> dict[str, Paper]:
    """The real papers: Hugging Face corpus, arXiv API records and ``.abs`` records."""
    papers: dict[str, Paper] = {}
    for line in (SHARED / "corpus/hf-papers/hf-papers-11k.jsonl").open("rb"):
        record = orjson.loads(line)
        parsed = parse_arxiv_id(str(record.get("id", "")).rsplit("/", 1)[-1])
        if parsed and record.get("title"):
            papers[parsed.base] = Paper(
                parsed.base,
                title=" ".join(record["title"].split()),
                abstract=record.get("content_text") or "",
                categories=["cs.LG"],
                published=record.get("date_published"),
            )
    for path in sorted((SHARED / "arxiv/api-2026").glob("*.json")):
        body = json.loads(path.read_text())["body"].encode("latin-1")
        try:
            found, *_ = parse_api_feed(body)
        except Exception:
            continue
        papers.update((p.arxiv_id, p) for p in found)
    for path in sorted((SHARED / "arxiv/abs/ftp").rglob("*.abs")):
        try:
            paper = parse_abs(path.read_text(encoding="utf-8", errors="replace"))
        except Exception:
            continue
        papers[paper.arxiv_id] = paper
    # Keep one paper per title: the corpus has a few exact duplicates.
    by_title: dict[str, Paper] = {}
    for paper in papers.values():
        by_title.setdefault(paper.title.lower(), paper)
    return {p.arxiv_id: p for p in by_title.values()}


def held_out_ids(papers: dict[str, Paper], seed: int) -> set[str]:
    """A tenth of the papers, kept out of the library: any link to their mentions is wrong."""
    rng = random.Random(seed)
    return set(rng.sample(sorted(papers), len(papers) // 10))


def open_store(papers: dict[str, Paper], held_out: set[str], path: Path) -> SQLiteStore:
    """The library (every paper but the held-out ones); reused when ``path`` already holds
    exactly it (a file that holds more papers is rebuilt)."""
    wanted = [p for i, p in papers.items() if i not in held_out]
    store = SQLiteStore(path) if path.exists() else None
    if store is not None and store.paper_count() != len(wanted):
        # Another run or test wrote more papers into this file: links to them would be
        # counted false. Start again from the corpus.
        print(f"{path}: {store.paper_count()} papers, not the {len(wanted)} wanted; rebuilt")
        store.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        store = None
    if store is None:
        store = SQLiteStore(path)
        store.save_papers(wanted, "2026-01-01T00:00:00Z")
    return store


# -- rewriting titles ----------------------------------------------------------------------


def paraphrase(title: str, rng: random.Random) -> str:
    """A title as an article spinner rewrites it: synonyms, a subtitle dropped, a typo."""
    words = title.split()
    if ":" in title and rng.random() < 0.5:  # cited without its subtitle, or by it alone
        head, tail = title.split(":", 1)
        words = (head if len(head.split()) >= 3 else tail).split()
    out = []
    for word in words:
        core = re.sub(r"\W+$", "", word)
        options = SYNONYMS.get(core.lower())
        if options and rng.random() < 0.6:
            replacement = rng.choice(options)
            if core[:1].isupper():
                replacement = replacement[:1].upper() + replacement[1:]
            word = word.replace(core, replacement)
        out.append(word)
    if rng.random() < 0.3:
        out = _typo_word(out, rng)
    return " ".join(out)


def _typo_word(words: list[str], rng: random.Random) -> list[str]:
    long_words = [i for i, w in enumerate(words) if len(w) > 6 and w.isalpha()]
    if long_words:
        i = rng.choice(long_words)
        w = words[i]
        j = rng.randrange(1, len(w) - 2)
        words = [*words[:i], w[:j] + w[j + 1] + w[j] + w[j + 2 :], *words[i + 1 :]]
    return words


#: The abbreviations the issue names and a few more, the harness's own table (not the linker's).
_ABBREVIATED = [
    (re.compile(r"\bmultimodal large[\s-]+language[\s-]+models?\b", re.I), "MLLM"),
    (re.compile(r"\blarge[\s-]+language[\s-]+models?\b", re.I), "LLM"),
    (re.compile(r"\bretrieval[\s-]+augmented[\s-]+generation\b", re.I), "RAG"),
    (re.compile(r"\bmixture[\s-]+of[\s-]+experts?\b", re.I), "MoE"),
    (re.compile(r"\bvision[\s-]+language[\s-]+models?\b", re.I), "VLM"),
    (re.compile(r"\breinforcement[\s-]+learning\b", re.I), "RL"),
    (re.compile(r"\bchain[\s-]+of[\s-]+thought\b", re.I), "CoT"),
]


def abbreviate(title: str) -> str | None:
    """The title with a spelled-out phrase replaced by its abbreviation, if it has one."""
    for pattern, abbr in _ABBREVIATED:
        found = pattern.search(title)
        if found:
            plural = "s" if found[0].endswith("s") and abbr.endswith("M") else ""
            return pattern.sub(abbr + plural, title, count=1)
    return None


def short_title(title: str, rng: random.Random) -> str:
    if ":" in title and len(title.split(":")[0].split()) <= 5:
        return title.split(":")[0]
    words = title.split()
    return " ".join(words[: rng.randint(3, 6)])


def drop_words(title: str, rng: random.Random) -> str:
    """One or two words dropped from a title (never the first), as notes shorten."""
    words = title.split()
    for _ in range(rng.randint(1, 2)):
        if len(words) <= 3:
            break
        del words[rng.randrange(1, len(words))]
    return " ".join(words)


def misspell(surname: str, rng: random.Random) -> str:
    """A surname one or two letters off ("Noukhovich" for "Noukhovitch")."""
    letters = list(surname)
    for _ in range(1 if len(surname) < 8 else rng.randint(1, 2)):
        i = rng.randrange(1, len(letters) - 1)
        change = rng.choice(("drop", "swap", "double", "vowel"))
        if change == "drop":
            del letters[i]
        elif change == "swap" and i + 1 < len(letters):
            letters[i], letters[i + 1] = letters[i + 1], letters[i]
        elif change == "double":
            letters.insert(i, letters[i])
        else:
            letters[i] = rng.choice("aeiou")
    return "".join(letters)


def _surname(author: Author) -> str:
    return author.keyname or author.name.split()[-1]


# -- cases ---------------------------------------------------------------------------------


def positive_cases(
    papers: dict[str, Paper], held_out: set[str], n: int, rng: random.Random
) -> list[Case]:
    """Generated mentions of real papers, ``n`` per kind (one in five of an unstored paper)."""
    ids = sorted(papers)
    stored = [i for i in ids if i not in held_out]
    outside = sorted(held_out)
    cases: list[Case] = []

    def add(kind: str, number: int, text: str, arxiv_id: str) -> None:
        truth = frozenset() if arxiv_id in held_out else frozenset([arxiv_id])
        cases.append(Case(kind, f"{kind}:{number}:{arxiv_id}", text, truth))

    for number in range(n):
        arxiv_id = rng.choice(stored)
        form = rng.choice(ID_FORMS)
        add("identifier", number, rng.choice(TEMPLATES).format(m=form(arxiv_id, 2)), arxiv_id)
    cases += [Case("identifier", f"not-id:{i}", t) for i, t in enumerate(NOT_IDS)]
    abbreviable = [i for i in ids if abbreviate(papers[i].title)]
    for kind in ("exact-title", "paraphrased-title", "abbreviated-title"):
        for number in range(n):
            pool = stored if number % 5 else outside
            if kind == "abbreviated-title":
                pool = [i for i in abbreviable if (i in held_out) == (number % 5 == 0)]
            arxiv_id = rng.choice(pool)
            title = papers[arxiv_id].title
            if kind == "paraphrased-title":
                title = paraphrase(title, rng)
            elif kind == "abbreviated-title":
                title = abbreviate(title) or title
                if rng.random() < 0.4:
                    title = drop_words(title, rng)
            add(kind, number, rng.choice(TEMPLATES).format(m=title), arxiv_id)
    for number in range(n):  # an article or note titled by the paper's (rewritten) title
        arxiv_id = rng.choice(stored if number % 5 else outside)
        heading = paraphrase(papers[arxiv_id].title, rng)
        truth = frozenset() if arxiv_id in held_out else frozenset([arxiv_id])
        cases.append(
            Case(
                "heading",
                f"heading:{number}:{arxiv_id}",
                "Our notes on the paper follow.",
                truth,
                item_kind="article",
                title=heading,
            )
        )
    with_authors = [i for i in ids if papers[i].authors and len(papers[i].title.split()) >= 4]
    several = [i for i in with_authors if len(papers[i].authors) >= 3]
    long_names = [
        i for i in with_authors if any(len(_surname(a)) >= 6 for a in papers[i].authors[:1])
    ]
    forms = ("first", "senior", "any", "misspelt", "dropped", "abbreviated")
    for number in range(n):
        form = forms[number % len(forms)]
        pool = {"senior": several, "misspelt": long_names}.get(form, with_authors)
        if form == "abbreviated":
            pool = [i for i in with_authors if abbreviate(papers[i].title)] or with_authors
        arxiv_id = rng.choice(pool)
        paper = papers[arxiv_id]
        author = {
            "senior": paper.authors[-1],
            "any": rng.choice(paper.authors),
        }.get(form, paper.authors[0])
        surname = _surname(author)
        if form == "misspelt":
            surname = misspell(surname, rng)
        title = abbreviate(paper.title) or paper.title if form == "abbreviated" else paper.title
        short = short_title(title, rng)
        if form == "dropped":
            short = drop_words(paper.title, rng)
            short = " ".join(short.split()[: rng.randint(4, 7)])
        text = rng.choice(REFERENCE_TEMPLATES).format(s=surname, t=short)
        add(f"surname-{form}", number, text, arxiv_id)
    for case in cases:
        if case.kind.startswith("surname"):
            case.item_kind = "note"
    return cases


def absent_title_cases(papers: dict[str, Paper], held_out: set[str], seed: int) -> list[Case]:
    """The whole title of every held-out paper, written as texts write a title
    (``TEMPLATES``): the paper is not in the library, so any link is false unless the
    title names a stored paper in so many words (its coined name, :func:`names_paper`).

    The hardest texts the title route meets: a stored paper whose title shares most
    of the words ("... Few-shot Multilingual Learners" beside "... Few-Shot
    Learners", the next part of a series, a companion paper) is found in order,
    rare and dense. Every held-out paper is taken, not the near ones only, so the
    false links per 1,000 are those of titles at large.
    """
    rng = random.Random(seed)
    return [
        Case(
            "negative:absent-title",
            f"absent-title:{arxiv_id}",
            rng.choice(TEMPLATES).format(m=papers[arxiv_id].title),
            published=papers[arxiv_id].published,
        )
        for arxiv_id in sorted(held_out)
    ]


def _paragraphs(text: str) -> Iterator[str]:
    for part in re.split(r"\n+", text):
        part = part.strip()
        if len(part.split()) >= 8:
            yield part


def negative_cases(papers: dict[str, Paper]) -> list[Case]:
    """Real texts that name no stored paper (as far as anyone wrote them to)."""
    cases: list[Case] = []
    for arxiv_id, paper in sorted(papers.items()):
        if paper.abstract and len(paper.abstract.split()) >= 8:
            where = "hf-abstract" if paper.categories == ["cs.LG"] else "arxiv-abstract"
            cases.append(
                Case(
                    f"negative:{where}",
                    f"abstract:{arxiv_id}",
                    paper.abstract,
                    exclude=arxiv_id,
                    published=paper.published,
                    item_kind="daily",
                )
            )
    for path in sorted((SHARED / "feeds/lab-blogs").glob("*.xml")):
        try:
            batch = parse_feed(path.read_bytes())
        except Exception:
            continue
        for item in batch.items:
            if item.title:
                cases.append(
                    Case(
                        "negative:lab-blog-title",
                        f"blog-title:{item.key}",
                        "",
                        published=item.published,
                        item_kind="article",
                        title=item.title,
                    )
                )
            for number, paragraph in enumerate(_paragraphs(item.text or "")):
                cases.append(
                    Case(
                        "negative:lab-blog",
                        f"blog:{item.key}:{number}",
                        paragraph,
                        published=item.published,
                        item_kind="article",
                    )
                )
    for path in sorted((SHARED / "bluesky").rglob("*.json")):
        for number, text in enumerate(_json_texts(json.loads(path.read_text()))):
            cases.append(Case("negative:bluesky", f"bsky:{path.name}:{number}", text))
    feed = SHARED / "seed-pages/bluesky/getAuthorFeed.mkirchhof.json"
    if feed.exists():
        document = json.loads(feed.read_text())
        named = frozenset(re.findall(r"arxiv\.org/(?:abs|pdf)/(\d{4}\.\d{4,5})", feed.read_text()))
        seen: set[str] = set()
        for number, entry in enumerate(document.get("feed", [])):
            record = entry.get("post", {}).get("record", {})
            text = record.get("text") or ""
            if text and text not in seen:
                seen.add(text)
                cases.append(
                    Case(
                        "negative:seed-posts",
                        f"seed:{number}",
                        text,
                        published=record.get("createdAt"),
                        also_right=named,
                    )
                )
    return cases


def _json_texts(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in ("text", "description") and isinstance(inner, str) and inner.strip():
                yield inner
            else:
                yield from _json_texts(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _json_texts(inner)


def as_item(case: Case) -> Item:
    """The case as the item a source would have parsed, identifiers already read."""
    item = Item(
        key=case.key,
        kind=case.item_kind,
        title=case.title,
        text=case.text,
        published=case.published,
        paper_id=case.exclude,
    )
    item.mentions = link_item(item)
    return item


def link_case(case: Case, store: SQLiteStore, bar: float) -> list[Mention]:
    """What the linker (the one ingestion runs) asserts for the case's text."""
    item = as_item(case)
    link_titles([item], store, bar=bar)
    return item.mentions
