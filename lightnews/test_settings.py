"""The settings as declared: one attribute per setting, typed reads, the table made from them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT
from lightnews.errors import SettingError
from lightnews.settings import (
    SETTINGS,
    Setting,
    Settings,
    parse_schedule,
    with_reader_settings,
)


def _as_text(value: object) -> str:
    """A value written the way it is saved or set in the environment."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    return str(value)


def test_the_table_is_the_declarations_in_their_order() -> None:
    declared = [name for name, value in vars(Settings).items() if isinstance(value, Setting)]
    assert [s.name for s in SETTINGS] == declared
    assert len(set(declared)) == len(declared) > 40
    assert Settings.smtp_port is Settings.lookup("smtp-port")
    assert Settings.smtp_port.env == "LIGHTNEWS_SMTP_PORT"


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_each_default_reads_back_as_itself(setting: Setting[object]) -> None:
    assert setting.convert(_as_text(setting.default), "default") == setting.default
    assert setting.fits(setting.default)
    assert setting.help and setting.kind != "a value"


def test_environment_over_saved_over_default() -> None:
    saved = {"smtp_port": "2525", "half_life_hours": "12"}
    settings = Settings(saved, environ={"LIGHTNEWS_SMTP_PORT": "587"})
    assert settings.smtp_port == 587 and settings.origin("smtp_port") == "environment"
    assert settings.half_life_hours == 12.0 and settings.origin("half_life_hours") == "saved"
    assert settings.http_retries == 3 and settings.origin("http_retries") == "default"
    assert settings.get("smtp-port") == 587
    hosts = Settings(environ={"LIGHTNEWS_ALLOWED_HOSTS": "News.Example.org, localhost"})
    assert hosts.allowed_hosts == ("news.example.org", "localhost")


def test_a_bad_value_names_its_origin_and_what_it_must_be() -> None:
    with pytest.raises(SettingError, match=r"^LIGHTNEWS_SMTP_PORT must be a positive integer, "):
        Settings(environ={"LIGHTNEWS_SMTP_PORT": "0"})
    with pytest.raises(SettingError, match="no setting named 'smtp_portt'; known settings: "):
        Settings(environ={}).get("smtp_portt")


def test_a_saved_value_this_version_refuses_is_set_aside_for_its_default() -> None:
    """A value saved by an older version that checked less (a link bar of 5) or by hand
    must not lock the library: it reads as the default, and says so, until set again."""
    settings = Settings({"link_bar": "5", "digest_schedule": "hourly"}, environ={})
    assert settings.link_bar == 0.8 and settings.digest_schedule == "off"
    assert settings.origin("link_bar") == "default (the saved value is unusable)"
    assert settings.unusable["link_bar"].startswith(
        "the saved setting link_bar must be a number from 0 to 1, got '5'; its default, 0.8,"
    )
    assert "setting digest_schedule must be off, `daily" in settings.unusable["digest_schedule"]
    assert Settings({"link_bar": "0.9"}, environ={}).unusable == {}
    with pytest.raises(SettingError, match=r"^LIGHTNEWS_LINK_BAR must be a number from 0 to 1"):
        Settings({"link_bar": "0.9"}, environ={"LIGHTNEWS_LINK_BAR": "1.5"})


def test_a_readers_unusable_value_leaves_the_instances_standing() -> None:
    """A reader's own saved value that fails its check falls back to the instance's value
    (what everyone else reads), not to the default."""
    instance = Settings({"half_life_hours": "10", "digest_to": "lab@example.org"}, environ={})
    mine = with_reader_settings(instance, {"half_life_hours": "abc", "digest_to": "me@x.org"})
    assert mine.half_life_hours == 10.0 and mine.digest_to == "me@x.org"
    assert with_reader_settings(instance, {}) is instance


def test_the_schedule_is_spelled_one_way() -> None:
    settings = Settings({"digest_schedule": "Weekly Monday 7:05"}, environ={})
    assert settings.digest_schedule == "weekly mon 07:05"
    assert parse_schedule(settings.digest_schedule) == parse_schedule("weekly mon 07:05")
    assert Settings(environ={}).digest_schedule == "off"


def test_overrides_keep_each_setting_s_type() -> None:
    base = Settings(environ={})
    changed = base.with_overrides(http_timeout=5, sign_in_attempts=2, trusted_proxies=("*",))
    assert (changed.http_timeout, changed.sign_in_attempts) == (5, 2)
    assert changed.trusted_proxies == ("*",) and base.trusted_proxies == ("127.0.0.1", "::1")
    with pytest.raises(TypeError, match="sign_in_attempts must be int, got '2'"):
        base.with_overrides(sign_in_attempts="2")
    with pytest.raises(TypeError, match="http_timeout must be float"):
        base.with_overrides(http_timeout=True)
    with pytest.raises(TypeError, match="smtp_port must be int"):
        base.with_overrides(smtp_port=True)
    with pytest.raises(AttributeError):
        base.contact = "me@example.org"  # type: ignore[misc]


def test_settings_import_nothing_above_the_foundation() -> None:
    """Reading the settings (a digest schedule among them) loads no other layer."""
    code = (
        "import sys; from lightnews.settings import Settings; "
        "Settings(environ={'LIGHTNEWS_DIGEST_SCHEDULE': 'daily 7:00'}); "
        "print(sorted(m for m in sys.modules if m.startswith('lightnews')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    assert loaded.strip() == "['lightnews', 'lightnews.errors', 'lightnews.settings']"
