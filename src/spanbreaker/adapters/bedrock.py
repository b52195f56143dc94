"""AWS Bedrock adapter: OpenInference's Bedrock instrumentor on the breaker's provider, its ``converse`` and
``invoke_model`` spans saying what they are when they start.

What this adapter fixes around (measured on boto3/botocore 1.44 with openinference-instrumentation-bedrock 0.1.61;
pinned by ``tests/bedrock/test_tool_loop.py``): the instrumentor wraps each ``bedrock-runtime`` client as boto3
creates it, and its ``converse`` wrapper starts the span (``bedrock.converse``) with nothing on it, then sets the
kind (``LLM``), the model and the request just after. The breaker decides at start, so such a span was invisible
to it: no model call counted against a budget, no prompt read, nothing vetoed. Here the instrumentor's tracer gets,
at start, the attributes the instrumentor itself computes from the request (its own extractor), so a model call
counts when it starts and a loop read from its messages is vetoed before the request is sent. ``Tripped`` (a
``BaseException``) passes the wrapper's ``except Exception`` and botocore's, and comes out of ``client.converse``.

The instrumentor builds each client's wrapper from a module-level factory (``_model_converse_wrapper(tracer)``)
when the client is created; the adapter replaces that factory, so it works whichever was switched on first, the
instrumentor or spanbreaker. Clients the instrumentor wrapped before the adapter was there are re-wrapped in place.
``invoke_model`` (the older API, a model-specific body: Anthropic's Messages for Claude, Nova's, OpenAI's Chat
Completions ...) is fixed the same way (its span, ``bedrock.invoke_model``, started bare too): the instrumentor's
own body reader names the request at start, for a body given as text or bytes (a file-like body is left to the
instrumentor, which reads it once). ``converse_stream`` needs nothing: its span starts with its request.

Everything Bedrock-specific stays in this module; botocore is imported only when instrumenting, and not before the
application imports it (:mod:`._deferred`).
"""

from __future__ import annotations

import functools
import logging
import weakref
from collections.abc import Callable
from typing import Any

from ._deferred import being_imported
from ._hooked import HookedAdapter
from .base import AttributeRecorder, PatchLog, PendingAttributes, StartAttributes

logger = logging.getLogger("spanbreaker")

SCOPE = "openinference.instrumentation.bedrock"
"""The instrumentor's module, and the instrumentation scope of its spans."""
FACTORY = "_model_converse_wrapper"
"""The instrumentor's module-level factory of a client's ``converse`` wrapper: ``FACTORY(tracer)(client)``."""
INVOKE_FACTORIES = ("_model_invocation_wrapper", "_async_model_invocation_wrapper")
"""The factories of a client's ``invoke_model`` wrapper, sync and async (aiobotocore)."""
_PENDING = PendingAttributes("spanbreaker_bedrock_start")
_START = _PENDING.var
"""The start attributes of the call whose span is about to start (:class:`~.base.PendingAttributes`)."""


def _suppressed() -> bool:
    from opentelemetry import context
    from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY

    return bool(context.get_value(_SUPPRESS_INSTRUMENTATION_KEY))


def _start_attributes(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """The attributes the instrumentor sets just after a ``converse`` span starts, computed by its own extractor."""
    if _suppressed():  # the wrapper starts no span: nothing to compute
        return None
    try:
        from openinference.instrumentation.bedrock._converse_attributes import get_attributes_from_request_data

        return dict(get_attributes_from_request_data(kwargs)) or None  # type: ignore[arg-type]
    except Exception:  # an odd request: its span starts as the instrumentor makes it
        logger.debug("spanbreaker could not read a Bedrock converse request at start", exc_info=True)
        return None


def _invoke_start_attributes(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """The attributes the instrumentor sets just after an ``invoke_model`` span starts, by its own readers of the
    body (Anthropic's Messages for a Claude model, its per-family reader otherwise). Only a body given as text or
    bytes: a file-like one is read by the instrumentor once, and reading it here first could consume it."""
    body = kwargs.get("body")
    if _suppressed() or not isinstance(body, str | bytes | bytearray):
        return None
    try:
        from openinference.instrumentation.bedrock.utils import _extract_invoke_model_attributes as invoke
        from openinference.instrumentation.bedrock.utils.anthropic import _attributes as anthropic
        from openinference.instrumentation.bedrock.utils.json_utils import parse_invoke_model_body

        request = parse_invoke_model_body(body)
        model_id = str(kwargs.get("modelId"))
        recorder = AttributeRecorder()
        if invoke.is_claude_message_api(model_id):
            anthropic.set_input_attributes(recorder, request, model_id)  # type: ignore[arg-type]
        else:
            invoke.set_input_attributes(recorder, request, kwargs)  # type: ignore[arg-type]
        return recorder.attributes or None
    except Exception:  # an odd body: its span starts as the instrumentor makes it
        logger.debug("spanbreaker could not read a Bedrock invoke_model request at start", exc_info=True)
        return None


Factory = Callable[[Any], Callable[[Any], Any]]
"""An instrumentor factory: ``factory(tracer)(client)`` is the client's wrapped method."""


def _patched_factory(stock: Factory, extract: Callable[[dict[str, Any]], dict[str, Any] | None]) -> Factory:
    """The instrumentor's factory, its tracer adding the pending start attributes, the call's attributes
    (``extract(kwargs)``) pending while the stock wrapper runs."""

    def factory(tracer: Any) -> Callable[[Any], Any]:
        if not isinstance(tracer, StartAttributes):
            tracer = StartAttributes(tracer, _PENDING)
        make = stock(tracer)

        def wrap_client(client: Any) -> Any:
            instrumented = make(client)
            if hasattr(client, "__aenter__"):  # aiobotocore: the stock wrapper's own test for an async client
                @functools.wraps(instrumented)
                async def call_async(*args: Any, **kwargs: Any) -> Any:
                    token = _START.set(extract(kwargs))
                    try:
                        return await instrumented(*args, **kwargs)
                    finally:
                        _START.reset(token)
                return call_async

            @functools.wraps(instrumented)
            def call(*args: Any, **kwargs: Any) -> Any:
                token = _START.set(extract(kwargs))
                try:
                    return instrumented(*args, **kwargs)
                finally:
                    _START.reset(token)
            return call
        return wrap_client

    factory.__wrapped__ = stock  # type: ignore[attr-defined]
    return factory


class BedrockAdapter(HookedAdapter):
    name = "bedrock"
    framework = "botocore"
    scope = SCOPE

    def __init__(self) -> None:
        super().__init__()
        self._rewrapped: weakref.WeakKeyDictionary[Any, dict[str, tuple[Any, Any]]] = weakref.WeakKeyDictionary()
        """Clients re-wrapped in place -> per method, (the instrumentor's wrapper it held, the adapter's)."""
        self._trigger: Any = None
        """The pass-through around ``ClientCreator.create_client`` that patches the factory at the first client
        (see :meth:`_instrument`), while armed."""
        self._factory_patched = False

    def _instrument(self, tracer_provider: Any) -> None:
        """``opentelemetry-instrument`` loads the instrumentor, whose module imports botocore at its top: that
        import runs this adapter while the module is half-initialised (its factory not defined yet), and the
        launcher switches the instrumentor on right after. The adapter then stands aside, leaving a trigger that
        patches the factory when the first client is created (the instrumentor's wrapper, outside the trigger,
        looks the factory up after)."""
        if being_imported(SCOPE):
            with self._lock:
                if not self._patches and self._trigger is None:
                    self._arm_trigger()
            return
        super()._instrument(tracer_provider)

    def patch(self, patches: PatchLog) -> None:
        self._patch_factory(patches)

    def _patch_factory(self, patches: PatchLog) -> None:
        from openinference.instrumentation import bedrock as module

        if self._factory_patched:
            return
        made: dict[str, Factory] = {}
        for name, extract in ((FACTORY, _start_attributes), *((n, _invoke_start_attributes) for n in INVOKE_FACTORIES)):
            stock = getattr(module, name, None)
            if callable(stock):
                made[name] = _patched_factory(stock, extract)
                patches.patch(module, name, made[name])
        self._factory_patched = True
        self._rewrap_existing(module, made)

    def _arm_trigger(self) -> None:
        from botocore.client import ClientCreator
        from wrapt import FunctionWrapper

        def first_client(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            if self._trigger is not None and not self._factory_patched and not being_imported(SCOPE):
                with self._lock:
                    if self._trigger is not None and not self._factory_patched:
                        try:
                            self._patch_factory(self._patches)
                        except Exception:  # never in the way of the application's client
                            logger.warning("spanbreaker could not instrument Bedrock", exc_info=True)
            return wrapped(*args, **kwargs)

        original = vars(ClientCreator)["create_client"]
        self._trigger = (original, FunctionWrapper(original, first_client))
        ClientCreator.create_client = self._trigger[1]

    def _rewrap_existing(self, module: Any, made: dict[str, Factory]) -> None:
        """Clients the instrumentor wrapped before the patch (the application created one, then called
        ``spanbreaker.instrument()``): their ``converse`` and ``invoke_model`` are rebuilt from the patched factories,
        on the instrumentor's tracer, around the same unwrapped methods."""
        tracer = getattr(module.BedrockInstrumentor(), "_tracer", None)
        if tracer is None:
            return
        for client in list(getattr(module, "_instrumented_clients", ())):
            invoke = INVOKE_FACTORIES[1] if hasattr(client, "__aenter__") else INVOKE_FACTORIES[0]
            for method, factory in (("converse", made.get(FACTORY)), ("invoke_model", made.get(invoke))):
                held = vars(client).get(method)
                if factory is None or held is None or f"_unwrapped_{method}" not in vars(client):
                    continue
                try:
                    mine = factory(tracer)(client)
                except Exception:
                    logger.debug("spanbreaker could not re-wrap a Bedrock client", exc_info=True)
                    continue
                setattr(client, method, mine)
                self._rewrapped.setdefault(client, {})[method] = (held, mine)

    def unpatched(self) -> None:
        """Give re-wrapped clients back the instrumentor's wrapper, unless something replaced the adapter's since
        (the instrumentor's ``uninstrument`` removes it: the client is then left as that made it). The trigger is
        disarmed, and taken out where nothing wrapped it since (the instrumentor's wrapper around it stays
        whole)."""
        for client, methods in list(self._rewrapped.items()):
            for method, (held, mine) in methods.items():
                if vars(client).get(method) is mine:
                    setattr(client, method, held)
        self._rewrapped.clear()
        self._factory_patched = False
        if self._trigger is not None:
            from botocore.client import ClientCreator

            original, trigger = self._trigger
            self._trigger = None
            if vars(ClientCreator).get("create_client") is trigger:
                ClientCreator.create_client = original

    def make_instrumentor(self) -> Any:
        from openinference.instrumentation.bedrock import BedrockInstrumentor

        return BedrockInstrumentor()


ADAPTER = BedrockAdapter()
