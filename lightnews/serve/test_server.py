"""Who may reach a served library, and under which host names (:mod:`lightnews.serve.server`)."""

from __future__ import annotations

import pytest

from lightnews.errors import UsageError
from lightnews.serve.server import is_loopback, plan_serving, proxy_options
from lightnews.settings import Settings


def test_a_library_without_accounts_stays_on_loopback_unless_read_only() -> None:
    settings = Settings({})
    with pytest.raises(UsageError, match="--public-read-only"):
        plan_serving("0.0.0.0", settings, accounts=0)
    assert plan_serving("0.0.0.0", settings, accounts=0, public_read_only=True).loopback is False
    assert plan_serving("0.0.0.0", settings, accounts=2).loopback is False
    local = plan_serving("localhost", settings, accounts=0)
    assert local.loopback and local.note == ""
    assert [is_loopback(h) for h in ("127.0.0.1", "[::1]", "LOCALHOST", "10.0.0.1", "lab")] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_the_address_it_listens_on_is_a_name_its_pages_answer_to() -> None:
    planned = plan_serving("10.0.0.5", Settings({}), accounts=1)
    assert planned.settings.allowed_hosts[-1] == "10.0.0.5" and planned.note == ""
    everywhere = plan_serving("0.0.0.0", Settings({}), accounts=1)
    assert "answer only to the host names localhost" in everywhere.note
    assert tuple(everywhere.settings.allowed_hosts) == ("localhost", "127.0.0.1", "::1")
    anyone = plan_serving("::", Settings({"allowed_hosts": "*"}), accounts=1)
    assert anyone.note == ""


def test_proxy_headers_are_believed_from_the_trusted_proxies_only() -> None:
    options = proxy_options(Settings({"trusted_proxies": "10.0.0.0/8"}))
    assert options == {"proxy_headers": True, "forwarded_allow_ips": ["10.0.0.0/8"]}
