"""LiteLLM reads its model price map from the network when imported unless told to use the copy it ships: these
tests run offline."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
