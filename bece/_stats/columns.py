"""Column conventions of prediction tables (files and dataframes).

By default a table has ``y_true`` and either ``y_prob`` (:math:`P(y = 1)`,
or with ``y_pred`` the confidence of ``y_pred``) or ``p_0 ... p_{K-1}``
(class probabilities), optionally ``y_pred``. Every name is an option:
``y_true_col``, ``y_prob_col`` (one probability column, used even when
``p_k`` columns are there too: ``y_prob_col="p_1"`` reads a binary
classifier's class-probability file as :math:`P(y = 1)`), ``prob_prefix``
(columns ``<prefix>0 ... <prefix>{K-1}``) and ``y_pred_col`` (used when
present; required when named).
"""

from __future__ import annotations

import re

__all__ = [
    "DEFAULT_COLUMNS",
    "check_column_options",
    "select_columns",
]

#: The default names (the options of :func:`select_columns`).
DEFAULT_COLUMNS = {"y_true_col": "y_true", "y_prob_col": None, "prob_prefix": "p_",
                   "y_pred_col": None}


def check_column_options(
    y_true_col: str = "y_true", y_prob_col: str | None = None, prob_prefix: str = "p_",
    y_pred_col: str | None = None,
) -> None:
    """Refuse column options that are not non-empty strings (None where optional)."""
    for value, what, optional in ((y_true_col, "y_true_col", False),
                                  (y_prob_col, "y_prob_col", True),
                                  (prob_prefix, "prob_prefix", False),
                                  (y_pred_col, "y_pred_col", True)):
        if value is None and optional:
            continue
        if not isinstance(value, str) or not value:
            raise ValueError(f"{what} must be a non-empty string, got {value!r}")


def select_columns(
    names: list[str],
    source: str,
    *,
    y_true_col: str = "y_true",
    y_prob_col: str | None = None,
    prob_prefix: str = "p_",
    y_pred_col: str | None = None,
) -> tuple[str, list[str], str | None]:
    """Pick the y_true, probability and y_pred columns among ``names``.

    Returns ``(y_true, prob_columns, y_pred_or_None)``; raises ``ValueError``
    naming the file and what is missing or ambiguous: a column bece uses
    that appears twice (two ``y_true`` columns, or ``p_1`` and ``p_01`` for
    the same class) is an error, since either choice would be a guess.
    Other columns are ignored, duplicated or not. The options are the
    module docstring's (``y_pred_col=None``: ``"y_pred"`` if present).
    """
    check_column_options(y_true_col, y_prob_col, prob_prefix, y_pred_col)
    if y_true_col not in names:
        flag = "" if y_true_col == "y_true" else " (y_true_col)"
        raise ValueError(f"{source}: no '{y_true_col}' column{flag} (found: "
                         f"{', '.join(names) or 'none'})")
    pred_col = y_pred_col if y_pred_col is not None else "y_pred"
    if y_pred_col is not None and y_pred_col not in names:
        raise ValueError(f"{source}: no '{y_pred_col}' column (y_pred_col; found: "
                         f"{', '.join(names)})")
    single = y_prob_col if y_prob_col is not None else "y_prob"
    for name in (y_true_col, single, pred_col):
        if names.count(name) > 1:
            raise ValueError(
                f"{source}: column '{name}' appears {names.count(name)} times; bece cannot "
                "tell which to use: rename or drop the others"
            )
    y_pred = pred_col if pred_col in names else None
    if y_prob_col is not None:
        if y_prob_col not in names:
            raise ValueError(f"{source}: no '{y_prob_col}' column (y_prob_col; found: "
                             f"{', '.join(names)})")
        return y_true_col, [y_prob_col], y_pred
    numbered = _numbered(names, prob_prefix, source)
    if "y_prob" in names and numbered:
        raise ValueError(
            f"{source}: has both 'y_prob' and '{prob_prefix}k' columns; keep 'y_prob' for a "
            f"binary classifier or '{prob_prefix}0 ... {prob_prefix}{{K-1}}' for K classes, not "
            f"both (or choose one: y_prob_col, e.g. '{prob_prefix}1' for P(y = 1))"
        )
    if "y_prob" in names:
        return y_true_col, ["y_prob"], y_pred
    if not numbered:
        raise ValueError(
            f"{source}: no probability columns: need 'y_prob' or '{prob_prefix}0 ... "
            f"{prob_prefix}{{K-1}}' (found: {', '.join(names)})"
        )
    k = len(numbered)
    if sorted(numbered) != list(range(k)):
        raise ValueError(
            f"{source}: probability columns must be {prob_prefix}0 ... {prob_prefix}{{K-1}} "
            f"without gaps, found {', '.join(numbered[i] for i in sorted(numbered))}"
        )
    if k < 2:
        raise ValueError(f"{source}: found only {prob_prefix}0; K >= 2 class columns are needed "
                         "(use 'y_prob' for P(y=1) of a binary classifier)")
    return y_true_col, [numbered[i] for i in range(k)], y_pred


def _numbered(names: list[str], prefix: str, source: str) -> dict[int, str]:
    """Class index -> column of the columns ``<prefix><index>``."""
    pattern = re.compile(rf"^{re.escape(prefix)}(\d+)$")
    numbered: dict[int, str] = {}
    for n in names:
        if (m := pattern.match(n)) is None:
            continue
        k = int(m.group(1))
        if k in numbered:
            same = f"column '{n}' appears twice" if numbered[k] == n else (
                f"columns '{numbered[k]}' and '{n}' both hold class {k}")
            raise ValueError(f"{source}: {same}; bece cannot tell which to use: rename or drop "
                             "the others")
        numbered[k] = n
    return numbered
