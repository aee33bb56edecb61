"""Result tables of the benchmark scripts, written for the documentation.

Each script that measures something the docs show writes its Markdown
table(s) to ``docs/tables/<script>.md`` (option ``--markdown PATH``; an empty
PATH writes nothing). The file's first line names the exact command and the
date, so that a table on the validation or performance page always says what
produced it; the docs include these files, and nobody retypes a number.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import shlex
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "docs" / "tables"


#: The coverage a 90% interval must reach in a validation study's cell.
COVERAGE_TARGET = 0.85


def meets_coverage_rule(covered: float, reps: int, target: float = COVERAGE_TARGET) -> bool:
    """The validation rule on a cell's observed coverage c over R replications:
    c + 2 sqrt(c (1 - c) / R) >= 0.85, two Monte Carlo standard errors at c
    itself allowed (at c = 0.80 and R = 200: 0.80 + 2 x 0.028 = 0.857, met).
    A study reports R < 200 apart rather than judging it."""
    if reps < 1:
        raise ValueError(f"reps must be at least 1, got {reps}")
    if not 0.0 <= covered <= 1.0:
        raise ValueError(f"covered must be a fraction in [0, 1], got {covered}")
    return bool(covered + 2 * (covered * (1 - covered) / reps) ** 0.5 >= target)


def default_path(script: str, part: str = "") -> Path:
    """``docs/tables/<script stem>[-<part>].md``."""
    stem = Path(script).stem
    return TABLES / (f"{stem}-{part}.md" if part else f"{stem}.md")


def add_markdown_option(parser: argparse.ArgumentParser, script: str, part: str = "") -> None:
    """``--markdown PATH``, by default the script's file under docs/tables/."""
    default = default_path(script, part)
    parser.add_argument(
        "--markdown", metavar="PATH", default=str(default),
        help="write the result table(s) here as Markdown, the first line naming this command "
        f"and the date ('' writes nothing; default: docs/tables/{default.name})",
    )


def command(script: str, argv: Sequence[str] | None = None) -> str:
    """The command line that ran: ``python benchmarks/<script> <args>``."""
    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join(["python", f"benchmarks/{Path(script).name}", *map(shlex.quote, args)])


def first_line(cmd: str, date: datetime.date | None = None) -> str:
    date = date or datetime.date.today()
    return f"Produced by `{cmd}` on {date.isoformat()}."


def write(path: str | Path | None, body: str, script: str, argv: Sequence[str] | None = None,
          date: datetime.date | None = None) -> None:
    """Write ``body`` (Markdown) to ``path`` under its first line, whole or not at all;
    nothing when path is empty."""
    if not path:
        return
    from bece._base.files import atomic_output

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as tmp:  # renamed when whole: never half a table
        tmp.write_text(f"{first_line(command(script, argv), date)}\n\n{body.strip()}\n")
    print(f"table written to {path}", file=sys.stderr)


def table_blocks(text: str, keep: Sequence[str] = ("machine:",)) -> str:
    """The Markdown tables of printed output: runs of lines starting with '|', blank-separated,
    and the lines starting with one of ``keep`` (the machine's description) before them."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        if any(line.startswith(k) for k in keep):
            blocks.append([line.strip()])
        elif line.lstrip().startswith("|"):
            current.append(line.strip())
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return "\n\n".join("\n".join(b) for b in blocks)


class _Tee(io.TextIOBase):
    def __init__(self, stream: io.TextIOBase) -> None:
        self.stream, self.buffer_ = stream, io.StringIO()

    def write(self, s: str) -> int:
        self.buffer_.write(s)
        return self.stream.write(s)

    def flush(self) -> None:
        self.stream.flush()


@contextlib.contextmanager
def printed_tables(path: str | Path | None, script: str, argv: Sequence[str] | None = None) -> Iterator[None]:
    """Print as usual; at the end, write the Markdown tables printed meanwhile to ``path``."""
    tee = _Tee(sys.stdout)  # type: ignore[arg-type]
    with contextlib.redirect_stdout(tee):
        yield
    body = table_blocks(tee.buffer_.getvalue())
    if body:
        write(path, body, script, argv)


def pop_markdown(script: str, argv: list[str] | None = None, part_option: str = "") -> tuple[str, list[str]]:
    """Take ``--markdown PATH`` out of ``argv`` (default ``sys.argv[1:]``, changed in place).

    For a script whose own parser does not know the option: returns the path
    (default: the script's docs/tables file; with ``part_option``, e.g. ``--part``,
    the file of that part) and the remaining arguments, which name the command.
    """
    args = sys.argv if argv is None else argv
    start = 1 if argv is None else 0
    rest = args[start:]
    path = None
    for i, a in enumerate(rest):
        if a == "--markdown" and i + 1 < len(rest):
            path = rest[i + 1]
            del rest[i:i + 2]
            break
        if a.startswith("--markdown="):
            path = a.split("=", 1)[1]
            del rest[i]
            break
    args[start:] = rest
    if path is None:
        part = ""
        if part_option and part_option in rest and rest.index(part_option) + 1 < len(rest):
            part = rest[rest.index(part_option) + 1]
        path = str(default_path(script, part))
    return path, list(rest)


def run_main(main, script: str, part_option: str = ""):
    """Run ``main()`` with ``--markdown PATH`` taken from the command line, its printed
    Markdown tables written to PATH (default docs/tables/<script>.md; '' writes nothing)."""
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(f"--markdown PATH: write the printed tables to PATH (default {default_path(script).name} "
              "in docs/tables/; '' writes nothing)", file=sys.stderr)
    path, argv = pop_markdown(script, part_option=part_option)
    with printed_tables(path, script, argv):
        return main()
