"""What spanbreaker's OpenInference instrumentation (``adapters/openinference.py``) adds to an OpenInference span.

A tool span made the way OpenInference instrumentors make one (``OITracer.start_as_current_span`` with the kind, the
tool's name and its arguments, the result set before it ends), on a real SDK ``TracerProvider`` with no processor (the
instrumentation's own cost, not the breaker's), with the instrumentation off and on, and with a ``TraceConfig`` that
hides nothing (everyone's default) and one that hides inputs and outputs. Each variant runs in a fresh process, the
four alternated ``--rounds`` times; CPU time (``time.process_time``) per span, the median over rounds, and the ratio of
each "on" to its "off" in the same round.

    python benchmarks/openinference_hidden_cost.py [--rounds 5] [--spans 20000]
"""

from __future__ import annotations

import argparse
import os
import sys

from _alternated import alternate, compare

VARIANTS = (("off", "shown"), ("on", "shown"), ("off", "hidden"), ("on", "hidden"))

CHILD = """
import sys, time
from opentelemetry.sdk.trace import TracerProvider
from openinference.instrumentation import OITracer, TraceConfig
from spanbreaker.adapters.openinference import ADAPTER
instrumentation, values, spans = sys.argv[1], sys.argv[2], int(sys.argv[3])
provider = TracerProvider()
if instrumentation == "on":
    ADAPTER.instrument(provider, None)
hidden = values == "hidden"
tracer = OITracer(provider.get_tracer("benchmark"), TraceConfig(hide_inputs=hidden, hide_outputs=hidden))
attributes = {"openinference.span.kind": "TOOL", "tool.name": "search", "input.value": '{"query": "weather in Paris"}'}

def run(count):
    for n in range(count):
        with tracer.start_as_current_span("search", attributes=attributes) as span:
            span.set_attribute("output.value", f"result {n}")

run(2000)
began = time.process_time()
run(spans)
print((time.process_time() - began) / spans * 1e6)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--spans", type=int, default=20000)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env = {k: v for k, v in env.items() if not k.startswith("OPENINFERENCE_")}
    times = alternate(CHILD, VARIANTS, args.rounds, [str(args.spans)], env)
    print(f"python {sys.version.split()[0]}, {args.spans} tool spans per run, median of {args.rounds} rounds, "
          f"CPU time; load average {os.getloadavg()[0]:.2f}")
    print(f"{'TraceConfig':<14}{'instrumentation off':>22}{'on':>12}{'added':>12}{'ratio (rounds)':>26}")
    for values in ("shown", "hidden"):
        off, on, added, ratio, low, high = compare(times[("off", values)], times[("on", values)])
        print(f"{values:<14}{off:>19.2f} us{on:>9.2f} us{added:>9.2f} us{ratio:>12.3f}x ({low:.3f}-{high:.3f})")


if __name__ == "__main__":
    main()
