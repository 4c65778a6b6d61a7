"""The model endpoint's settings and its one check before any lab: each failure is one line."""

from __future__ import annotations

from typing import Any

import pytest

from netdojo.clients.llm_endpoint import EndpointCheck, LLMConfig, LLMError, preflight
from netdojo.errors import NetdojoError
from tests.llm_fakes import HOLD, ScriptedLLM, Step, completion, free_port, serving

pytestmark = pytest.mark.anyio

ENV = (
    "NETDOJO_LLM_BASE_URL",
    "NETDOJO_LLM_MODEL",
    "NETDOJO_LLM_API_KEY",
    "OPENAI_API_KEY",
    "NETDOJO_LLM_MAX_TOKENS",
    "NETDOJO_LLM_TIMEOUT_S",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_llm_error_is_a_netdojo_error() -> None:
    assert issubclass(LLMError, NetdojoError)


def test_from_env_names_the_missing_variables(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(LLMError, match="NETDOJO_LLM_BASE_URL and NETDOJO_LLM_MODEL") as raised:
        LLMConfig.from_env()
    assert "\n" not in str(raised.value)
    clean_env.setenv("NETDOJO_LLM_BASE_URL", "http://127.0.0.1:8000/v1")
    with pytest.raises(LLMError, match="set NETDOJO_LLM_MODEL") as raised:
        LLMConfig.from_env()
    assert "set NETDOJO_LLM_BASE_URL" not in str(raised.value)


def test_from_env_reads_the_variables_with_fallback_key_and_overrides(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("NETDOJO_LLM_BASE_URL", "http://127.0.0.1:8000/v1")
    clean_env.setenv("NETDOJO_LLM_MODEL", "qwen")
    assert LLMConfig.from_env().api_key == ""
    clean_env.setenv("OPENAI_API_KEY", "sk-openai")
    assert LLMConfig.from_env().api_key == "sk-openai"
    clean_env.setenv("NETDOJO_LLM_API_KEY", "sk-netdojo")
    config = LLMConfig.from_env(model="llama", max_turns=5)
    assert (config.base_url, config.model, config.api_key) == (
        "http://127.0.0.1:8000/v1",
        "llama",
        "sk-netdojo",
    )
    assert (config.max_turns, config.temperature) == (5, 0.0)
    assert (config.max_tokens, config.request_timeout_s) == (2048, 120.0)
    clean_env.setenv("NETDOJO_LLM_MAX_TOKENS", "512")
    clean_env.setenv("NETDOJO_LLM_TIMEOUT_S", "30")
    config = LLMConfig.from_env()
    assert (config.max_tokens, config.request_timeout_s) == (512, 30.0)


@pytest.mark.parametrize(
    ("variable", "value"), [("NETDOJO_LLM_MAX_TOKENS", "lots"), ("NETDOJO_LLM_TIMEOUT_S", "0")]
)
def test_a_bad_number_names_its_variable_in_one_line(
    clean_env: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    clean_env.setenv("NETDOJO_LLM_BASE_URL", "http://127.0.0.1:8000/v1")
    clean_env.setenv("NETDOJO_LLM_MODEL", "qwen")
    clean_env.setenv(variable, value)
    with pytest.raises(LLMError, match=f"{variable}='{value}'") as raised:
        LLMConfig.from_env()
    assert "\n" not in str(raised.value)


async def check(
    fake: ScriptedLLM, model: str = "qwen", **config: Any
) -> tuple[EndpointCheck | None, LLMError | None]:
    async with serving(fake) as base_url:
        try:
            return await preflight(LLMConfig(base_url=base_url, model=model, **config)), None
        except LLMError as exc:
            return None, exc


READY: Step = completion(content="ready", usage=(12, 1))


async def test_a_listed_model_that_answers_passes() -> None:
    fake = ScriptedLLM([READY], models=["qwen", "other"])
    result, error = await check(fake)

    assert error is None
    assert result is not None and result.listed == ["qwen", "other"]
    [probe] = fake.requests
    assert probe["model"] == "qwen"
    assert 1 <= probe["max_tokens"] <= 8
    assert "tools" not in probe


async def test_a_server_without_a_model_list_is_checked_by_one_completion() -> None:
    fake = ScriptedLLM([READY], models=None)
    result, error = await check(fake)

    assert error is None
    assert fake.model_requests == 1
    assert result is not None and result.listed is None


async def test_a_model_the_server_does_not_serve_is_named_with_the_ones_it_does() -> None:
    missing = (404, {"error": {"message": "model 'qwen' not found"}})
    fake = ScriptedLLM([missing], models=["llama3.2", "mistral"])
    _, error = await check(fake)

    assert str(error).endswith("does not serve model 'qwen' (it lists: llama3.2, mistral)")


async def test_an_unlisted_model_the_server_still_answers_for_passes() -> None:
    fake = ScriptedLLM([READY], models=["/models/qwen2.5-0.5b.gguf"])
    _, error = await check(fake)
    assert error is None


async def test_a_rejected_key_fails_on_the_listing() -> None:
    fake = ScriptedLLM([READY], models=(401, {"error": {"message": "Invalid API key"}}))
    _, error = await check(fake, api_key="wrong")
    assert str(error).endswith("/v1/models answered HTTP 401: Invalid API key")
    assert fake.requests == []


async def test_a_server_that_does_not_answer_fails_in_one_line_without_retry() -> None:
    fake = ScriptedLLM([HOLD, READY], models=None)
    _, error = await check(fake, request_timeout_s=1.0)

    assert "/v1/chat/completions gave no answer within 1 s" in str(error)
    assert "\n" not in str(error)
    assert len(fake.requests) == 1


async def test_an_unreachable_endpoint_fails_at_once() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(LLMError) as raised:
        await preflight(LLMConfig(base_url=url, model="qwen"))
    assert str(raised.value) == f"cannot reach {url}/models: connection refused"


async def test_a_base_url_without_v1_gets_a_hint() -> None:
    fake = ScriptedLLM([READY], models=None)
    async with serving(fake) as base_url:
        with pytest.raises(LLMError, match=r"HTTP 404: .*usually ends in /v1"):
            await preflight(LLMConfig(base_url=base_url.removesuffix("/v1"), model="qwen"))
