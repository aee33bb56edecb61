"""Column conventions of prediction tables (files and dataframes)."""

from __future__ import annotations

import re

__all__ = [
    "select_columns",
]

_PROB_COL = re.compile(r"^p_(\d+)$")


def select_columns(names: list[str], source: str) -> tuple[str, list[str], str | None]:
    """Pick the y_true, probability and y_pred columns among ``names``.

    Returns ``(y_true, prob_columns, y_pred_or_None)``; raises ``ValueError``
    naming the file and what is missing or ambiguous: a column bece uses
    that appears twice (two ``y_true`` columns, or ``p_1`` and ``p_01`` for
    the same class) is an error, since either choice would be a guess.
    Other columns are ignored, duplicated or not.
    """
    if "y_true" not in names:
        raise ValueError(f"{source}: no 'y_true' column (found: {', '.join(names) or 'none'})")
    for name in ("y_true", "y_prob", "y_pred"):
        if names.count(name) > 1:
            raise ValueError(
                f"{source}: column '{name}' appears {names.count(name)} times; bece cannot "
                "tell which to use: rename or drop the others"
            )
    numbered: dict[int, str] = {}
    for n in names:
        if (m := _PROB_COL.match(n)) is None:
            continue
        k = int(m.group(1))
        if k in numbered:
            same = f"column '{n}' appears twice" if numbered[k] == n else (
                f"columns '{numbered[k]}' and '{n}' both hold class {k}")
            raise ValueError(f"{source}: {same}; bece cannot tell which to use: rename or drop "
                             "the others")
        numbered[k] = n
    if "y_prob" in names and numbered:
        raise ValueError(
            f"{source}: has both 'y_prob' and 'p_k' columns; keep 'y_prob' for a "
            "binary classifier or 'p_0 ... p_{K-1}' for K classes, not both"
        )
    if "y_prob" in names:
        probs = ["y_prob"]
    elif numbered:
        k = len(numbered)
        if sorted(numbered) != list(range(k)):
            raise ValueError(
                f"{source}: probability columns must be p_0 ... p_{{K-1}} without gaps, "
                f"found {', '.join(numbered[i] for i in sorted(numbered))}"
            )
        if k < 2:
            raise ValueError(f"{source}: found only p_0; K >= 2 class columns are needed "
                             "(use 'y_prob' for P(y=1) of a binary classifier)")
        probs = [numbered[i] for i in range(k)]
    else:
        raise ValueError(
            f"{source}: no probability columns: need 'y_prob' or 'p_0 ... p_{{K-1}}' "
            f"(found: {', '.join(names)})"
        )
    return "y_true", probs, ("y_pred" if "y_pred" in names else None)
