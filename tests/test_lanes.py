"""The test lanes are checked, not trusted: `make test-fast` leaves out the PostgreSQL,
browser and multi-process lanes by marker, so a run on PostgreSQL or Chromium that missed
its marker would slip into the fast lane unnoticed.

Each test here runs pytest on a small suite of its own with this project's conftest.py as a
plugin (its real fixtures and hooks), and only collects it or sets up the fixture that the
check stops: no PostgreSQL, Chromium or other process is started.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SUITE = """
import pytest

def test_on_each_backend(store):
    pass

@pytest.fixture(params=["sqlite", "postgresql"])
def library(request):
    return request.param

def test_on_a_library(library):
    pass

@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_by_parameter(backend):
    pass

def test_on_the_server(pg_url):
    pass

@pytest.fixture(scope="module")
def browser():
    yield object()

@pytest.fixture
def page(browser):
    return browser

def test_in_chromium(page):
    pass

def test_with_a_real_server(serving):
    pass

def test_plain():
    pass
"""


FAST = "not slow and not postgres and not browser and not multiprocess"  # the Makefile's


def collected(pytester: pytest.Pytester, *options: str) -> list[str]:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_inprocess("-p", "conftest", "--collect-only", "-q", *options)
    return [line for line in result.outlines if line.startswith("test_suite.py::")]


def test_not_postgres_deselects_every_postgresql_run(pytester: pytest.Pytester) -> None:
    everything = collected(pytester)
    postgres = collected(pytester, "-m", "postgres")
    rest = collected(pytester, "-m", "not postgres")
    assert len(everything) == 10
    assert postgres == [
        "test_suite.py::test_on_each_backend[postgresql]",
        "test_suite.py::test_on_a_library[postgresql]",
        "test_suite.py::test_by_parameter[postgresql]",
        "test_suite.py::test_on_the_server",
    ]
    assert sorted(postgres + rest) == sorted(everything)


def test_the_fast_lane_keeps_only_what_needs_no_server_browser_or_process(
    pytester: pytest.Pytester,
) -> None:
    fast = collected(pytester, "-m", FAST)
    assert fast == [
        "test_suite.py::test_on_each_backend[sqlite]",
        "test_suite.py::test_on_a_library[sqlite]",
        "test_suite.py::test_by_parameter[sqlite]",
        "test_suite.py::test_plain",
    ]
    assert collected(pytester, "-m", "browser") == ["test_suite.py::test_in_chromium"]
    assert collected(pytester, "-m", "multiprocess") == ["test_suite.py::test_with_a_real_server"]


def test_postgresql_reached_without_the_marker_fails_the_test_before_it_starts(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_hidden="""
        import pytest

        @pytest.fixture(params=["a-backend-the-marking-does-not-know"])
        def library(request):
            return request.getfixturevalue("pg_url")

        def test_on_a_hidden_server(library):
            pass
    """
    )
    result = pytester.runpytest_inprocess("-p", "conftest", "-q", "-m", "not postgres")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*sets up 'pg_server' without the 'postgres' marker*"])


def test_a_process_started_without_the_marker_fails_the_test(pytester: pytest.Pytester) -> None:
    # The audit event a subprocess raises as it starts, raised here without starting one.
    pytester.makepyfile(
        test_starts="""
        import sys

        def test_starts_a_process():
            sys.audit("subprocess.Popen", "true", ["true"], None, None)
    """
    )
    result = pytester.runpytest_inprocess("-p", "conftest", "-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*starts processes without the 'multiprocess' marker*"])


def test_every_test_the_lane_tables_name_exists() -> None:
    """A test module moved or renamed must take its lanes along: a stale key in BY_TEST
    or SLOW would leave its test unmarked (a process start then fails, a slow test runs
    in the fast lane)."""
    import conftest

    root = Path(conftest.__file__).parent
    named = [key.partition("::")[0] for key in [*conftest.BY_TEST, *conftest.SLOW]]
    assert [path for path in named if not (root / path).is_file()] == []
