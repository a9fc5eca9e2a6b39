"""Drives `loki --serve` with the official OpenAI Python SDK, as its users do.

Usage: openai_client.py BASE_URL SCENARIO. Prints one JSON object with what the SDK
returned; the Rust test queues the fake model's answers in the order of the calls.
"""

import json
import sys

import openai


def main() -> None:
    base, scenario = sys.argv[1], sys.argv[2]
    client = openai.OpenAI(base_url=base, api_key="unused", max_retries=0, timeout=30)
    out = {}
    if scenario == "surface":
        out["retrieved"] = client.models.retrieve("fake:gpt-4o-mini").id
        try:
            client.models.retrieve("nobody:nothing")
        except openai.NotFoundError as e:
            out["missing"] = e.status_code
        done = client.completions.create(model="fake:gpt-4o-mini", prompt="Say hi", max_tokens=20)
        out["completion"] = done.choices[0].text
        out["completion_object"] = done.object
        out["completion_usage"] = done.usage.total_tokens if done.usage else None
        pieces = client.completions.create(model="fake:gpt-4o-mini", prompt="Count", stream=True)
        out["completion_stream"] = "".join(c.choices[0].text for c in pieces if c.choices)
        chat = client.chat.completions.create(
            model="fake:gpt-4o-mini",
            messages=[{"role": "user", "content": "json"}],
            response_format={"type": "json_object"},
            stop=["END"],
            seed=3,
            max_completion_tokens=50,
        )
        out["chat"] = chat.choices[0].message.content
        try:
            client.chat.completions.create(
                model="fake:gpt-4o-mini", messages=[{"role": "user", "content": "x"}], n=2
            )
        except openai.BadRequestError as e:
            out["n"] = str(e)
    if scenario == "responses":
        first = client.responses.create(
            model="fake:gpt-4o-mini", input="Say hi", instructions="Be brief."
        )
        out["first"] = first.output_text
        out["first_id"] = first.id
        second = client.responses.create(
            model="fake:gpt-4o-mini", input="And again?", previous_response_id=first.id
        )
        out["second"] = second.output_text
        weather = [{"type": "function", "name": "weather", "description": "Weather",
                    "parameters": {"type": "object",
                                   "properties": {"city": {"type": "string"}}}}]
        asked = client.responses.create(
            model="fake:gpt-4o-mini", input="Weather in Oslo?", tools=weather
        )
        call = next(item for item in asked.output if item.type == "function_call")
        out["call"] = {"name": call.name, "arguments": call.arguments}
        answered = client.responses.create(
            model="fake:gpt-4o-mini",
            previous_response_id=asked.id,
            tools=weather,
            input=[{"type": "function_call_output", "call_id": call.call_id,
                    "output": "sunny"}],
        )
        out["answered"] = answered.output_text
        kinds, text = [], ""
        for event in client.responses.create(
            model="fake:gpt-4o-mini", input="Stream it", stream=True
        ):
            kinds.append(event.type)
            if event.type == "response.output_text.delta":
                text += event.delta
            if event.type == "response.completed":
                out["streamed_final"] = event.response.output_text
        out["streamed"] = text
        out["kinds"] = kinds
        try:
            client.responses.create(
                model="fake:gpt-4o-mini", input="x", previous_response_id="resp_nope"
            )
        except openai.NotFoundError as e:
            out["unknown_previous"] = e.status_code
    if scenario == "embeddings":
        # The SDK asks for base64 unless told otherwise, and decodes it itself.
        default = client.embeddings.create(model="fake:emb", input=["llamas live high"])
        out["default"] = default.data[0].embedding
        floats = client.embeddings.create(
            model="fake:emb", input="llamas live high", encoding_format="float"
        )
        out["float"] = floats.data[0].embedding
    print(json.dumps(out))


if __name__ == "__main__":
    main()
