"""Drives `loki --serve` with the OpenAI Agents SDK (`openai-agents`), as its users do: an
Agent with one function tool, run plain (`Runner.run`) and streamed (`Runner.run_streamed`).

Usage: openai_agents_client.py BASE_URL. Prints one JSON object with what the SDK returned.
Tracing is off: it would send every run to OpenAI.
"""

import asyncio
import json
import sys

from agents import (
    Agent,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

CALLS = []


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    CALLS.append(city)
    return f"sunny-in-{city}-42"


async def main() -> None:
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=sys.argv[1], api_key="unused", max_retries=0, timeout=60)
    agent = Agent(
        name="Forecaster",
        instructions="Answer with the tool's result.",
        model=OpenAIResponsesModel(model="fake:gpt-4o-mini", openai_client=client),
        tools=[weather],
    )
    out = {}
    plain = await Runner.run(agent, "What is the weather in Oslo?")
    out["plain"] = plain.final_output
    streamed = Runner.run_streamed(agent, "What is the weather in Oslo, streamed?")
    kinds, text = [], ""
    async for event in streamed.stream_events():
        if event.type == "run_item_stream_event":
            kinds.append(event.item.type)
        if event.type == "raw_response_event" and event.data.type == "response.output_text.delta":
            text += event.data.delta
    out["streamed"] = streamed.final_output
    out["streamed_text"] = text
    out["streamed_items"] = kinds
    out["calls"] = CALLS
    print(json.dumps(out))


asyncio.run(main())
