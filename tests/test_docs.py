"""The documentation's sources cover the public API and stay in step with the code.

Fast checks of docs/ that need no Sphinx: every public name has a reference
entry, every subcommand of ``bece`` has one, the notebooks rendered by the
docs are the repository's, the stored intersphinx inventories are the ones
docs/make_inventories.py writes, and each measurement table names the script
that produced it. (The site itself is built, with warnings as errors, by
.ci/run.)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
import tomllib

from bece._cli.parser import build_parser
from tests.test_public_api import PUBLIC

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference"


def reference_entries() -> dict[str, set[str]]:
    """module -> the names listed in autosummary directives under ``.. currentmodule:: module``."""
    entries: dict[str, set[str]] = {}
    for path in sorted(REFERENCE.glob("*.rst")):
        module = None
        in_autosummary = False
        for line in path.read_text().splitlines():
            if m := re.match(r"\.\. currentmodule:: (\S+)", line):
                module = m.group(1)
            elif line.startswith(".. autosummary::"):
                in_autosummary = True
            elif in_autosummary and line.startswith("   "):
                name = line.strip()
                if name and not name.startswith(":"):
                    assert module, f"{path.name}: autosummary before any currentmodule"
                    entries.setdefault(module, set()).add(name.lstrip("~"))
            elif line.strip():
                in_autosummary = False
    return entries


def test_reference_parser_reads_a_hand_written_case(tmp_path, monkeypatch):
    (tmp_path / "x.rst").write_text(
        "Title\n=====\n\n.. currentmodule:: pkg\n\n.. autosummary::\n   :toctree: generated\n\n"
        "   alpha\n   ~beta\n\nText.\n\n   gamma\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "REFERENCE", tmp_path)
    assert reference_entries() == {"pkg": {"alpha", "beta"}}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_public_name_has_a_reference_entry(module):
    listed = reference_entries().get(module, set())
    missing = sorted(set(PUBLIC[module]) - listed)
    assert not missing, f"docs/reference: no autosummary entry for {module}.{missing}"
    unknown = sorted(listed - set(PUBLIC[module]))
    assert not unknown, f"docs/reference lists {module}.{unknown}, which PUBLIC does not"


def test_every_reference_page_is_in_the_reference_index():
    index = (REFERENCE / "index.rst").read_text()
    for path in REFERENCE.glob("*.rst"):
        if path.stem != "index":
            assert re.search(rf"^\s+{path.stem}$", index, flags=re.M), f"{path.name} not in the toctree"


def subcommands() -> list[str]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(actions) == 1
    return sorted(actions[0].choices)


def test_every_cli_subcommand_has_a_reference_entry():
    text = (REFERENCE / "cli.rst").read_text()
    documented = set(re.findall(r"^   :path: (\S+)$", text, flags=re.M))
    assert subcommands(), "the parser has no subcommands"
    assert documented == set(subcommands())
    for name in subcommands():
        assert f"\nbece {name}\n" in text, f"cli.rst: no heading for bece {name}"


def test_cli_reference_texts_are_escaped_for_restructuredtext():
    spec = importlib.util.spec_from_file_location("cli_parser", DOCS / "cli_parser.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module._escape("columns p_0 ... with prefix p_, see *.parquet") == (
        "columns p_0 ... with prefix p\\_, see \\*.parquet"
    )
    module.parser()  # every help text of every subcommand goes through it


def _sources(path: Path) -> list[tuple[str, str]]:
    cells = json.loads(path.read_text())["cells"]
    return [(c["cell_type"], "".join(c["source"])) for c in cells]


def test_rendered_notebooks_are_the_repositorys_notebooks():
    """docs/notebooks/ holds executed copies: their cells must be notebooks/' cells
    (after changing a notebook, run `python docs/execute_notebooks.py`)."""
    originals = sorted((ROOT / "notebooks").glob("*.ipynb"))
    copies = sorted((DOCS / "notebooks").glob("*.ipynb"))
    assert [p.name for p in copies] == [p.name for p in originals]
    for original, copy in zip(originals, copies):
        assert _sources(copy) == _sources(original), f"docs/notebooks/{copy.name} is stale"
        code = [c for c in json.loads(copy.read_text())["cells"] if c["cell_type"] == "code"]
        assert all(c.get("outputs") for c in code[:1]), f"docs/notebooks/{copy.name} was not executed"
        errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, f"docs/notebooks/{copy.name} stored an error"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stored_inventories_are_the_ones_the_script_writes():
    inv = _load(DOCS / "make_inventories.py", "make_inventories")
    stored = {p.stem for p in (DOCS / "intersphinx").glob("*.inv")}
    assert stored == set(inv.PROJECTS)
    for name in inv.PROJECTS:
        assert (DOCS / "intersphinx" / f"{name}.inv").read_bytes() == inv.inventory(name), (
            f"docs/intersphinx/{name}.inv is stale: run python docs/make_inventories.py"
        )


def test_an_inventory_decodes_to_its_objects():
    import zlib

    inv = _load(DOCS / "make_inventories.py", "make_inventories")
    data = inv.inventory("numpyro")
    header, _, body = data.partition(b"compressed using zlib.\n")
    assert header.startswith(b"# Sphinx inventory version 2\n# Project: NumPyro\n")
    lines = zlib.decompress(body).decode().splitlines()
    assert "numpyro.infer.MCMC py:class 1 mcmc.html#numpyro.infer.mcmc.MCMC -" in lines
    assert len(lines) == len(inv.OBJECTS["numpyro"])


def test_every_table_names_the_script_that_produced_it():
    tables = sorted((DOCS / "tables").glob("*.md"))
    assert tables
    for path in tables:
        first = path.read_text().splitlines()[0]
        m = re.search(r"`python (benchmarks/\w+\.py)[^`]*`", first)
        assert m, f"docs/tables/{path.name}: the first line must name the command that produced it"
        assert (ROOT / m.group(1)).exists(), f"docs/tables/{path.name} names a missing {m.group(1)}"
        assert re.search(r"\d{4}-\d{2}-\d{2}", first), f"docs/tables/{path.name}: no date on the first line"


def test_every_table_is_included_by_a_page():
    pages = "\n".join(p.read_text() for p in DOCS.rglob("*.md") if "tables" not in p.parts)
    for path in (DOCS / "tables").glob("*.md"):
        assert f"tables/{path.name}" in pages, f"docs/tables/{path.name} is not included by any page"


def test_citation_matches_the_package():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    text = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^cff-version: 1\.2\.0$", text, flags=re.M)
    assert re.search(rf'^version: "?{re.escape(meta["version"])}"?$', text, flags=re.M)
    assert re.search(rf"^license: {re.escape(meta['license'])}$", text, flags=re.M)
    assert "bece developers" in text


def test_docs_extra_lists_what_conf_py_loads():
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["docs"]
    names = {re.split(r"[<>=\[ ]", req)[0].lower() for req in extra}
    for needed in ("sphinx", "pydata-sphinx-theme", "numpydoc", "myst-nb", "sphinx-gallery",
                   "sphinx-argparse", "sphinx-mathjax-offline", "ipykernel"):
        assert needed in names, f"the docs extra lacks {needed}"
    conf = (DOCS / "conf.py").read_text()
    for ext in ("numpydoc", "myst_nb", "sphinx_gallery.gen_gallery", "sphinxarg.ext",
                "sphinx-mathjax-offline",
                "sphinx.ext.intersphinx", "sphinx.ext.autosummary"):
        assert f'"{ext}"' in conf


def _readme_example() -> str:
    readme = (ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", readme, flags=re.S)[0]


def test_readme_example_compiles_and_shows_its_figure():
    """Fast: the README's example is short, valid Python, and its figure is in the repository."""
    code = _readme_example()
    assert len(code.strip().splitlines()) <= 16, "the README's example should stay short"
    compile(code, "README.md", "exec")
    assert "savefig(\"reliability.png\")" in code
    assert "docs/_static/reliability.png" in (ROOT / "README.md").read_text()
    assert (DOCS / "_static" / "reliability.png").stat().st_size > 10_000


@pytest.mark.slow
def test_readme_example_runs(tmp_path, monkeypatch):
    """The README's first Python block runs as written and draws its figure (5-25 s: a
    posterior and a calibration test; slow, like the notebooks' full runs)."""
    import matplotlib

    matplotlib.use("Agg")
    readme = (ROOT / "README.md").read_text()
    code = re.findall(r"```python\n(.*?)```", readme, flags=re.S)[0]
    assert len(code.strip().splitlines()) <= 16, "the README's example should stay short"
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "__main__"})
    assert (tmp_path / "reliability.png").stat().st_size > 10_000
    assert "docs/_static/reliability.png" in readme and (DOCS / "_static" / "reliability.png").exists()


def test_benchmark_tables_helper(tmp_path, monkeypatch):
    """benchmarks/doc_tables.py: the tables a script prints, under a first line naming its command."""
    import datetime

    tables = _load(ROOT / "benchmarks" / "doc_tables.py", "doc_tables")
    printed = "machine: 2 cores\nsome text\n| a | b |\n|---|---|\n| 1 | 2 |\n(12 s)\n\n| c |\n|---|\n"
    expected = "machine: 2 cores\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n| c |\n|---|"
    assert tables.table_blocks(printed) == expected
    assert tables.command("run.py", ["--quick", "a b"]) == "python benchmarks/run.py --quick 'a b'"
    assert tables.first_line("python benchmarks/run.py", datetime.date(2026, 11, 27)) == (
        "Produced by `python benchmarks/run.py` on 2026-11-27."
    )
    argv = ["--reps", "3", "--markdown", str(tmp_path / "t.md"), "--quick"]
    assert tables.pop_markdown("x.py", argv) == (str(tmp_path / "t.md"), ["--reps", "3", "--quick"])
    assert argv == ["--reps", "3", "--quick"]
    path, rest = tables.pop_markdown("recalibration.py", ["--part", "cost"], part_option="--part")
    assert Path(path) == DOCS / "tables" / "recalibration-cost.md" and rest == ["--part", "cost"]
    tables.write(tmp_path / "t.md", "| x |\n|---|", "x.py", ["--q"], date=datetime.date(2026, 1, 2))
    written = (tmp_path / "t.md").read_text()
    assert written == "Produced by `python benchmarks/x.py --q` on 2026-01-02.\n\n| x |\n|---|\n"
    tables.write("", "| x |", "x.py", [])  # an empty path writes nothing
    real_write = Path.write_text

    def half_then_fail(self, text, *args, **kwargs):  # a disk that fills half-way
        real_write(self, text[: len(text) // 2], *args, **kwargs)
        raise OSError("No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_fail)
    with pytest.raises(OSError, match="No space"):
        tables.write(tmp_path / "t.md", "| y |\n|---|", "x.py", [])
    monkeypatch.undo()
    assert (tmp_path / "t.md").read_text() == written  # the old table, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.md"]  # and no temporary file


def test_study_coverage_rule_and_agreement_verdicts():
    """The studies' coverage rule, by hand, and the agreement table's verdict per cell."""
    tables = _load(ROOT / "benchmarks" / "doc_tables.py", "doc_tables")
    # 0.80 + 2 sqrt(0.8 * 0.2 / 200) = 0.80 + 2 * 0.02828 = 0.8566 >= 0.85
    assert tables.meets_coverage_rule(0.80, 200)
    # 0.79 + 2 sqrt(0.79 * 0.21 / 200) = 0.79 + 2 * 0.02880 = 0.8476 < 0.85
    assert not tables.meets_coverage_rule(0.79, 200)
    assert tables.meets_coverage_rule(1.0, 200) and not tables.meets_coverage_rule(0.0, 200)
    with pytest.raises(ValueError, match="reps"):
        tables.meets_coverage_rule(0.9, 0)
    with pytest.raises(ValueError, match="covered"):
        tables.meets_coverage_rule(1.2, 200)

    study = _load(ROOT / "benchmarks" / "crosscheck_agreement.py", "crosscheck_agreement")

    def runs(agree, stuck=0, bad=0):
        return ([{"agree": True, "converged": True}] * agree
                + [{"agree": False, "converged": False}] * stuck
                + [{"agree": False, "converged": True}] * bad)

    # Binomial(20, 0.05) has its 97.5% point at 3; Binomial(1, 0.05) at 1
    assert study.cell_verdict(runs(17, bad=3)) == (0, 3, 3, "agree")
    assert study.cell_verdict(runs(16, bad=4)) == (0, 4, 3, "**do not agree**")
    # a run whose NUTS did not converge is not judged, in either direction
    assert study.cell_verdict(runs(0, stuck=1)) == (1, 0, 0, "not judged")
    assert study.cell_verdict(runs(1, stuck=1)) == (1, 0, 1, "agree")
    # one judged run that disagrees is a disagreement, not an allowance
    assert study.cell_verdict(runs(0, bad=1)) == (0, 1, 1, "**do not agree**")


def _transcripts_module():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("transcripts", DOCS / "transcripts.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["transcripts"] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def _pages():
    skip = {"_build", "_generated", "auto_examples", "jupyter_execute"}
    return [p for p in DOCS.rglob("*.md") if not skip & set(p.relative_to(DOCS).parts)]


def test_no_page_has_a_hand_written_transcript():
    """A '$ bece ...' block is a literalinclude of a transcript the build runs
    (docs/transcripts.py), so what a page shows is what bece prints; and
    every included transcript is one of its sessions, every session shown."""
    import re

    sessions = set(_transcripts_module().SESSIONS)
    included = set()
    for page in _pages():
        text = page.read_text()
        blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
        hand = [b.splitlines()[0] for b in blocks if b.lstrip().startswith("$ bece")]
        assert not hand, f"{page.relative_to(DOCS)}: a hand-written transcript: {hand[0]}"
        included |= set(re.findall(r"_generated/transcripts/(\w+)\.txt", text))
    assert included <= sessions, included - sessions
    assert sessions <= included, f"sessions no page shows: {sessions - included}"


def test_a_transcript_is_what_the_command_prints():
    """The generator runs the command in the session's folder and keeps its
    first lines: the calibrated data's report opens with its interval [0, 0]
    and the bounds beside it."""
    text = _transcripts_module().run("report_calibrated")
    lines = text.splitlines()
    assert lines[0] == "$ bece report calibrated.csv --no-verdict"
    assert lines[1] == "bece report: calibrated.csv"
    assert any(line.startswith("  90% interval  [0.0000, 0.0000]") for line in lines)
    assert any(line.startswith("  if not 0 ") for line in lines) and lines[-1] == "  ..."
    # the README's "Why not one number?" quotes this run, rounded
    import re

    def number(prefix, pattern=r"([0-9.]+)"):
        line = next(x for x in lines if x.startswith(prefix))
        return float(re.search(pattern, line[len(prefix):]).group(1))

    readme = " ".join((ROOT / "README.md").read_text().split())
    plugin, pcal = number("  plug-in ECE"), number("  P(calibrated)")
    bound = number("  if not 0", r"bound ([0-9.]+)")
    assert f"plug-in ECE of {plugin:.3f}" in readme
    assert f"calibrated with probability {pcal:.2f}" in readme
    assert f"its ECE is below {bound:.3f} with probability 0.9" in readme


def test_explanation_pages_explain_the_design_as_it_is():
    """The explanation pages describe the design as it is, not the history of
    its changes."""
    history = ("this round", "before this change", "no longer", "used to be", "now uses",
               "until now", "was changed")
    for page in (DOCS / "explanation").glob("*.md"):
        text = " ".join(page.read_text().lower().split())
        found = [h for h in history if h in text]
        assert not found, f"{page.name}: {found}"
