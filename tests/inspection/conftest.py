from __future__ import annotations

import os

from ..otlp_receiver import otlp_receiver

__all__ = ["otlp_receiver"]

# beeai pulls in LiteLLM, which otherwise tries to download a price map at import: these tests run offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
