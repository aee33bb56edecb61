"""A stored calibrator's JSON: written by ``to_json``, loaded only if every field
meets the fitted estimator's contract.

A calibrator's JSON holds its class, its parameters and its fitted
attributes. :func:`decode_spec` reads it without trusting it: the text is
bounded in size (:data:`MAX_CHARS`) and nesting (:data:`MAX_DEPTH`) before
it is parsed; the parameters must be the class's own (and pass its
parameter checks); the fitted attributes must be exactly the class's, each
of the declared kind, shape and range (:class:`Field`): a temperature
finite and positive, isotonic thresholds non-decreasing with values in
[0, 1], ``n_classes_`` equal to the number of ``classes_``, ... Anything
else is a ``ValueError`` naming the field. Nothing is ever unpickled:
arrays are rebuilt from JSON values with a numeric or text dtype.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "COMMON",
    "Field",
    "MAX_CHARS",
    "MAX_DEPTH",
    "check_fitted",
    "linear_contract",
    "SHAPES",
    "decode",
    "encode",
    "parse",
]

#: Longest JSON text read (characters): matrix scaling at K = 2,000 is about 90 million.
MAX_CHARS = 2**28
#: Deepest nesting of JSON arrays and objects read (a (K, K) array is 2 deep inside 4 levels).
MAX_DEPTH = 16

#: dtype kinds an array may have: bool, integers, floats, text (classes_ of string labels).
_KINDS = "biufU"


def encode(value: Any) -> Any:
    """A fitted attribute or parameter as JSON values (arrays with dtype and shape)."""
    if isinstance(value, np.ndarray):
        return {"array": value.tolist(), "dtype": value.dtype.str, "shape": list(value.shape)}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    return value


def decode(value: Any, name: str) -> Any:
    """:func:`encode`'s inverse; ValueError naming ``name`` for anything malformed."""
    if isinstance(value, dict):
        if set(value) == {"array", "dtype", "shape"}:
            return _array(value, name)
        if set(value) == {"tuple"} and isinstance(value["tuple"], list):
            return tuple(decode(v, name) for v in value["tuple"])
        if set(value) == {"dict"} and isinstance(value["dict"], list):
            pairs = value["dict"]
            if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
                raise ValueError(f"{name}: a dict must be a list of [key, value] pairs")
            return {decode(k, name): decode(v, name) for k, v in pairs}
        raise ValueError(f"{name}: unknown encoded value with keys {sorted(value)}")
    if isinstance(value, list):
        return [decode(v, name) for v in value]
    return value


def _array(value: dict[str, Any], name: str) -> np.ndarray:
    try:
        dtype = np.dtype(value["dtype"])
    except TypeError:
        raise ValueError(f"{name}: unknown dtype {value['dtype']!r}") from None
    if dtype.kind not in _KINDS:
        raise ValueError(f"{name}: dtype {dtype.str!r} is not allowed (numbers, booleans or text only)")
    shape = value["shape"]
    if not (isinstance(shape, list) and all(isinstance(s, int) and s >= 0 for s in shape)):
        raise ValueError(f"{name}: shape must be a list of non-negative integers, got {shape!r}")
    try:
        out = np.array(value["array"], dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name}: values do not fit dtype {dtype.str!r} ({exc})") from None
    if list(out.shape) != shape:
        raise ValueError(f"{name}: values have shape {list(out.shape)}, the file says {shape}")
    return out


def _depth(text: str) -> int:
    """Deepest nesting of arrays and objects in JSON ``text`` (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    break
        elif ch in "]}":
            depth -= 1
    return deepest


def parse(text: Any) -> dict[str, Any]:
    """The JSON object of a stored calibrator, its size and nesting bounded first."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("text is not a bece calibrator's JSON: not UTF-8 text") from None
    if not isinstance(text, str):
        raise ValueError(f"text must be a JSON string, got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise ValueError(f"text is {len(text):,} characters, more than a calibrator's JSON may "
                         f"have ({MAX_CHARS:,})")
    if _depth(text) > MAX_DEPTH:
        raise ValueError(f"text nests arrays or objects more than {MAX_DEPTH} deep: not a bece "
                         "calibrator's JSON")
    try:
        spec = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"text is not a bece calibrator's JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise ValueError(f"text is not a bece calibrator's JSON: a JSON {type(spec).__name__}, not an object")
    missing = {"estimator", "format", "params", "fitted"} - set(spec)
    if missing:
        raise ValueError(f"text is not a bece calibrator's JSON: no {', '.join(sorted(missing))}")
    for part in ("params", "fitted"):
        if not isinstance(spec[part], dict):
            raise ValueError(f"{part} must be a JSON object, got {type(spec[part]).__name__}")
    return spec


# ------------------------------------------------------------------ contract
@dataclass(frozen=True)
class Field:
    """What a fitted attribute must be.

    ``kind``: "float", "int", "bool", "str" (a scalar) or "array" (of
    numbers); ``shape``: for arrays, a function of the (checked part of
    the) estimator giving the shape, or ``ndim`` its number of axes (None:
    any); ``low``/``high``: inclusive bounds of every value
    (``low_open``: ``low`` excluded); ``nan``: NaN allowed (a
    cross-validation candidate that stopped early); ``choices``: the
    allowed values of a str; ``none``: None allowed; ``nondecreasing``:
    a 1-D array in order; ``default``: the value of an attribute absent
    from a file (one added after files without it were written; None:
    required).
    """

    kind: str
    shape: Callable[[Any], tuple[int, ...]] | None = None
    ndim: int | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    nan: bool = False
    choices: tuple[str, ...] = ()
    none: bool = False
    nondecreasing: bool = False
    default: Any = None

    def check(self, name: str, value: Any, est: Any) -> None:
        if value is None and self.none:
            return
        if self.kind == "str":
            if not isinstance(value, str) or (self.choices and value not in self.choices):
                raise ValueError(f"{name} must be one of {self.choices}, got {value!r}")
            return
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be true or false, got {value!r}")
            return
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an integer, got {value!r}")
        elif self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number, got {value!r}")
        elif not isinstance(value, np.ndarray) or value.dtype.kind not in "iuf":
            raise ValueError(f"{name} must be an array of numbers, got {type(value).__name__}")
        values = np.asarray(value, dtype=np.float64)
        if self.shape is not None and values.shape != self.shape(est):
            raise ValueError(f"{name} must have shape {self.shape(est)}, got {values.shape}")
        if self.ndim is not None and (values.ndim != self.ndim or values.size == 0):
            raise ValueError(f"{name} must be a non-empty {self.ndim}-D array, got shape {values.shape}")
        finite = values[~np.isnan(values)] if self.nan else values
        if not np.all(np.isfinite(finite)):
            raise ValueError(f"{name} must be finite{'' if not self.nan else ' or NaN'}, got {value!r}"
                             if values.ndim == 0 else f"{name} holds values that are not finite")
        if self.low is not None and np.any(finite <= self.low if self.low_open else finite < self.low):
            raise ValueError(f"{name} must be {'>' if self.low_open else '>='} {self.low:g}"
                             + (f", got {value!r}" if values.ndim == 0 else ""))
        if self.high is not None and np.any(finite > self.high):
            got = f", got {value!r}" if values.ndim == 0 else ""
            raise ValueError(f"{name} must be <= {self.high:g}{got}")
        if self.nondecreasing and np.any(np.diff(values) < 0):
            raise ValueError(f"{name} must be non-decreasing")


def _k(est: Any) -> tuple[int, ...]:
    return (est.n_classes_,)


def _kk(est: Any) -> tuple[int, ...]:
    return (est.n_classes_, est.n_classes_)


#: The fitted attributes every calibrator has (classes_ is checked on its own).
COMMON = {
    "n_classes_": Field("int", low=2),
    "input_": Field("str", choices=("logits", "probabilities")),
    "binary_input_": Field("bool"),
    "n_features_in_": Field("int", low=1),
}
#: Shapes by name, for the calibrators' contracts.
SHAPES = {"K": _k, "KxK": _kk}


def linear_contract(coef_shape: Callable[[Any], tuple[int, ...]], diagonal: bool) -> dict[str, Field]:
    """The fitted attributes of vector scaling (``coef_`` of shape (K,)) and of
    matrix scaling and Dirichlet calibration ((K, K), with ``reg_diagonal_``)."""
    contract = {
        "coef_": Field("array", shape=coef_shape),
        "intercept_": Field("array", shape=_k),
        "reg_lambda_": Field("float", low=0.0),
        "reg_mu_": Field("float", low=0.0),
        "reg_diagonal_": Field("float", low=0.0),
        "feature_temperature_": Field("float", low=0.0, low_open=True),
        # the held-out NLL of each candidate; NaN where the search stopped early
        "cv_nll_": Field("array", low=0.0, nan=True, none=True),
        "nll_": Field("float", low=0.0),
        "n_passes_": Field("int", low=0),
        "n_iter_": Field("int", low=0),
    }
    if not diagonal:
        del contract["reg_diagonal_"]
    return contract


def check_fitted(est: Any, fitted: dict[str, Any], contract: dict[str, Field]) -> None:
    """Set ``fitted`` on ``est`` once every field meets ``contract`` (and
    ``classes_`` is K distinct labels); ValueError naming the first that does not."""
    expected = ["classes_", *COMMON, *contract]
    unknown = [k for k in fitted if k not in expected]
    if unknown:
        raise ValueError(f"fitted holds {', '.join(map(repr, unknown))}, which a "
                         f"{type(est).__name__} does not have")
    absent = [k for k in expected if k not in fitted and (k not in contract or contract[k].default is None)]
    if absent:
        raise ValueError(f"fitted lacks {', '.join(absent)}")
    values = {k: decode(v, k) for k, v in fitted.items()}
    values.update({k: f.default for k, f in contract.items() if k not in fitted})
    classes = values["classes_"]
    if not isinstance(classes, np.ndarray) or classes.ndim != 1:
        raise ValueError("classes_ must be a 1-D array of labels")
    if classes.dtype.kind not in "biuU" or np.unique(classes).size != classes.size:
        raise ValueError("classes_ must hold distinct integer, boolean or text labels")
    checked = type("Fitted", (), {})()
    for name, field in {**COMMON, **contract}.items():
        field.check(name, values[name], checked)
        setattr(checked, name, values[name])
        if name == "n_classes_" and values[name] != classes.size:
            raise ValueError(f"n_classes_ is {values[name]} but classes_ holds {classes.size} labels")
        if name == "n_features_in_":
            want = 1 if values["binary_input_"] else values["n_classes_"]
            if values[name] != want:
                raise ValueError(f"n_features_in_ must be {want} (binary_input_ "
                                 f"{values['binary_input_']}, {values['n_classes_']} classes), "
                                 f"got {values[name]}")
    if values["binary_input_"] and values["n_classes_"] != 2:
        raise ValueError("binary_input_ is true but n_classes_ is not 2")
    for name, value in values.items():
        setattr(est, name, value)
