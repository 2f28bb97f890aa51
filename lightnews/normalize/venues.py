"""Where a paper was accepted or published, read from what arXiv and posts say of it.

Users of every paper reader ask for it: a preprint that became an ICLR paper
should say so on its story, in the feed and in its BibTeX. arXiv has no venue
field; authors write it in three places, and these pure rules read each:

* ``journal-ref``: a publication reference ("Phys.Rev.D76:013009,2007"): the
  journal is the text before the first volume number or year;
* ``comments``: "Accepted at ICLR 2025", "NeurIPS 2024 (spotlight)", "to
  appear in J. Fluid Mech.", "published in ...", "..., in press": a phrase
  that says the paper is accepted or out, followed by the venue (submissions,
  talks and reviews are not acceptance and are ignored);
* a DOI of proceedings whose prefix names the venue (the ACL Anthology's
  ``10.18653/v1/2020.acl-main.1``, AAAI's ``10.1609/aaai.v34i04``, IJCAI's
  ``10.24963/ijcai.2020/1``, IEEE's ``10.1109/CVPR.2016.90``);
* any text saying so beside an OpenReview forum link (a post or note): the
  same phrases as the comments.

The rules were tuned on a labelled dev split of real ``.abs`` records and are
measured on a held-out split by ``bench/venue_eval.py`` (docs/benchmarks.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lightnews.normalize.tex import tex_to_unicode

__all__ = [
    "Venue",
    "venue_from_comments",
    "venue_from_doi",
    "venue_from_journal_ref",
    "venue_from_text",
    "venue_key",
    "venue_of",
]

#: Conferences known by their acronym alone ("NeurIPS 2024" needs no "accepted at").
CONFERENCES = (
    "NeurIPS",
    "NIPS",
    "ICML",
    "ICLR",
    "CVPR",
    "ICCV",
    "ECCV",
    "ACL",
    "EMNLP",
    "NAACL",
    "EACL",
    "AACL",
    "COLING",
    "AAAI",
    "IJCAI",
    "KDD",
    "SIGIR",
    "WWW",
    "WSDM",
    "CIKM",
    "COLT",
    "AISTATS",
    "UAI",
    "CoRL",
    "RSS",
    "ICRA",
    "IROS",
    "MICCAI",
    "INTERSPEECH",
    "Interspeech",
    "ICASSP",
    "WACV",
    "BMVC",
    "CHI",
    "UIST",
    "FAccT",
    "LREC",
    "CoNLL",
    "ECML",
    "ECML-PKDD",
    "ICDM",
    "SDM",
    "ALT",
    "STOC",
    "FOCS",
    "SODA",
    "ICDE",
    "VLDB",
    "SIGMOD",
    "MLSys",
    "SIGGRAPH",
    "3DV",
    "ACM MM",
    "TMLR",
    "JMLR",
)
_JOURNAL_ONLY = {"TMLR", "JMLR"}
_CONF_RE = re.compile(
    r"(?<![\w-])(?P<name>"
    + "|".join(re.escape(c) for c in sorted(CONFERENCES, key=len, reverse=True))
    + r")(?:[\s'’]*(?P<year>(?:19|20)\d\d|'?\d\d))?(?![\w-])"
)
_STYLE = re.compile(r"\((spotlight|oral|poster|highlight|best paper[^)]*)\)", re.I)

#: Phrases that say a paper is out or accepted, then the venue (group ``rest``).
_ACCEPT = re.compile(
    r"(?P<verb>accepted(?:\s+(?:for|as)\s+(?:publication|presentation|an?\s+\w+(?:\s+\w+)?"
    r"(?:\s+paper)?|(?:a\s+)?(?:full|short|long|regular|main[- ]track|oral|poster|spotlight)"
    r"(?:\s+paper)?))?|to\s+appear|will\s+appear|forthcoming|to\s+be\s+published|"
    r"(?:has\s+been\s+|was\s+|is\s+|final\s+version\s+|also\s+)?(?:published|appeared|appears)"
    r"|in\s+press\s+(?:in|at))"
    r"\s+(?:(?P<by>in|at|by|to|on|for|with)\s+)?(?P<rest>.+)",
    re.I,
)
_NOT_ACCEPTED = re.compile(
    r"\b(submitted|submission|under\s+review|rejected|withdrawn|preprint\s+of|invited\s+talk|"
    r"talk\s+(?:given|presented|at)|presented\s+at|poster\s+presented|"
    r"(?:full|extended|long|longer|journal)\s+version\s+of)\b",
    re.I,
)
_IN_PRESS = re.compile(r"^(?P<rest>[^;:]+?)[,.]?\s*(?:\d{4},?\s*)?\(?\bin\s+press\b", re.I)
_PROCEEDINGS = re.compile(
    r"(?:^|,\s*|\b(?:for|in|to)\s+)(?:the\s+)?(?P<rest>proceedings?\b(?!\s*:)\s*(?:of\s+)?.+)", re.I
)
#: A venue named before the word that says so: "Phys. Rev. B, accepted", "A&A accepted".
_NAME_FIRST = re.compile(
    r"(?:^|[,;]\s*|\.\s+)(?P<name>[A-Z][^,;]*?)\s*,?\s*(?:\(?(?:accepted|in\s+press)\)?)"
    r"(?:\s+for\s+publication)?\s*(?:$|[,;.\-]|\s-)"
)
#: Counts that say nothing of a venue ("14 pages, 3 figures, 2 tables,").
_COUNTS = re.compile(
    r"\b\d+\s*(?:[A-Za-z-]+\s+)?(?:pages?|pp|figures?|figs?|tables?|plots?|refs?|references)"
    r"\b\.?\s*(?:[,;]\s*|\.\s+|$)",
    re.I,
)
#: Where a venue's name ends in a comment.
_END = re.compile(
    r"\s*(?:;|!|\?|\(|\)|\[|,\s|\s-\s|\s+--?\s|\s+(?:as|after|but|where|which|see|"
    r"plus|including|some|for\s+high|held|to\s+be|on\s+(?:\w+\s+)?\d)\s|\s+in\s+(?=[A-Z][a-z]+,)|"
    r"\s+(?=(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\s+\d)|$)"
    r"|\.\s+(?=[A-Z][a-z]{3,}\b(?!\.)|\d|v\d|[a-z])|\.$",
)
#: Words that continue a journal's name after an abbreviation's period.
_NAME_WORDS = re.compile(
    r"(?:journal|letters?|reviews?|review|physics|mathematics|math|society|proceedings|"
    r"transactions|annals|communications|reports?|research|science|sciences|series|"
    r"quarterly|bulletin|notices|studies|theory|statistics|computing|systems|analysis|"
    r"geometry|topology|algebra|chemistry|astronomy|astrophysics|matter|fluids|optics|"
    r"materials|education|engineering|information|applications?|methods|advances|"
    r"international|american|european|royal|national|nuclear|modern|mathematical|"
    r"physical|applied|theoretical|computational|general|pure|advanced|monthly|new)\b",
    re.I,
)
#: Where a reference's name may end: a volume, number or page marker, or a number.
_VOLUME = re.compile(
    r"\b(?:vol|volume|no|nr|pp|p|v(?=\.\s*\d))\b\.?|(?<![A-Za-z])p(?=\d)|\d+(?:st|nd|rd|th)?",
    re.I,
)
#: The words of a list in a name go on after a comma: "Acoustics, Speech, and Signal
#: Processing", "Testing, Verification and Validation".
_LIST_GOES_ON = re.compile(r"(?:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*,?\s+)?(?:and|&)\s+[A-Z]")
#: An abbreviation whose period ends no name ("Proc. of the ...", "Int. Conf. on ...").
_ABBREVIATION_END = re.compile(r"\b(?:Proc|Conf|Int|Intl|Symp|Trans|Natl|Ann)$")
#: A month cut short ("Jan. 2007"): its period ends no name.
_MONTH_END = re.compile(r"\b(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)$")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_DOI_VENUES = (
    (
        re.compile(
            r"^10\.18653/v1/(?P<year>\d{4})\.(?P<name>[a-z]+)(?:-(?P<track>[a-z]+))?\.", re.I
        ),
        "anthology",
    ),
    (re.compile(r"^10\.1609/aaai\.v\d+i\d+", re.I), "AAAI"),
    (re.compile(r"^10\.24963/ijcai\.(?P<year>\d{4})/", re.I), "IJCAI"),
    (
        re.compile(
            r"^10\.1109/(?P<name>CVPR|ICCV|WACV|ICRA|IROS|ICASSP|ICDM|ICDE)"
            r"(?:W)?\.?(?P<year>\d{4})",
            re.I,
        ),
        "ieee",
    ),
)
_ANTHOLOGY = {
    "acl": "ACL",
    "emnlp": "EMNLP",
    "naacl": "NAACL",
    "eacl": "EACL",
    "coling": "COLING",
    "conll": "CoNLL",
    "aacl": "AACL",
    "findings": "Findings",
    "lrec": "LREC",
    "tacl": "TACL",
}


@dataclass(frozen=True, slots=True)
class Venue:
    """A venue a paper was accepted at or published in.

    ``name`` is as written ("ICLR 2025", "Phys. Rev. D"); ``kind`` is
    ``conference`` (proceedings, workshops too) or ``journal``; ``status``
    ``published`` (a reference or DOI says so) or ``accepted``; ``workshop`` is
    True for a workshop rather than the main track; ``note`` the presentation
    ("spotlight", "oral"); ``source`` where it was read (``journal-ref``,
    ``comments``, ``doi``, ``openreview``).
    """

    name: str
    year: int | None = None
    kind: str = "journal"
    status: str = "accepted"
    workshop: bool = False
    note: str = ""
    source: str = "comments"

    @property
    def label(self) -> str:
        """The badge: "ICLR 2025 (spotlight)", "Phys. Rev. D 2007", "… workshop"."""
        text = self.name
        if self.year and str(self.year) not in text:
            text += f" {self.year}"
        if self.note:
            text += f" ({self.note})"
        return text

    @property
    def reason(self) -> str:
        """The feed's reason: "accepted at ICLR 2025", "published in Phys. Rev. D 2007"."""
        if self.status == "published":
            return f"published in {self.label}"
        return (
            f"accepted at {self.label}"
            if self.kind == "conference"
            else (f"accepted in {self.label}")
        )

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "year": self.year,
            "kind": self.kind,
            "status": self.status,
            "workshop": self.workshop,
            "note": self.note,
            "source": self.source,
            "label": self.label,
        }


def venue_key(name: str) -> str:
    """A venue name compared loosely: letters and digits, lower case, no leading "the"."""
    key = re.sub(r"[^a-z0-9]", "", tex_to_unicode(name).lower())
    return key.removeprefix("the")


def _clean(text: str) -> str:
    """TeX markup and quotes out of a venue's name."""
    text = re.sub(r"\\(?:em|it|bf|sl|sc|rm|textit|emph|textbf)\b\s*", "", text)
    text = tex_to_unicode(text).replace("``", "").replace("''", "").replace("`", "")
    return " ".join(text.strip(" \t,.;:-'\"`“”‘’").split())


def _kind(name: str) -> tuple[str, bool]:
    """``(kind, workshop)`` of a venue's name."""
    lowered = name.lower()
    workshop = "workshop" in lowered
    match = _CONF_RE.search(name)
    if match and match["name"] in _JOURNAL_ONLY:
        return "journal", False
    if (
        workshop
        or match
        or re.search(
            r"\b(proceedings|proc\.|conference|conf\.|symposium|meeting|congress|colloquium|"
            r"school|summit)\b",
            lowered,
        )
    ):
        return "conference", workshop
    return "journal", False


def _year(text: str) -> int | None:
    found = _YEAR.findall(text)
    return int(found[-1]) if found else None


def venue_from_journal_ref(journal_ref: str | None) -> Venue | None:
    """The journal or proceedings of a publication reference: the text before its numbers."""
    text = _clean(journal_ref or "")
    if not text:
        return None
    text = re.sub(r"^(?:in|published in|appeared in)\s+", "", text, flags=re.I)
    name = _clean(_journal_name(text))
    if len(re.sub(r"[^A-Za-z]", "", name)) < 2:
        return None
    conference = _CONF_RE.search(text)
    if conference and conference["name"] == name.split()[0] and conference["year"]:
        name = f"{conference['name']} {_full_year(conference['year'])}"
    kind, workshop = _kind(name)
    return Venue(name, _year(text), kind, "published", workshop, "", "journal-ref")


def _journal_name(text: str) -> str:
    """A reference's journal: up to its volume, pages or year, or a parenthesis or ";".

    A number followed by a word ("Proceedings of the 4th Annual ...", "Proc. 2005
    IEEE ...") is part of the name; one followed by ":", "," or another number is
    the volume.
    """
    for match in _VOLUME.finditer(text):
        following = text[match.end() :]
        if (
            match[0][0].isdigit()
            and re.match(r"[\s'-]+(?:[A-Za-z][a-z]|[A-Z]{2})", following)
            and not re.match(r"[\s'-]+(?:no|vol|pp|issue|number)\b", following, re.I)
        ):
            continue
        text = text[: match.start()]
        break
    text = re.split(r"\s*[(;]|,?\s+(?:published|edited|eds?)\b", text, flags=re.I)[0]
    return text.rstrip(" ,.:-")


def _full_year(year: str) -> str:
    digits = year.lstrip("'’")
    return digits if len(digits) == 4 else f"20{digits}"


def _name_until_end(rest: str) -> str:
    """The venue's name at the start of ``rest``: up to where the phrase ends."""
    rest = re.sub(r"^(?:the\s+|publication\s+(?:in|at)\s+)", "", rest.strip(), flags=re.I)
    position = 0
    while True:
        end = _END.search(rest, position)
        if end is None:
            return rest
        if end.end() < len(rest) and _inside_quote(rest, end.start()):
            position = max(end.end(), end.start() + 1)  # `Traces in Geometry, ...'
            continue
        if end.group().startswith(".") and end.end() < len(rest):
            following = rest[end.end() :]
            if (
                _NAME_WORDS.match(following)
                or _MONTH_END.search(rest[: end.start()])
                or _ABBREVIATION_END.search(rest[: end.start()])
                or re.match(r"[A-Z]\b", following)
                or re.match(r"[A-Z][a-z]{0,4}(?:\.|\s*$|\s+[A-Z])", following)
            ):
                position = end.end()  # "Phys. Rev. D", "J. Math. Phys.": the name goes on
                continue
        if end.group().startswith(", ") and (
            re.match(r",\s+(?:Ser|Vol|Part)\b", rest[end.start() :])
            or _LIST_GOES_ON.match(rest[end.end() :])
        ):
            position = end.end()  # "Software Testing, Verification, and Validation"
            continue
        return rest[: end.start()]


def _inside_quote(text: str, position: int) -> bool:
    """Whether ``position`` is inside a quoted title that is closed later in ``text``."""
    before, after = text[:position], text[position:]
    if before.count('"') % 2 == 1 and '"' in after:
        return True
    opened = max(before.rfind("`"), before.rfind("“"))
    closed = max(before.rfind("'"), before.rfind("”"))
    return opened > closed and bool(re.search(r"['”]", after))


def _from_phrase(comment: str) -> Venue | None:
    match = _ACCEPT.search(comment)
    if match is None:
        match = _PROCEEDINGS.search(comment)
        if match is None:
            return None
        verb = "proceedings"
    else:
        verb = match["verb"].lower()
    if (
        verb != "proceedings"
        and (match.groupdict().get("by") or "").lower() == "by"
        and (re.search(r"publish|appear", verb))
    ):
        return None  # "to be published by Springer": a publisher, not a venue
    rest = re.sub(
        r"^(?:the\s+)?(?:published\s+)?(?:version|form)\s+(?:in|at|of)\s+",
        "",
        match["rest"],
        flags=re.I,
    )
    # "as a conference paper at ICLR 2024", "the Industry Track of the ...": the venue after.
    rest = re.sub(
        r"^(?:(?:as\s+an?|in:|(?:an?\s+)?special\s+issue\s+(?:of|in)|"
        r"(?:the\s+)?[\w-]+\s+track\s+(?:of|at)(?:\s+the)?|(?:an?\s+)?(?:conference|"
        r"workshop|journal|full|short|long|regular)\s+(?:paper|track)\s+(?:at|in|of))\s+)+",
        "",
        rest,
        flags=re.I,
    )
    name = _clean(_name_until_end(rest))
    name = re.sub(r"\s+\(?main\s+(?:conference|track)\)?$", "", name, flags=re.I)
    if not _acceptable(name):
        return None
    status = (
        "published"
        if re.search(r"publish|appear", verb)
        and not re.search(r"to\s+appear|will\s+appear|to\s+be\s+published", verb)
        else "accepted"
    )
    conference = _CONF_RE.match(name)
    if conference and conference["year"]:
        name = f"{conference['name']} {_full_year(conference['year'])}" + name[conference.end() :]
    kind, workshop = _kind(name)
    style = _STYLE.search(comment)
    year = _year(name) or (
        int(_full_year(conference["year"])) if conference and conference["year"] else None
    )
    return Venue(name, year, kind, status, workshop, style[1].lower() if style else "", "comments")


def venue_from_comments(comments: str | None, source: str = "comments") -> Venue | None:
    """A venue the comments say the paper is accepted at or published in, else None.

    Each clause is read on its own ("14 pages; accepted at ICML 2024; code at
    ..."); a clause that speaks of a submission, a review or a talk says
    nothing about acceptance.
    """
    text = " ".join(tex_to_unicode(comments or "").split())
    text = re.sub(
        r"(?:\b(?:at|from|on)\s+)?(?:https?://|www\.|[\w.-]+\.(?:net|org|com|io)/)\S*", "", text
    )
    text = _COUNTS.sub("", text).strip()
    if not text:
        return None
    for clause in _clauses(text):
        if _NOT_ACCEPTED.search(clause) and not re.search(r"\baccepted\b", clause, re.I):
            continue
        found = (
            _name_first(clause)
            or _from_phrase(clause)
            or _in_press(clause)
            or _bare_conference(clause)
            or _bare_venue(clause)
        )
        if found is not None:
            return Venue(
                found.name, found.year, found.kind, found.status, found.workshop, found.note, source
            )
    return None


def _acceptable(name: str) -> bool:
    """Whether a name read after a phrase can be a venue ("publication", "version" cannot)."""
    if len(re.sub(r"[^A-Za-z]", "", name)) < 2:
        return False
    if name.lower() in ("journal", "a journal", "the journal", "proceedings", "the"):
        return False
    first = name.split()[0].lower().strip(".,:")
    return first not in {
        "publication",
        "print",
        "press",
        "a",
        "an",
        "this",
        "version",
        "paper",
        "article",
        "form",
        "erratum",
        "our",
        "some",
        "any",
        "prof",
        "dr",
        "its",
        "final",
        "revised",
        "it",
        "here",
        "elsewhere",
        "preparation",
    }


def _name_first(clause: str) -> Venue | None:
    match = _NAME_FIRST.search(clause.strip())
    if match is None:
        return None
    name = _clean(match["name"])
    if not _acceptable(name) or re.search(
        r"\b(?:paper|version|manuscript|article|work|this|final|was|has|been|is)\b", name, re.I
    ):
        return None
    kind, workshop = _kind(name)
    return Venue(name, _year(clause), kind, "accepted", workshop, "", "comments")


def _clauses(text: str) -> list[str]:
    """``text`` cut at ";" and at sentence ends, not at an abbreviation ("J. Fluid Mech.")."""
    clauses: list[str] = []
    for part in text.split(";"):
        start = 0
        for end in re.finditer(r"\.\s+(?=[A-Z][a-z]+\s)", part):
            following = part[end.end() :]
            if (
                _NAME_WORDS.match(following)
                or re.match(r"[A-Z][a-z]{0,4}\.", following)
                or re.search(r"\b[A-Z][a-z]{0,4}$", part[: end.start()])
            ):
                continue
            clauses.append(part[start : end.start()])
            start = end.end()
        clauses.append(part[start:])
    return [c for c in clauses if c.strip()]


def _in_press(clause: str) -> Venue | None:
    match = _IN_PRESS.search(clause.strip())
    if match is None:
        return None
    name = _clean(re.split(r",\s*|\.\s+", match["rest"])[-1])
    if not _acceptable(name) or re.search(r"\d+\s*pages?|figures?", name):
        return None
    kind, workshop = _kind(name)
    return Venue(name, _year(clause), kind, "accepted", workshop, "", "comments")


def _bare_conference(clause: str) -> Venue | None:
    """ "NeurIPS 2024 (spotlight)", "ICML 2023 Workshop on ...": a known acronym with a year."""
    match = _CONF_RE.search(clause)
    if match is None or not match["year"]:
        return None
    year = _full_year(match["year"])
    after = clause[match.end() :]
    workshop_match = re.match(r"\s*(?:workshop\b.*|[\w\s-]{0,40}workshop\b)", after, re.I)
    before_workshop = re.search(r"workshop\b[^.;]*$", clause[: match.start()], re.I)
    name = f"{match['name']} {year}"
    if re.search(r"\bfindings\s+of\s+(?:the\s+)?$", clause[: match.start()], re.I):
        name = f"Findings of {name}"  # the Findings volume, not the main conference
    workshop = bool(workshop_match or before_workshop)
    if workshop_match:
        name = _clean(name + " " + _name_until_end(after))
    elif before_workshop:
        name = _clean(_name_until_end(clause[clause.rfind("orkshop", 0, match.start()) - 1 :]))
        name = name if match["name"] in name else f"{name} at {match['name']} {year}"
    style = _STYLE.search(clause)
    kind = "journal" if match["name"] in _JOURNAL_ONLY else "conference"
    return Venue(
        name, int(year), kind, "accepted", workshop, style[1].lower() if style else "", "comments"
    )


#: A venue's name standing alone: "2021 IEEE Conference on ...", "MET'24: 9th ACM
#: International Workshop on ...", "Journal of Software: Testing, ...".
_VENUE_WORD = re.compile(r"\b(?:Conference|Workshop|Symposium|Journal|Transactions)\b")
_SMALL_WORDS = frozenset("of on and for in the at to with de du der des la le & a an".split())


def _bare_venue(clause: str) -> Venue | None:
    """A clause that is only a venue's name in title case, as computer science writes it.

    "2023 IEEE International Conference on Software Testing, Verification and
    Validation Workshops (ICSTW)" or "The 36th ACM/SIGAPP Symposium on Applied
    Computing": every word capitalised or a small word, a venue word among them,
    and no date after the name (a meeting's date is a talk's, not a venue's).
    """
    text = clause.strip(" ,.;:-")
    text = re.sub(r"^[A-Z][\w-]*'\d\d\s*:\s*", "", text)  # "MET'24: "
    name = _clean(_name_until_end(text))
    if not _VENUE_WORD.search(name) or len(name.split()) < 3:
        return None
    rest = text[len(name) :] if text.startswith(name) else ""
    if re.match(
        r"\s*(?:January|February|March|April|May|June|July|August|September|October|"
        r"November|December)\b",
        rest,
    ):
        return None
    for word in name.split():
        bare = word.strip("(),:'\"")
        if not bare or bare.lower() in _SMALL_WORDS or bare[0].isupper() or bare[0].isdigit():
            continue
        return None
    kind, workshop = _kind(name)
    return Venue(name, _year(clause), kind, "accepted", workshop, "", "comments")


def venue_from_doi(doi: str | None) -> Venue | None:
    """A venue a proceedings DOI names (ACL Anthology, AAAI, IJCAI, IEEE conferences)."""
    for candidate in (doi or "").split():
        for pattern, kind in _DOI_VENUES:
            match = pattern.match(candidate)
            if match is None:
                continue
            groups = match.groupdict()
            year = int(groups["year"]) if groups.get("year") else None
            if kind == "anthology":
                name = _ANTHOLOGY.get(groups["name"].lower(), groups["name"].upper())
                track = (groups.get("track") or "").lower()
                if name == "Findings" and track:
                    name = f"Findings of {_ANTHOLOGY.get(track, track.upper())}"
                workshop = groups["name"].lower() == "ws" or track == "workshop"
                return Venue(
                    f"{name} {year}" if year else name,
                    year,
                    "conference",
                    "published",
                    workshop,
                    "",
                    "doi",
                )
            name = kind if kind != "ieee" else groups["name"].upper()
            return Venue(
                f"{name} {year}" if year else name,
                year,
                "conference",
                "published",
                False,
                "",
                "doi",
            )
    return None


def venue_from_text(text: str) -> Venue | None:
    """A venue a post or note says a paper is accepted at (read beside an OpenReview link)."""
    return venue_from_comments(text, source="openreview")


def venue_of(journal_ref: str | None, comments: str | None, doi: str | None = None) -> Venue | None:
    """The venue of an arXiv record: its reference first, then a proceedings DOI, then comments."""
    return (
        venue_from_journal_ref(journal_ref) or venue_from_doi(doi) or venue_from_comments(comments)
    )
