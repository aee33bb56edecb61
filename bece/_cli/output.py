"""The files ``bece`` writes: checked before any work, written whole or not at all.

Every output path (``--out``, ``--plot``, ``--html``) is checked when the command
starts, before any file is read: its type (by suffix), that its folder
exists and takes a new file, and that it is none of the command's input
files (the same path, or the same file by another name: a symbolic or hard
link) and not inside an input folder. Each file is then written to a
temporary file in the same folder and renamed over the target
(:func:`~bece._base.files.atomic_output`); a rename within a file system is atomic, so after
any interruption the target holds either its old content or the complete
new file. A kill (SIGKILL) during the write can leave the temporary file
``.NAME.XXXXXXXX.SUFFIX`` behind; the target is untouched.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from .._base.files import atomic_output

__all__ = [
    "OUT_FORMATS",
    "atomic_output",
    "check_outputs",
]

#: Formats ``--out`` writes, by suffix.
OUT_FORMATS = (".csv", ".parquet", ".npz")

#: The options naming input files, in each subcommand's namespace.
_INPUTS = ("file", "file_a", "file_b", "val_file", "test_file")
#: The options naming output files.
_OUTPUTS = (("--out", "out"), ("--plot", "plot"), ("--html", "html"))


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def _check_type(option: str, path: str) -> None:
    suffix = Path(path).suffix
    if option == "--out":
        if suffix.lower() not in OUT_FORMATS:
            raise ValueError(f"--out {path}: unknown file type '{suffix or '(none)'}'; use one of "
                             f"{', '.join(OUT_FORMATS)}")
        return
    if option == "--html":
        if suffix.lower() not in (".html", ".htm"):
            raise ValueError(f"--html {path}: the report is one HTML file; name it .html, got "
                             f"'{suffix or '(none)'}'")
        return
    from matplotlib.figure import Figure

    supported = Figure().canvas.get_supported_filetypes()
    if suffix.lower().lstrip(".") not in supported:
        raise ValueError(f"--plot {path}: unknown image type '{suffix or '(none)'}'; use one of "
                         + ", ".join(f".{k}" for k in sorted(supported)))


def _check_writable(option: str, path: str, target: Path) -> None:
    """A new file can be made in the target's folder (the temporary file of
    :func:`~bece._base.files.atomic_output`): permission bits do not stop root, a read-only
    file system does."""
    parent = target.parent
    if not parent.is_dir():
        raise ValueError(f"{option} {path}: directory '{parent}' does not exist")
    if target.is_dir():
        raise ValueError(f"{option} {path}: is a directory; name a file")
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{target.name}.", suffix=".probe")
    except OSError as exc:
        raise ValueError(f"{option} {path}: cannot write in directory '{parent}' "
                         f"({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def check_outputs(args: Any) -> None:
    """ValueError naming the option unless every output path of ``args`` can
    be written without touching an input: called before any work."""
    inputs = [Path(p) for p in (getattr(args, k, None) for k in _INPUTS) if p is not None]
    seen: dict[Path, str] = {}
    for option, dest in _OUTPUTS:
        path = getattr(args, dest, None)
        if path is None:
            continue
        _check_type(option, path)
        target = Path(path)
        for source in inputs:
            if _same_file(target, source):
                raise ValueError(f"{option} {path} is the input file {source}: bece never writes "
                                 "over its input; choose another path")
            if source.is_dir() and source.resolve() in target.resolve().parents:
                raise ValueError(f"{option} {path} is inside the input folder {source}: choose a "
                                 "path outside it")
        for other, other_option in seen.items():
            if _same_file(target, other):
                raise ValueError(f"{option} and {other_option} name the same file {path}")
        seen[target] = option
        _check_writable(option, path, target)
