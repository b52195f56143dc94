"""Instructor asks a model for a structured output that must validate, and the model keeps getting one field
wrong: a new invalid answer at every attempt, with ``max_retries`` set far above what a fix needs. spanbreaker stops
the retry loop from the model call spans alone. Offline: the model is scripted.

In tool mode (Instructor's default for OpenAI) every failed validation is re-asked with the model's own function
call and a tool result ``Validation Error found: ...``: the next request holds the attempts so far, which the breaker
reads as it reads a plain tool loop (the OpenInference OpenAI instrumentor records each request). Ten failed
attempts in a row are a ``tool_streak``; the eleventh request is vetoed before it is sent.

    pip install 'spanbreaker[openai]' instructor
    python examples/instructor_retry_loop.py
"""

from __future__ import annotations

from typing import Any

import instructor
import openai
from _report import print_trip
from _scripted_openai import ScriptedModel, tool_results
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel, field_validator

import spanbreaker

MAX_RETRIES = 30


class Invoice(BaseModel):
    number: str
    total_eur: float

    @field_validator("number")
    @classmethod
    def looks_like_an_invoice_number(cls, value: str) -> str:
        if not value.startswith("INV-"):
            raise ValueError("an invoice number starts with 'INV-'")
        return value


def stubborn(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Stands in for the LLM: a new, still invalid, invoice number at every attempt."""
    return [("Invoice", {"number": f"2026-{tool_results(messages):04d}", "total_eur": 1280.0})]


def main() -> None:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spanbreaker.instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)  # the client's spans, here

    model = ScriptedModel(stubborn)
    client = instructor.from_openai(model.client(openai.OpenAI, api_key="offline",
                                                 base_url="http://scripted.invalid/v1"))
    print(f"Extracting an invoice with Instructor (max_retries={MAX_RETRIES}) ...")
    try:
        invoice = client.chat.completions.create(
            model="gpt-4o-mini", response_model=Invoice, max_retries=MAX_RETRIES,
            messages=[{"role": "user", "content": "Invoice INV-2026-0042, total 1,280.00 EUR."}])
        print(f"Extracted: {invoice}")
    except spanbreaker.Tripped as trip:
        print_trip(trip, exporter, f"model calls made: {model.calls} (max_retries alone would allow "
                   f"{MAX_RETRIES + 1})")
    finally:
        OpenAIInstrumentor().uninstrument()


if __name__ == "__main__":
    main()
