from __future__ import annotations

import pytest

from .spans import Harness, make_harness


@pytest.fixture
def harness() -> Harness:
    return make_harness()
