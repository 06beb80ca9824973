"""The notebooks under examples/: valid nbformat-4 JSON whose code cells are valid Python, each
saved as executed top to bottom (scripts/run-notebooks on the H200) with no error output and no
check printed as False."""

import ast
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.ipynb"))


def test_the_five_notebooks_are_there():
    assert [p.stem[:2] for p in NOTEBOOKS] == ["00", "01", "02", "03", "04"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_parses_and_was_executed_in_order(path):
    notebook = json.loads(path.read_text())
    assert notebook["nbformat"] == 4
    cells = notebook["cells"]
    assert cells[0]["cell_type"] == "markdown" and "".join(cells[0]["source"]).startswith("# ")
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code
    for i, cell in enumerate(code, 1):
        ast.parse("".join(cell["source"]), filename=f"{path.name} code cell {i}")
        assert cell["execution_count"] == i, f"{path.name}: code cell {i} was not executed in order"
        assert not [o for o in cell["outputs"] if o["output_type"] == "error"], f"{path.name}: cell {i} failed"
        printed = "".join("".join(o.get("text", "")) for o in cell["outputs"] if o["output_type"] == "stream")
        assert ": False" not in printed, f"{path.name}: cell {i} printed a failed check:\n{printed}"
