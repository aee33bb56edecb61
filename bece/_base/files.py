"""Files written whole or not at all."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_output"]


@contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path in ``path``'s folder, with its suffix, renamed to
    ``path`` when the block ends without error (and removed when it fails).

    The new file gets the permissions a file created by ``open`` would have
    (0o666 less the umask); its data are flushed to disk before the rename.
    """
    target = Path(path)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=target.suffix)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
