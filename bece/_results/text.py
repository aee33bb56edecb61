"""Words and numbers of the results' ``str()``: what the input was, which model, how sure.

Shared by the result types and by the command line, so that both say the
same thing the same way.
"""

from __future__ import annotations

import math

__all__ = [
    "BINARY_NOTE",
    "INPUT_WORDS",
    "TOP_LABEL_SCOPE",
    "format_prob",
    "input_words",
]

#: How each input kind was read (:attr:`bece.CalibrationStats.kind`).
INPUT_WORDS = {
    "binary": "binary: y_prob = P(y = 1) against y_true",
    "top-label": "top-label: confidence = max_k p_k, correct = [argmax == y_true]",
    "triples": "triples: confidence of y_pred, correct = [y_pred == y_true]",
}

#: What the calibration test covers for top-label input.
TOP_LABEL_SCOPE = ("top-label: tests P(correct | confidence) = confidence, labels pooled; "
                   "no per-label test")

#: What K = 2 class probabilities are read as, and how to get P(y = 1) instead
#: (the command line's words: --y-prob-col).
BINARY_NOTE = ("an (n, 2) matrix is read top-label; for a binary classifier's P(y = 1), as "
               "scikit-learn's calibration_curve reads it, pass --y-prob-col p_1")

def input_words(kind: str | None) -> str:
    """The input kind in words ("input kind unknown" for None)."""
    if kind is None:
        return "input kind unknown"
    return INPUT_WORDS.get(kind, kind)


def format_prob(p: float | None, draws: int | None = None) -> str:
    """A probability to three decimals; "> 0.999" / "< 0.001" near the ends
    (or, with ``draws``, beyond what that many draws can tell: 1/draws)."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    floor = 1e-3 if draws is None else max(1e-3, 1.0 / draws)
    if p > 1 - floor:
        return f"> {1 - floor:.3g}"
    if p < floor:
        return f"< {floor:.3g}"
    return f"{p:.3f}"
