"""Column conventions of regression forecast files, and telling them from classifier files.

A regression forecast file has a target column (default ``y``) and the
columns of one forecast form:

* ``mean`` and ``std``: a Gaussian forecast :math:`N(\\mu_t, \\sigma_t^2)`;
* quantile columns ``q_<level>`` (``q_0.05``, ``q_0.5``, ``q_0.95``, ...):
  a quantile forecast, the level in the name, any number of levels in
  (0, 1), in any column order (sorted by level when read); two names of one
  level (``q_0.5`` and ``q_0.50``) are refused;
* sample columns ``s_0 ... s_{S-1}``: draws from the predictive
  distribution (e.g. a NumPyro posterior predictive), numbered from 0
  without gaps.

The names are options (``y_col``, ``mean_col``, ``std_col``,
``quantile_prefix``, ``sample_prefix``). A column counts as a quantile
column when what follows the prefix starts like a number (a digit, ``.``,
``+`` or ``-``), and as a sample column when it starts with a digit; it must
then be a valid level or index. Other columns (``q_low``, ``s_id``,
``weight``) are ignored, as in classifier files.

A classifier file (:mod:`bece._stats.columns`) has ``y_true`` with ``y_prob``
or ``p_0 ... p_{K-1}``; :func:`detect_kind` tells the two apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ForecastColumns",
    "detect_kind",
    "select_forecast_columns",
]

_NUMBER = re.compile(r"^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")
_CLASS_PROB = re.compile(r"^p_\d+$")


@dataclass(frozen=True)
class ForecastColumns:
    """The columns of a regression forecast file.

    Attributes
    ----------
    y : str
        The target column.
    form : {"gaussian", "quantiles", "samples"}
    mean, std : str or None
        The Gaussian forecast's columns.
    quantiles : tuple of str
        Quantile columns, sorted by level (empty unless ``form == "quantiles"``).
    levels : ndarray of shape (K,)
        Their levels, strictly increasing in (0, 1).
    samples : tuple of str
        Sample columns ``s_0 ... s_{S-1}`` in index order.
    """

    y: str
    form: str
    mean: str | None = None
    std: str | None = None
    quantiles: tuple[str, ...] = ()
    levels: np.ndarray | None = None
    samples: tuple[str, ...] = ()

    @property
    def forecast(self) -> list[str]:
        """The forecast's columns, in the order they are used."""
        if self.form == "gaussian":
            return [str(self.mean), str(self.std)]
        return list(self.quantiles if self.form == "quantiles" else self.samples)


def _check_prefix(prefix: str, name: str) -> str:
    if not isinstance(prefix, str) or not prefix:
        raise ValueError(f"{name} must be a non-empty string, got {prefix!r}")
    return prefix


def _quantile_columns(names: list[str], prefix: str, source: str) -> dict[float, str]:
    """Level -> column of the quantile columns among ``names``."""
    found: dict[float, str] = {}
    for n in names:
        if not n.startswith(prefix):
            continue
        rest = n[len(prefix):]
        if not rest or rest[0] not in "0123456789.+-":
            continue  # not a quantile column (e.g. 'q_low')
        if not _NUMBER.match(rest):
            raise ValueError(
                f"{source}: column '{n}' is not a quantile column name: '{rest}' after the prefix "
                f"'{prefix}' is not a level; write the level as a decimal in (0, 1), e.g. {prefix}0.05"
            )
        level = float(rest)
        if not 0.0 < level < 1.0:
            hint = f" (levels are fractions: {prefix}0.5, not {prefix}50)" if level >= 1 else ""
            raise ValueError(f"{source}: column '{n}' names level {level!r}; quantile levels must "
                             f"lie in (0, 1){hint}")
        if level in found:
            same = (f"column '{n}' appears twice" if found[level] == n
                    else f"columns '{found[level]}' and '{n}' both hold level {level!r}")
            raise ValueError(f"{source}: {same}; bece cannot tell which to use: rename or drop "
                             "the others")
        found[level] = n
    return found


def _sample_columns(names: list[str], prefix: str, source: str) -> dict[int, str]:
    """Index -> column of the sample columns among ``names``."""
    found: dict[int, str] = {}
    for n in names:
        if not n.startswith(prefix):
            continue
        rest = n[len(prefix):]
        if not rest or not rest[0].isdigit():
            continue  # not a sample column (e.g. 's_id')
        if not rest.isdigit():
            raise ValueError(f"{source}: column '{n}' is not a sample column name: '{rest}' after "
                             f"the prefix '{prefix}' is not an index; name them {prefix}0 ... "
                             f"{prefix}{{S-1}}")
        i = int(rest)
        if i in found:
            same = (f"column '{n}' appears twice" if found[i] == n
                    else f"columns '{found[i]}' and '{n}' both hold sample {i}")
            raise ValueError(f"{source}: {same}; bece cannot tell which to use: rename or drop "
                             "the others")
        found[i] = n
    return found


def _expected(y_col: str, mean_col: str, std_col: str, qp: str, sp: str) -> str:
    return (f"'{y_col}' with '{mean_col}' and '{std_col}' (Gaussian), quantile columns "
            f"'{qp}<level>' such as {qp}0.05 (quantiles) or '{sp}0' ... '{sp}{{S-1}}' (samples)")


def select_forecast_columns(
    names: list[str],
    source: str,
    *,
    y_col: str = "y",
    mean_col: str = "mean",
    std_col: str = "std",
    quantile_prefix: str = "q_",
    sample_prefix: str = "s_",
) -> ForecastColumns:
    """Pick the target and forecast columns among ``names``.

    Raises
    ------
    ValueError
        Naming the file: no target column; a column bece uses that appears
        more than once; no forecast columns, or those of several forms;
        ``mean`` without ``std`` (or the reverse); a quantile column whose
        level is not a number in (0, 1), or two columns of one level; sample
        columns not numbered 0 ... S-1 without gaps.
    """
    qp = _check_prefix(quantile_prefix, "quantile_prefix")
    sp = _check_prefix(sample_prefix, "sample_prefix")
    for col, what in ((y_col, "y_col"), (mean_col, "mean_col"), (std_col, "std_col")):
        if not isinstance(col, str) or not col:
            raise ValueError(f"{what} must be a non-empty string, got {col!r}")
    expected = _expected(y_col, mean_col, std_col, qp, sp)
    found = ", ".join(names) or "none"
    if y_col not in names:
        raise ValueError(f"{source}: no target column '{y_col}' (found: {found}); a regression "
                         f"forecast file has {expected}")
    for name in (y_col, mean_col, std_col):
        if names.count(name) > 1:
            raise ValueError(f"{source}: column '{name}' appears {names.count(name)} times; bece "
                             "cannot tell which to use: rename or drop the others")
    quantiles = _quantile_columns(names, qp, source)
    samples = _sample_columns(names, sp, source)
    forms = {
        "gaussian": [c for c in (mean_col, std_col) if c in names],
        "quantiles": [quantiles[k] for k in sorted(quantiles)],
        "samples": [samples[k] for k in sorted(samples)],
    }
    present = {k: v for k, v in forms.items() if v}
    if not present:
        raise ValueError(f"{source}: no forecast columns (found: {found}); a regression forecast "
                         f"file has {expected}")
    if len(present) > 1:
        shown = "; ".join(f"{k}: {', '.join(v[:3])}{' ...' if len(v) > 3 else ''}"
                          for k, v in present.items())
        raise ValueError(f"{source}: holds columns of several forecast forms ({shown}); keep one "
                         "form per file")
    form = next(iter(present))
    if form == "gaussian":
        if len(forms["gaussian"]) < 2:
            has, lacks = ((mean_col, std_col) if mean_col in names else (std_col, mean_col))
            raise ValueError(f"{source}: has '{has}' but no '{lacks}' column; a Gaussian forecast "
                             f"needs both '{mean_col}' and '{std_col}' (found: {found})")
        return ForecastColumns(y=y_col, form=form, mean=mean_col, std=std_col)
    if form == "quantiles":
        levels = np.array(sorted(quantiles), dtype=np.float64)
        return ForecastColumns(y=y_col, form=form, quantiles=tuple(forms["quantiles"]), levels=levels)
    s = len(samples)
    if sorted(samples) != list(range(s)):
        raise ValueError(f"{source}: sample columns must be {sp}0 ... {sp}{{S-1}} without gaps, "
                         f"found {', '.join(forms['samples'])}")
    return ForecastColumns(y=y_col, form=form, samples=tuple(forms["samples"]))


def detect_kind(
    names: list[str],
    source: str,
    *,
    y_col: str = "y",
    mean_col: str = "mean",
    std_col: str = "std",
    quantile_prefix: str = "q_",
    sample_prefix: str = "s_",
    y_true_col: str = "y_true",
    y_prob_col: str | None = None,
    prob_prefix: str = "p_",
) -> str:
    """``"classifier"`` or ``"regression"``: which predictions a file with columns ``names`` holds.

    A file is a classifier's when it has ``y_true`` and ``y_prob`` or
    ``p_k`` columns (names as :func:`bece._stats.columns.select_columns`'
    options ``y_true_col``, ``y_prob_col``, ``prob_prefix`` say), a
    regression forecaster's when it has the target column
    and the columns of a forecast form (:func:`select_forecast_columns`).
    When it is neither, the side whose columns it has some of is chosen (so
    that side's reader says what is missing); when it is both, or neither
    with no hint, a ValueError names the columns found and those expected.
    """
    qp = _check_prefix(quantile_prefix, "quantile_prefix")
    sp = _check_prefix(sample_prefix, "sample_prefix")
    class_prob = (_CLASS_PROB if prob_prefix == "p_" else
                  re.compile(rf"^{re.escape(prob_prefix)}\d+$"))
    probs = (y_prob_col in names if y_prob_col is not None else
             "y_prob" in names or any(class_prob.match(n) for n in names))
    classifier = y_true_col in names and probs
    forecast = [n for n in names if n in (mean_col, std_col)
                or (n.startswith(qp) and n[len(qp):][:1] in tuple("0123456789.+-"))
                or (n.startswith(sp) and n[len(sp):][:1].isdigit())]
    regression = y_col in names and bool(forecast)
    found = ", ".join(names) or "none"
    if classifier and regression:
        raise ValueError(
            f"{source}: holds both a classifier's columns ('{y_true_col}' with "
            f"{'y_prob' if 'y_prob' in names else f'{prob_prefix}k'}) and a regression forecast's ('{y_col}' "
            f"with {', '.join(forecast[:3])}{' ...' if len(forecast) > 3 else ''}); keep one kind "
            "of predictions per file"
        )
    if classifier:
        return "classifier"
    if regression:
        return "regression"
    # probability columns without y_true, or forecast columns without the
    # target: that side's reader names what is missing
    reg_hint = y_col in names or bool(forecast)
    if probs != reg_hint:
        return "classifier" if probs else "regression"
    raise ValueError(
        f"{source}: no probability columns of a classifier and no regression forecast columns "
        f"(found: {found}); expected '{y_true_col}' with 'y_prob' or '{prob_prefix}0' ... "
        f"'{prob_prefix}{{K-1}}' (classifier), "
        f"or {_expected(y_col, mean_col, std_col, qp, sp)} (regression)"
    )
