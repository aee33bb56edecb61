"""bece._base.memory: the size check before large allocations (robustness #3, #12, #16)."""

from __future__ import annotations

import pytest

from bece._base import memory
from bece._base.memory import check_allocation, format_bytes, memory_limit


@pytest.mark.parametrize(
    "text,expected",
    [("12345", 12345), ("64GiB", 64 * 2**30), ("500 MB", 500 * 10**6), ("1.5gib", int(1.5 * 2**30)),
     ("2TB", 2 * 10**12), ("1e9", 10**9), ("none", None), ("off", None)],
)
def test_limit_from_the_environment(monkeypatch, text, expected):
    monkeypatch.setenv("BECE_MEMORY_LIMIT", text)
    limit, source = memory_limit()
    assert limit == expected
    assert "BECE_MEMORY_LIMIT" in source


@pytest.mark.parametrize("text", ["lots", "64 parsecs", "-5GB", "GB"])
def test_a_bad_environment_value_is_refused_by_name(monkeypatch, text):
    monkeypatch.setenv("BECE_MEMORY_LIMIT", text)
    with pytest.raises(ValueError, match="BECE_MEMORY_LIMIT must be a number of bytes"):
        memory_limit()


def test_default_limit_is_half_the_available_memory(monkeypatch):
    monkeypatch.delenv("BECE_MEMORY_LIMIT", raising=False)
    monkeypatch.setattr(memory, "_available", lambda: 8 * 2**30)
    monkeypatch.setattr(memory, "_address_space_left", lambda: None)
    assert memory_limit() == (4 * 2**30, "half of the 8 GiB of memory available")
    monkeypatch.setattr(memory, "_available", lambda: None)
    assert memory_limit()[0] is None
    check_allocation(10**18, what="x", argument="n=1")  # unknown memory: no check


def test_available_memory_is_read_on_this_machine():
    avail = memory._available()
    assert avail is None or avail > 0


def test_check_names_the_argument_the_size_and_how_to_raise_the_limit(monkeypatch):
    monkeypatch.setenv("BECE_MEMORY_LIMIT", "1GiB")
    check_allocation(2**30, what="the draws", argument="num_samples=5")
    with pytest.raises(ValueError) as info:
        check_allocation(3 * 2**30, what="the draws", argument="num_samples=5",
                         advice="pass fewer num_samples")
    text = str(info.value)
    assert text.startswith("num_samples=5: the draws would take 3 GiB, more than bece's memory "
                           "limit of 1 GiB (set by BECE_MEMORY_LIMIT=1GiB); pass fewer num_samples")
    assert "BECE_MEMORY_LIMIT=64GiB" in text


def test_format_bytes():
    assert format_bytes(224 * 2**30) == "224 GiB"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(10) == "10 bytes"


def test_an_address_space_limit_lowers_the_limit(monkeypatch):
    """Under ulimit -v the process may map less than the machine has free:
    the limit is half of what RLIMIT_AS still allows when that is less."""
    monkeypatch.delenv("BECE_MEMORY_LIMIT", raising=False)
    monkeypatch.setattr(memory, "_available", lambda: 64 * 2**30)
    monkeypatch.setattr(memory, "_address_space_left", lambda: 6 * 2**30)
    assert memory_limit() == (3 * 2**30, "half of the 6 GiB the process's address-space limit "
                                         "(ulimit -v) still allows")
    monkeypatch.setattr(memory, "_address_space_left", lambda: 128 * 2**30)
    assert memory_limit()[0] == 32 * 2**30


def test_the_address_space_left_is_read_in_a_limited_process():
    """A child process under RLIMIT_AS of 4 GiB reads what it may still map:
    positive and below 4 GiB."""
    import subprocess
    import sys

    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30)); "
            "from bece._base import memory; print(memory._address_space_left())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    left = int(out.stdout)
    assert 0 < left < 4 << 30
