"""Class labels of any type: which value is y = 1, which column is which class.

scikit-learn's conventions (``calibration_curve``, ``log_loss``,
``classifier.classes_``), applied by :func:`bece._stats.inputs.as_outcomes`:

* **Binary** (``y_prob`` of shape ``(n,)`` is :math:`P(y = 1)`):
  ``pos_label`` is the value of ``y_true`` that is ``y = 1``; the outcome
  is ``z = [y_true == pos_label]``. Default: 1 when ``y_true``'s values are
  among {0, 1} or among {-1, 1} (as scikit-learn); any other values
  (``'cat'``/``'dog'``, {1, 2}) need ``pos_label`` (or ``labels``, whose
  second entry is then the positive class, as ``clf.classes_[1]`` is the
  class of ``predict_proba(X)[:, 1]``). At most two distinct values.
* **Classes** (``y_prob`` of shape ``(n, K)``, or labels of triples):
  ``labels`` lists the class of each column of ``y_prob`` in order (pass
  ``clf.classes_``). Default: integer labels are column indices
  ``0 .. K-1`` (as bece always read them; integers outside are refused,
  never re-mapped); text labels are mapped to the columns in sorted order,
  scikit-learn's ``classes_`` order, and must then number exactly K.
  A label that is not in ``labels`` is refused, named.

Labels are compared as given: numbers (integer-valued: int, bool, or
floats such as 1.0) or text (str, bytes, or pandas' object and
categorical columns of strings); a mix of text and numbers, missing
values, or a ``pos_label``/``labels`` of the other type is refused.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from .arrays import as_array, check_labels, describe_bad, object_error

if TYPE_CHECKING:
    from .reading import Inputs

__all__ = [
    "binary_outcome",
    "check_class_labels",
    "class_indices",
    "fixed_labels",
    "label_values",
]

#: The largest number of distinct values an error message lists.
_SHOWN = 6


def _shown(values: np.ndarray) -> str:
    """Up to _SHOWN values as a Python list, with the count of the rest."""
    items = [v.item() if isinstance(v, np.generic) else v for v in values[:_SHOWN]]
    more = f" and {values.size - _SHOWN} more" if values.size > _SHOWN else ""
    return f"{items!r}{more}"


def label_values(y: Any, name: str, n: int | None, n_classes: int | None = None) -> np.ndarray:
    """Labels as int64 (numbers) or as a str array (text), checked.

    Numbers follow :func:`bece._stats.inputs.check_labels` (integer-valued,
    finite, within int64; with ``n_classes`` a number beyond int64 is
    reported as outside ``0 .. n_classes - 1``, the labels expected); text
    may be str, bytes or an object array of strings (pandas). ``n``: the
    required length (None: any).
    """
    arr = as_array(y, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must have shape (n,), got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(
            f"{name} has {arr.shape[0]} entries but y_prob has {n}; they must have the same length"
        )
    if arr.dtype.kind in "US":
        return arr.astype(str)
    if arr.dtype.kind == "O":
        return _object_labels(arr, name)
    try:
        return check_labels(arr, name, arr.shape[0])
    except ValueError as exc:
        if n_classes is not None and "int64 range" in str(exc):
            check_labels(arr, name, arr.shape[0], n_classes=n_classes)  # its 0..K-1 message
        raise


def _object_labels(arr: np.ndarray, name: str) -> np.ndarray:
    """An object array of labels (pandas strings or categories) as str or int64."""
    if arr.size == 0:
        return arr.astype(np.int64)
    kinds = {type(v) for v in arr.ravel()}
    if all(issubclass(t, (str, bytes, np.str_, np.bytes_)) for t in kinds):
        return np.array([v.decode() if isinstance(v, (bytes, np.bytes_)) else str(v)
                         for v in arr], dtype=str)
    if all(issubclass(t, (numbers.Number, np.bool_)) and not issubclass(t, (str, bytes))
           for t in kinds):
        try:
            values = np.array(arr.tolist())
        except (TypeError, ValueError):  # pragma: no cover - e.g. complex mixed in
            values = arr
        if values.dtype.kind in "biuf":
            return check_labels(values, name, values.shape[0])
    err = object_error(arr, name, "class labels of one type (numbers or text)")
    if "missing" in str(err):
        raise err
    text = next(v for v in arr if isinstance(v, (str, bytes)))
    other = next(v for v in arr if not isinstance(v, (str, bytes)))
    raise ValueError(f"{name} mixes text and other values (e.g. {text!r} and {other!r}); "
                     "class labels must be all numbers or all text")


def _same_type(values: np.ndarray, option: np.ndarray, name: str, option_name: str) -> None:
    """Refuse an option of labels whose type (text or numbers) is not ``values``'."""
    text_v, text_o = values.dtype.kind == "U", option.dtype.kind == "U"
    if values.size and text_v != text_o:
        kind = "text" if text_v else "numbers"
        raise ValueError(
            f"{option_name} {_shown(option)} and {name} {_shown(np.unique(values))} are of "
            f"different types: {name} holds {kind}; give {option_name} as {kind}"
        )


def check_class_labels(labels: Any, k: int | None, *, binary: bool = False) -> np.ndarray:
    """``labels=`` checked: 1-D, distinct, numbers or text; K entries (two if ``binary``).

    Returns int64 (numbers) or str values, in the order given.
    """
    arr = label_values(labels, "labels", None)
    if arr.size == 0:
        raise ValueError("labels is empty: give the class of each column of y_prob, e.g. "
                         "labels=clf.classes_")
    uniq, counts = np.unique(arr, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"labels must be distinct; {_shown(uniq[counts > 1])} appear more than once")
    if binary and arr.size != 2:
        raise ValueError(
            f"labels has {arr.size} entries but y_prob of shape (n,) is P(y = 1) of a binary "
            "classifier: give its two classes, negative then positive (clf.classes_)"
        )
    if k is not None and arr.size != k:
        raise ValueError(
            f"labels has {arr.size} entries but y_prob has {k} columns; give the class of each "
            "column, in order (clf.classes_)"
        )
    return arr


def _index_in(values: np.ndarray, classes: np.ndarray, name: str) -> np.ndarray:
    """Index of each value in ``classes`` (int64); ValueError naming those not in it."""
    _same_type(values, classes, name, "labels")
    order = np.argsort(classes, kind="stable")
    ordered = classes[order]
    pos = np.searchsorted(ordered, values)
    np.minimum(pos, ordered.size - 1, out=pos)
    unknown = ordered[pos] != values
    if unknown.any():
        missing = np.unique(values[unknown])
        raise ValueError(
            f"{name} holds {missing.size} label(s) that are not in labels: {_shown(missing)} "
            f"({describe_bad(values, unknown)}); labels lists the classes of y_prob's columns: "
            f"{_shown(classes)}"
        )
    return order[pos].astype(np.int64)


def class_indices(
    y_true: Any,
    y_pred: Any,
    n: int,
    k: int | None,
    *,
    labels: Any = None,
    infer: bool = True,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Class labels as indices ``0 .. K-1`` of y_prob's columns (module docstring).

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        ``y_pred`` may be None.
    n : int
        The number of predictions.
    k : int or None
        The number of columns of ``y_prob``; None for triples with 1-D
        confidences, whose labels are only compared with each other.
    labels : array_like, optional
        The class of each column (K entries), or with ``k=None`` the
        classes the labels may take.
    infer : bool, default True
        Map text labels to columns by their sorted values when ``labels`` is
        None. False refuses them instead (a Dask block cannot see the other
        blocks' values).

    Returns
    -------
    y_true, y_pred : ndarray of shape (n,), int64
        Indices (``y_pred`` None when not given).
    classes : ndarray or None
        The label of each index, or None when the labels are the indices
        themselves (integers read as they are).
    """
    hint = k if labels is None else None
    yt = label_values(y_true, "y_true", n, hint)
    yp = None if y_pred is None else label_values(y_pred, "y_pred", n, hint)
    if labels is not None:
        classes = check_class_labels(labels, k)
        return (_index_in(yt, classes, "y_true"),
                None if yp is None else _index_in(yp, classes, "y_pred"), classes)
    if yp is not None and yt.size and (yt.dtype.kind == "U") != (yp.dtype.kind == "U"):
        raise ValueError(
            f"y_true holds {'text' if yt.dtype.kind == 'U' else 'numbers'} but y_pred holds "
            f"{'text' if yp.dtype.kind == 'U' else 'numbers'}; they must be labels of the same "
            "classes, of one type"
        )
    if yt.dtype.kind != "U":  # integers: the indices themselves
        if k is not None:
            for name, lab in (("y_true", yt), ("y_pred", yp)):
                if lab is not None and lab.size and (lab.min() < 0 or lab.max() >= k):
                    bad = (lab < 0) | (lab >= k)
                    raise ValueError(
                        f"{name} must hold labels in 0..{k - 1}; {describe_bad(lab, bad)} are "
                        f"outside (integer labels are the column indices of y_prob; for other "
                        f"class values pass labels=, e.g. labels=clf.classes_)"
                    )
        return yt, yp, None
    if not infer:
        raise ValueError(
            f"y_true holds text labels (e.g. {yt[0]!r}); pass labels= with the class of each "
            "column of y_prob in order (e.g. labels=clf.classes_): blocks reduced separately "
            "cannot infer the classes from the data"
        )
    classes = np.unique(yt if yp is None else np.concatenate([yt, yp]))
    if k is not None and classes.size != k:
        raise ValueError(
            f"y_true{'' if yp is None else ' and y_pred'} hold {classes.size} distinct text "
            f"label(s) {_shown(classes)} but y_prob has {k} columns; pass labels= with the class "
            "of each column in order (e.g. labels=clf.classes_)"
        )
    return (_index_in(yt, classes, "y_true"),
            None if yp is None else _index_in(yp, classes, "y_pred"), classes)


def _in_default_pair(values: np.ndarray) -> bool:
    """Whether integer labels are among {0, 1} or among {-1, 1} (scikit-learn's
    binary labels whose positive class needs no naming)."""
    lo, hi = int(values.min()), int(values.max())
    if 0 <= lo and hi <= 1:
        return True
    return bool(lo >= -1 and hi <= 1 and not (values == 0).any())


def binary_outcome(y_true: Any, n: int, inputs: Inputs) -> np.ndarray:
    """The outcome ``z = [y_true == pos_label]`` of binary labels, int64
    (module docstring), with ``inputs.pos_label`` and ``inputs.labels``.

    Raises
    ------
    ValueError
        Labels of a type other than ``pos_label``'s; more than two distinct
        values; values other than {0, 1} or {-1, 1} without ``pos_label``;
        a ``pos_label`` that is none of two distinct values; values not in
        ``labels``.
    """
    pos_label, labels = inputs.pos_label, inputs.labels
    yt = label_values(y_true, "y_true", n, 2 if pos_label is None and labels is None else None)
    classes = None if labels is None else check_class_labels(labels, None, binary=True)
    if classes is not None:
        _index_in(yt, classes, "y_true")
    if pos_label is None and classes is not None:
        pos_label = classes[1]
    if pos_label is None:
        if yt.dtype.kind != "U" and (yt.size == 0 or _in_default_pair(yt)):
            return (yt == 1).astype(np.int64) if yt.size and yt.min() < 0 else yt
        values = np.unique(yt)
        if yt.dtype.kind != "U":
            outside = (yt != 0) & (yt != 1)
            fix = ("pass pos_label= to say which one is y = 1 (labels 0/1 and -1/1 need none)"
                   if values.size <= 2 else
                   "y_prob of shape (n,) is P(y = 1) of a binary classifier; for K classes "
                   "pass y_prob of shape (n, K)")
            raise ValueError(
                f"y_true must hold labels in 0..1; {describe_bad(yt, outside)} are outside: "
                f"y_true holds the values {_shown(values)}; {fix}"
            )
        _at_most_two(yt, values)
        raise ValueError(
            f"y_true holds the values {_shown(values)}; pass pos_label= to say which one is "
            "y = 1 (y_prob is its probability; only labels 0/1 and -1/1 default to "
            "pos_label=1, as in scikit-learn)"
        )
    pos = label_values(np.asarray([pos_label]), "pos_label", 1)
    _same_type(yt, pos, "y_true", "pos_label")
    if classes is not None and not (classes == pos[0]).any():
        raise ValueError(f"pos_label {pos[0].item()!r} is not in labels {_shown(classes)}")
    values = np.unique(yt)
    _at_most_two(yt, values)
    if values.size == 2 and not (values == pos[0]).any():
        raise ValueError(
            f"pos_label {pos[0].item()!r} is not among y_true's values {_shown(values)}"
        )
    return (yt == pos[0]).astype(np.int64)


def _at_most_two(yt: np.ndarray, values: np.ndarray) -> None:
    if values.size > 2:
        raise ValueError(
            f"y_prob of shape (n,) is P(y = 1) of a binary classifier, but y_true holds "
            f"{values.size} distinct values {_shown(values)}; for K classes pass y_prob of shape "
            "(n, K) (with labels= naming its columns when the labels are not 0..K-1)"
        )


def fixed_labels(y_true: Any, y_prob: Any, y_pred: Any, labels: Any) -> Any:
    """The ``labels=`` that reads every later chunk of a file as its first
    chunk was read: ``labels`` as given, else the text classes inferred from
    this chunk when ``y_prob`` has K columns (so that a later chunk cannot
    map its text labels to other columns; it must use these classes), else
    None (integer labels, binary labels and triples with (n,) confidences
    read each chunk alike)."""
    if labels is not None or np.ndim(y_prob) != 2:
        return labels
    n, k = np.shape(y_prob)
    _, _, classes = class_indices(y_true, y_pred, n, k)
    return classes
