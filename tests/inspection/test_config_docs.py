"""docs/configuration.md is generated from BreakerConfig; these tests fail when the two drift apart.

Fix a failure with ``python scripts/gen_config_docs.py`` (and, for a field without a meaning, a docstring
under the field in ``config.py``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from spanbreaker.config import BreakerConfig

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gen_config_docs.py"


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_config_docs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_configuration_doc_is_up_to_date(generator: ModuleType) -> None:
    committed = generator.OUTPUT.read_text(encoding="utf-8")
    assert committed == generator.render(), "docs/configuration.md is stale: run python scripts/gen_config_docs.py"
    assert generator.main(["--check"]) == 0


def test_every_field_is_documented_with_its_variable_and_a_meaning(generator: ModuleType) -> None:
    rows = {line.split("|")[1].strip(): line for line in generator.render().splitlines()
            if line.startswith("| `")}
    for field in dataclasses.fields(BreakerConfig):
        row = rows.get(f"`{field.name}`")
        assert row is not None, field.name
        assert f"SPANBREAKER_{field.name.upper()}" in row or field.name == "state"
        meaning = row.rstrip(" |").rsplit("|", 1)[1].strip()
        assert meaning, f"{field.name} has no meaning: add a docstring under the field"


def test_readme_variable_table_states_the_defaults() -> None:
    """The README's table of ``SPANBREAKER_*`` variables gives each setting's default as ``BreakerConfig`` has it
    (a default changed in code and not in the README told users the old one)."""
    readme = (SCRIPT.parents[1] / "README.md").read_text(encoding="utf-8")
    fields = {f"SPANBREAKER_{field.name.upper()}": field for field in dataclasses.fields(BreakerConfig)}
    checked = 0
    for line in readme.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`SPANBREAKER_"):
            continue
        field = fields.get(cells[0].strip("`"))
        if field is None or cells[1] == "—":
            continue
        default = field.default
        stated = cells[1].strip("`")
        assert (stated == str(default) if isinstance(default, str) else float(stated) == float(default)), (
            f"README says {cells[0]} defaults to {cells[1]}; BreakerConfig has {default!r}")
        checked += 1
    assert checked >= 6, "the README's variable table was not found"
