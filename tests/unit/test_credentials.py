"""Bearer tokens of the A2A commands and requests: where they come from, their form, and that
they stay out of what is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from a2a.helpers import new_data_part, new_message, new_text_part
from a2a.types import Role
from pydantic import ValidationError

from netdojo.arena_commands import _warn_if_open
from netdojo.credentials import GREEN_TOKEN, is_loopback, token_from
from netdojo.errors import NetdojoError
from netdojo.servers.bearer import check_token
from netdojo.servers.green import AssessmentRequest
from netdojo.servers.withheld import participant_tokens, without

TOKEN = "k3y-0f-the-green.agent~v1+/=="
OTHER = "another-token-of-enough-length"


def test_a_token_file_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(GREEN_TOKEN, raising=False)
    assert token_from(None, GREEN_TOKEN) is None
    monkeypatch.setenv(GREEN_TOKEN, f" {OTHER}\n")
    assert token_from(None, GREEN_TOKEN) == OTHER
    file = tmp_path / "token"
    file.write_text(f"{TOKEN}\n")
    assert token_from(file, GREEN_TOKEN) == TOKEN


@pytest.mark.parametrize(
    ("content", "problem"),
    [("\n", "empty"), ("short-token", "at least 16"), ("two words in a token", "letters")],
)
def test_a_bad_token_is_refused_naming_where_it_came_from(
    tmp_path: Path, content: str, problem: str
) -> None:
    file = tmp_path / "token"
    file.write_text(content)
    with pytest.raises(NetdojoError, match=problem) as refused:
        token_from(file, GREEN_TOKEN)
    assert str(file) in str(refused.value)
    with pytest.raises(NetdojoError, match="cannot read the token file"):
        token_from(tmp_path / "missing", GREEN_TOKEN)


def test_tokens_take_rfc_6750_form() -> None:
    assert check_token(TOKEN) == TOKEN
    for bad in ("a" * 15, "token\twith-a-tab-inside", "tökenwithumlauts-x", "=" + "a" * 20):
        with pytest.raises(ValueError):
            check_token(bad)


def test_only_loopback_addresses_count_as_loopback() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "10.1.2.3", "example.org"]))


def test_serving_beyond_loopback_without_a_token_warns(capsys: pytest.CaptureFixture[str]) -> None:
    for host, token in (("127.0.0.1", None), ("0.0.0.0", TOKEN)):
        _warn_if_open(host, token, "green agent", "start assessments", GREEN_TOKEN)
    assert capsys.readouterr().err == ""
    _warn_if_open("0.0.0.0", None, "green agent", "start assessments", GREEN_TOKEN)
    warning = " ".join(capsys.readouterr().err.split())
    assert "listens on 0.0.0.0 without authentication" in warning
    assert "--token-file" in warning and GREEN_TOKEN in warning


def test_a_participant_is_a_url_or_a_url_and_a_token() -> None:
    plain = AssessmentRequest.model_validate({"participants": {"agent": "http://a:1"}})
    assert plain.participants["agent"].url == "http://a:1"
    assert plain.participants["agent"].token is None
    given = {"agent": {"url": "https://a:1", "token": TOKEN}}
    request = AssessmentRequest.model_validate({"participants": given})
    token = request.participants["agent"].token
    assert token is not None and token.get_secret_value() == TOKEN
    assert TOKEN not in repr(request) and TOKEN not in request.model_dump_json()
    for participants, problem in (
        ({"agent": {"url": "ftp://a", "token": TOKEN}}, "http"),
        ({"agent": {"url": "http://a", "token": "short"}}, "at least 16"),
        ({"agent": {"url": "http://a", "password": TOKEN}}, "password"),
        ({"a": "http://a", "b": "http://b"}, "exactly one"),
    ):
        with pytest.raises(ValidationError, match=problem):
            AssessmentRequest.model_validate({"participants": participants})


def test_a_stored_request_keeps_no_participant_token() -> None:
    participants = {"agent": {"url": "http://a:1", "token": TOKEN}}
    as_data = new_message([new_data_part({"participants": participants})], role=Role.ROLE_USER)
    request = json.dumps({"participants": {"agent": {"url": "http://a:1", "token": OTHER}}})
    as_text = new_message([new_text_part(request)], role=Role.ROLE_USER)
    for message, token in ((as_data, TOKEN), (as_text, OTHER)):
        assert participant_tokens(message) == [token]
        stored = without(message, participant_tokens(message))
        assert token not in str(stored) and "[redacted]" in str(stored)
        assert stored.message_id == message.message_id
