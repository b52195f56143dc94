"""The adapter contract, and the one way adapters patch a framework and put it back.

An adapter (one module per framework, exposing ``ADAPTER``) puts the framework's instrumentor on the breaker's
provider and makes a trip stop the framework's run. ``spanbreaker.instrument()`` drives every available one
through :class:`Adapter`. Framework imports stay inside ``instrument`` so spanbreaker imports without them.

Every change an adapter makes to a framework class or module goes through a :class:`PatchLog`, so
``uninstrument`` puts back exactly what was there (the original value, or nothing where the attribute was
inherited), in reverse order, even when the instrumentor patched the same attribute in between.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import Steered

if TYPE_CHECKING:
    from ..processor import BreakerSpanProcessor

logger = logging.getLogger("spanbreaker")


class Adapter(Protocol):
    name: str

    def available(self) -> bool:
        """The framework and its OpenInference instrumentor are importable (nothing is imported to tell)."""
        ...

    def instrument(self, tracer_provider: Any, processor: BreakerSpanProcessor) -> None:
        """Instrument the framework on ``tracer_provider`` (whose processors include ``processor``);
        idempotent."""
        ...

    def uninstrument(self) -> None:
        """Undo :meth:`instrument` exactly; a no-op when not instrumented."""
        ...


class AttributeRecorder:
    """Stands in for a span while an instrumentor's own extractor names a call's attributes (an adapter runs it
    before the span starts, where the instrumentor runs it just after)."""

    def __init__(self) -> None:
        self.attributes: dict[str, Any] = {}

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        self.attributes.update(attributes)

    def is_recording(self) -> bool:
        return True


class PendingAttributes:
    """The attributes of the call whose span is about to start, for :class:`StartAttributes`: an adapter sets
    :attr:`var` around the instrumentor's wrapper (a context variable: concurrent async calls on one thread each see
    their own), and they are handed out once, so a span the call itself starts later gets nothing of them."""

    def __init__(self, name: str) -> None:
        self.var: ContextVar[dict[str, Any] | None] = ContextVar(name, default=None)

    @property
    def attributes(self) -> dict[str, Any] | None:
        value = self.var.get()
        if value is not None:
            self.var.set(None)
        return value

    def around(self, attributes: Callable[[Any, tuple[Any, ...], dict[str, Any]], dict[str, Any] | None],
               asynchronous: bool) -> Callable[..., Any]:
        """A ``wrapt`` wrapper for one of an instrumentor's own wrappers (``PatchLog.wrap``): the start attributes
        ``attributes(instance, args, kwargs)`` names for the call pending while it runs (and starts its span)."""
        var = self.var
        if asynchronous:
            async def run_async(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
                token = var.set(attributes(instance, args, kwargs))
                try:
                    return await wrapped(*args, **kwargs)
                finally:
                    var.reset(token)
            return run_async

        def run(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            token = var.set(attributes(instance, args, kwargs))
            try:
                return wrapped(*args, **kwargs)
            finally:
                var.reset(token)
        return run


class StartAttributes:
    """Stands in for an instrumentor's tracer: ``start_span`` / ``start_as_current_span`` add the start attributes
    pending on this thread (``pending.attributes``, set by the adapter around the instrumentor's own start), every
    other attribute is the tracer's own. For instrumentors that write a span's attributes only when it ends, or
    just after it started (LangChain, LlamaIndex, CrewAI): the breaker decides at start, from what the span says
    then."""

    def __init__(self, tracer: Any, pending: Any) -> None:
        self.wrapped = tracer
        self.pending = pending

    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        return self.wrapped.start_span(*args, **self._with_pending(args, kwargs))

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        return self.wrapped.start_as_current_span(*args, **self._with_pending(args, kwargs))

    def _with_pending(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        extra = getattr(self.pending, "attributes", None)
        if extra and len(args) < 4:  # the instrumentors pass everything after the name by keyword
            given = kwargs.get("attributes")
            kwargs["attributes"] = {**extra, **given} if given else extra
        return kwargs

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


class PatchLog:
    """Attributes replaced on classes and modules, with what was there before, undone in reverse order."""

    def __init__(self) -> None:
        self._entries: list[tuple[Any, str, Any, bool] | Callable[[], None]] = []
        """(owner, attribute, original value, whether the owner itself held it) per patch; a function to call for
        a patch whose undo depends on what happened since (:meth:`on_undo`)."""

    def __bool__(self) -> bool:
        return bool(self._entries)

    def patch(self, owner: Any, attribute: str, value: Any, *, original: Any = None) -> None:
        """Set ``owner.attribute = value``. ``original`` is what to restore when the owner does not hold the
        attribute itself (an inherited hook); without one the attribute is deleted again on undo."""
        present = attribute in vars(owner)
        self._entries.append((owner, attribute, vars(owner)[attribute] if present else original, present))
        setattr(owner, attribute, value)

    def wrap(self, owner: Any, attribute: str, wrapper: Callable[..., Any]) -> None:
        """Wrap ``owner.attribute`` in a ``wrapt.FunctionWrapper`` calling ``wrapper(wrapped, instance, args,
        kwargs)``."""
        from wrapt import FunctionWrapper, resolve_path

        _, _, original = resolve_path(owner, attribute)  # what wrapt.wrap_function_wrapper wraps: the raw descriptor
        self.patch(owner, attribute, FunctionWrapper(original, wrapper))

    def on_undo(self, restore: Callable[[], None]) -> None:
        """Call ``restore`` on undo, in turn with the patches: for a change whose undo depends on what happened since
        (another library's wrapper that this one composed with, which that library may have removed by then)."""
        self._entries.append(restore)

    def undo(self) -> None:
        """Put back everything, newest first. A class or module that went away is skipped (logged at DEBUG)."""
        while self._entries:
            entry = self._entries.pop()
            if not isinstance(entry, tuple):
                try:
                    entry()
                except Exception:
                    logger.debug("spanbreaker could not undo %s", entry, exc_info=True)
                continue
            owner, attribute, original, present = entry
            try:
                if present or original is not None:
                    setattr(owner, attribute, original)
                else:
                    delattr(owner, attribute)
            except Exception:
                logger.debug("spanbreaker could not restore %s.%s", owner, attribute, exc_info=True)


class SharedPatches:
    """Patches of a framework that two adapters need (one per instrumentor that traces it), applied once while
    either holds them: both wrapping the same method would run the wrapper twice per call.

    ``apply(patches)`` adds them to the log it is given (and raises on a release whose internals differ; what it
    added is then undone)."""

    def __init__(self, apply: Callable[[PatchLog], None]) -> None:
        self._apply = apply
        self._lock = threading.Lock()
        self._holders: set[str] = set()
        self._patches = PatchLog()

    def hold(self, holder: str, patches: PatchLog) -> None:
        """Apply the patches unless another adapter holds them; undoing ``patches`` (the holder's own log) lets go."""
        with self._lock:
            if not self._holders:
                try:
                    self._apply(self._patches)
                except Exception:
                    self._patches.undo()
                    raise
            self._holders.add(holder)
        patches.on_undo(lambda: self._release(holder))

    def _release(self, holder: str) -> None:
        with self._lock:
            self._holders.discard(holder)
            if not self._holders:
                self._patches.undo()


class SteeredCall:
    """The steer raised where a tool call's span started, held while the framework goes on with that call, so that
    the framework's own tool execution can answer it with the steer's message instead of running the tool (where
    the ``Steered`` itself would end the run: ADK, Haystack). A context variable: each task and nested call sees
    its own."""

    def __init__(self, name: str) -> None:
        self._steer: ContextVar[Steered | None] = ContextVar(name, default=None)

    @contextmanager
    def holding(self, steer: Steered) -> Iterator[None]:
        token = self._steer.set(steer)
        try:
            yield
        finally:
            self._steer.reset(token)

    def get(self) -> Steered | None:
        """The steer of the call running in this context, or None."""
        return self._steer.get()
