"""Write the example shipped with bece: bece/data/example.csv.

Predictions of a scikit-learn LogisticRegression on the held-out half of
scikit-learn's digits data set (10 classes, 899 test images). Columns:
``y_true`` and the class probabilities ``p_0 ... p_9`` (10 significant
digits, so every row still sums to 1 within 1e-8).

Run from the repository root::

    python scripts/make_example.py [OUT]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "bece" / "data" / "example.csv"


def make_example() -> pd.DataFrame:
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, random_state=0, stratify=y
    )
    clf = LogisticRegression(max_iter=2000).fit(X_train, y_train)
    proba = clf.predict_proba(X_test)
    frame = pd.DataFrame(proba, columns=[f"p_{k}" for k in range(proba.shape[1])])
    frame.insert(0, "y_true", y_test.astype(np.int64))
    return frame


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else DEFAULT_OUT
    make_example().to_csv(out, index=False, float_format="%.10g")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
