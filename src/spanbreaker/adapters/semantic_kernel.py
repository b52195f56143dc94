"""Microsoft Semantic Kernel adapter: each kernel function call is known to the breaker as its span starts, whatever
Semantic Kernel's diagnostics settings.

Semantic Kernel traces itself with the OpenTelemetry GenAI conventions, on the global tracer provider: ``invoke_agent
<name>``, ``chat <model>`` (both only with its diagnostics on, ``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_
DIAGNOSTICS``) and, always, ``execute_tool <plugin>-<function>`` per kernel function call (``KernelFunction.invoke``).
That span starts with the tool's name and call id but no arguments: it gets the arguments just after it starts and the
result as it ends, and only with its sensitive diagnostics on (``..._DIAGNOSTICS_SENSITIVE``). Measured on
semantic-kernel 1.45.0 with a ``ChatCompletionAgent`` looping on one search: sensitive diagnostics on, the fifth
identical search ran and the sixth model call was vetoed; on its defaults, or with diagnostics on but not sensitive, the
loop ran all 30 auto-invoke attempts.

Here ``KernelFunction.invoke`` shows the breaker the call in process (:mod:`spanbreaker.private_calls`): its arguments
(``KernelArguments.dumps()``, what Semantic Kernel would put on the span) while its span starts, and the result (the
``FunctionResult``'s value as text, as Semantic Kernel writes it) when the function and its filters return, before the
span ends. The fifth identical call is vetoed before it runs, with diagnostics sensitive, on or off. Nothing is added to
the spans. Budgets on model calls and tokens need Semantic Kernel's diagnostics on (without them it makes no model-call
span); a tool-call budget counts the ``execute_tool`` spans either way. ``Tripped`` (a ``BaseException``) comes out of
``agent.get_response`` / ``invoke``: Semantic Kernel's function-invocation loop catches only ``Exception``.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

from ..private_calls import PrivateCall, current, showing
from ._patching import PatchingAdapter
from .base import PatchLog

logger = logging.getLogger("spanbreaker")

INVOKE_PARAMETERS = ("self", "kernel", "arguments", "metadata")
"""``KernelFunction.invoke``'s leading parameters, as this adapter reads them."""


def _arguments(arguments: Any, kwargs: dict[str, Any]) -> str | None:
    """The call's arguments as Semantic Kernel writes them on the span (``KernelArguments.dumps()``); None when they
    cannot be read (the call then goes on unshown)."""
    try:
        if arguments is None:
            from semantic_kernel.functions.kernel_arguments import KernelArguments

            arguments = KernelArguments(**kwargs)
        text = arguments.dumps()
    except Exception:
        logger.debug("spanbreaker could not read a kernel function's arguments", exc_info=True)
        return None
    return text if isinstance(text, str) else None


async def _invoke(wrapped: Any, function: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Around ``KernelFunction.invoke``: the call shown to the breaker while it runs."""
    name = getattr(function, "fully_qualified_name", None)
    arguments = args[1] if len(args) > 1 else kwargs.get("arguments")
    extra = {key: value for key, value in kwargs.items() if key not in ("kernel", "arguments", "metadata")}
    text = _arguments(arguments, extra) if isinstance(name, str) else None
    if text is None:
        return await wrapped(*args, **kwargs)
    with showing(name, text):  # type: ignore[arg-type]
        return await wrapped(*args, **kwargs)


def _result_text(context: Any) -> str | None:
    result = getattr(context, "result", None)
    if result is None:
        return None
    try:
        return str(result.value)
    except Exception as exc:  # as Semantic Kernel writes it on the span
        return str(exc)


def _call_stack(wrapped: Any, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Around ``Kernel.construct_call_stack``: a function invocation's stack (the function and its filters, run inside
    the call's span) that shows the breaker the result once it returned."""
    stack = wrapped(*args, **kwargs)

    async def run(context: Any) -> None:
        await stack(context)
        shown: PrivateCall | None = current()
        function = getattr(context, "function", None)
        if shown is not None and shown.name == getattr(function, "fully_qualified_name", None):
            shown.result = _result_text(context)

    return run


def check_compatible() -> None:
    """Raise if the Semantic Kernel installed is not one whose internals the patches were written for."""
    from semantic_kernel.filters.kernel_filters_extension import KernelFilterExtension
    from semantic_kernel.functions.kernel_function import KernelFunction

    problems = []
    invoke = vars(KernelFunction).get("invoke")
    if not inspect.iscoroutinefunction(invoke) or tuple(inspect.signature(invoke).parameters)[:4] != INVOKE_PARAMETERS:
        problems.append("KernelFunction.invoke")
    stack = vars(KernelFilterExtension).get("construct_call_stack")
    if stack is None or tuple(inspect.signature(stack).parameters) != ("self", "filter_type", "inner_function"):
        problems.append("KernelFilterExtension.construct_call_stack")
    if problems:
        raise RuntimeError("unexpected Semantic Kernel internals: " + ", ".join(problems))


def _function_invocation(wrapped: Any, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Only a function invocation's stack is shown (auto function invocation and prompt rendering pass as they are)."""
    from semantic_kernel.filters.filter_types import FilterTypes

    filter_type = args[0] if args else kwargs.get("filter_type")
    if filter_type is not FilterTypes.FUNCTION_INVOCATION:
        return wrapped(*args, **kwargs)
    return _call_stack(wrapped, kernel, args, kwargs)


class SemanticKernelAdapter(PatchingAdapter):
    name = "semantic_kernel"
    framework = "semantic_kernel"
    title = "Semantic Kernel"
    unguarded = "without its sensitive diagnostics, kernel function calls stay unknown to the breaker"

    def patch(self, patches: PatchLog) -> None:
        check_compatible()
        from semantic_kernel.filters.kernel_filters_extension import KernelFilterExtension
        from semantic_kernel.functions.kernel_function import KernelFunction

        patches.wrap(KernelFunction, "invoke", _invoke)
        patches.wrap(KernelFilterExtension, "construct_call_stack", _function_invocation)


ADAPTER = SemanticKernelAdapter()
