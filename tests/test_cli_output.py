"""The files bece writes (--out, --plot): never over an input, checked before
any work, complete or absent after any interruption (bece._cli.output)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from bece._cli import main
from bece._cli.output import atomic_output


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(3)
    p = rng.uniform(size=400)
    y = (rng.uniform(size=400) < p).astype(int)
    np.savez(tmp_path / "val.npz", y_true=y[:200], y_prob=p[:200])
    np.savez(tmp_path / "test.npz", y_true=y[200:], y_prob=p[200:])
    return tmp_path


@pytest.mark.parametrize("which", ["test", "val"])
@pytest.mark.parametrize("spelling", ["same", "relative", "symlink", "hardlink"])
def test_out_over_an_input_is_refused_before_any_work(files, capsys, monkeypatch, which, spelling):
    """Robustness-2 #1: `bece recalibrate VAL TEST --out TEST` replaced its own
    input and exited 0. Now refused, whatever the path's spelling, and the
    file is untouched."""
    monkeypatch.chdir(files)
    target = files / f"{which}.npz"
    out = {"same": target, "relative": Path(".") / f"{which}.npz",
           "symlink": files / "link.npz", "hardlink": files / "hard.npz"}[spelling]
    if spelling == "symlink":
        out.symlink_to(target)
    if spelling == "hardlink":
        os.link(target, out)
    before = digest(target)
    code, stdout, err = run(capsys, "recalibrate", files / "val.npz", files / "test.npz",
                            "--method", "platt", "--out", out)
    assert code == 2 and stdout == ""
    assert f"--out {out} is the input file" in err and "never writes over its input" in err
    assert digest(target) == before


def test_plot_over_an_input_is_refused(files, capsys):
    link = files / "figure.png"
    link.symlink_to(files / "test.npz")  # a figure path that is the input file by another name
    before = digest(files / "test.npz")
    code, out, err = run(capsys, "report", files / "test.npz", "--plot", link)
    assert code == 2 and out == "" and "--plot" in err and "is the input file" in err
    assert digest(files / "test.npz") == before


def test_output_inside_an_input_folder_is_refused(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "logs"
    folder.mkdir()
    rng = np.random.default_rng(0)
    pq.write_table(pa.table({"y_true": rng.integers(0, 2, 100), "y_prob": rng.uniform(size=100)}),
                   folder / "part-0.parquet")
    code, out, err = run(capsys, "report", folder, "--plot", folder / "fig.png")
    assert code == 2 and out == "" and "--plot" in err and "inside the input folder" in err
    assert sorted(p.name for p in folder.iterdir()) == ["part-0.parquet"]


@pytest.mark.parametrize("command", ["report", "recalibrate"])
def test_unwritable_output_is_refused_before_any_work(files, capsys, command):
    """Robustness-2: an unwritable --out was found only after the whole run.
    /proc takes no new file, even for root (permission bits do not stop root)."""
    if not Path("/proc").is_dir():
        pytest.skip("needs Linux's /proc")
    if command == "report":
        argv = ["report", files / "test.npz", "--plot", "/proc/bece-figure.png"]
        option = "--plot"
    else:
        argv = ["recalibrate", files / "val.npz", files / "test.npz", "--method", "platt",
                "--out", "/proc/bece-out.csv"]
        option = "--out"
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith(f"bece: error: {option} /proc/bece-") and "cannot write in directory '/proc'" in err


@pytest.mark.parametrize("option,name,message", [
    ("--out", "result.txt", "unknown file type '.txt'"),
    ("--out", "missing/result.csv", "directory 'FOLDER/missing' does not exist"),
    ("--out", "adir.csv", "is a directory; name a file"),
    ("--plot", "figure.csv", "unknown image type '.csv'"),
])
def test_invalid_output_paths_name_the_option(files, capsys, option, name, message):
    (files / "adir.csv").mkdir()
    argv = ["recalibrate", files / "val.npz", files / "test.npz", "--method", "platt",
            option, files / name]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith(f"bece: error: {option} {files / name}")
    assert message.replace("FOLDER", str(files)) in err


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_output(target) as tmp:
            tmp.write_text("half a fi")
            raise RuntimeError("disk full")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_a_written_file_has_ordinary_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_output(tmp_path / "out.csv") as tmp:
            tmp.write_text("y_true,y_prob\n1,0.5\n")
    finally:
        os.umask(old)
    assert (tmp_path / "out.csv").stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


# A child that writes --out as bece recalibrate does (bece._cli.recalibrate.write_predictions,
# through atomic_output) for 1.5 million rows (~60 MB of CSV), so the write takes long
# enough to be killed in the middle of it.
_WRITER = """
import sys
import numpy as np
from bece._cli.recalibrate import write_predictions
rng = np.random.default_rng(1)
n = 1_500_000
y, p = rng.integers(0, 2, n), rng.uniform(size=n)
print("ready", flush=True)
write_predictions(sys.argv[1], y, p)
print("done", flush=True)
"""


def _writer(path: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE,
                            text=True)


def test_sigkill_during_out_leaves_the_old_file_or_the_complete_new_one(tmp_path):
    """Robustness-2 #2: a kill during --out left a truncated CSV that
    `bece report` read as a smaller data set. Killed at moments spread from
    before the first byte to after the rename, the target is always either
    the old file or the complete new one."""
    reference = tmp_path / "reference.csv"
    child = _writer(reference)
    assert child.wait(timeout=300) == 0
    complete = digest(reference)
    target = tmp_path / "out.csv"
    old = b"y_true,y_prob\n1,0.25\n"
    seen = set()
    # seconds after the child's "ready" (data made, write not started); the last
    # moments fall after the rename (the child has finished)
    for delay in (None, 0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0, 30.0):
        target.write_bytes(old)
        child = _writer(target)
        if delay is None:  # before the data exist, let alone the first byte
            time.sleep(0.05)
        else:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
            end = time.monotonic() + delay
            while time.monotonic() < end and child.poll() is None:
                time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        if child.stdout is not None:
            child.stdout.close()
        state = "old" if target.read_bytes() == old else ("new" if digest(target) == complete else "bad")
        assert state != "bad", f"killed {delay} s into the write: the target is neither file"
        seen.add(state)
        for tmp in tmp_path.glob(".out.csv.*"):  # what a kill leaves; the target is untouched
            tmp.unlink()
    assert seen == {"old", "new"}, seen
