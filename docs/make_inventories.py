"""Write the intersphinx inventories of docs/intersphinx/ (no network needed).

CI and the development machines have no network, so Sphinx cannot download
the ``objects.inv`` of NumPy, SciPy, JAX, NumPyro, ArviZ, scikit-learn and the
rest. This script writes one small inventory per project instead, listing the
objects bece's documentation refers to, each with its address in that
project's published documentation. Run it after adding a name to ``OBJECTS``
(``python docs/make_inventories.py``) and commit the ``.inv`` files; conf.py
reads ``PROJECTS`` for ``intersphinx_mapping``.

The format is Sphinx's inventory version 2: four header lines, then zlib-
compressed lines ``name domain:role priority uri dispname`` (``$`` in the uri
stands for the name, ``-`` as dispname for the name itself).
"""

from __future__ import annotations

import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: name -> documentation root and version label of each project.
PROJECTS: dict[str, dict[str, str]] = {
    "python": {"project": "Python", "url": "https://docs.python.org/3/"},
    "numpy": {"project": "NumPy", "url": "https://numpy.org/doc/stable/"},
    "scipy": {"project": "SciPy", "url": "https://docs.scipy.org/doc/scipy/"},
    "jax": {"project": "JAX", "url": "https://docs.jax.dev/en/latest/"},
    "numpyro": {"project": "NumPyro", "url": "https://num.pyro.ai/en/stable/"},
    "arviz": {"project": "ArviZ", "url": "https://python.arviz.org/en/stable/"},
    "sklearn": {"project": "scikit-learn", "url": "https://scikit-learn.org/stable/"},
    "matplotlib": {"project": "Matplotlib", "url": "https://matplotlib.org/stable/"},
    "pandas": {"project": "pandas", "url": "https://pandas.pydata.org/docs/"},
    "xarray": {"project": "xarray", "url": "https://docs.xarray.dev/en/stable/"},
    "dask": {"project": "Dask", "url": "https://docs.dask.org/en/stable/"},
}

_SK = "modules/generated/$.html#$"
_AZ = "api/generated/$.html#$"

#: project -> [(name, domain:role, uri relative to the project's root)].
#: A label or term needs its title: (name, role, uri, title).
OBJECTS: dict[str, list[tuple[str, ...]]] = {
    # numpydoc's type aliases (numpydoc_xref_param_type) link bool, sequence ...
    "python": [
        ("bltin-boolean-values", "std:label", "library/stdtypes.html#$", "Boolean Values"),
        ("sequence", "std:term", "glossary.html#term-sequence", "sequence"),
        ("iterable", "std:term", "glossary.html#term-iterable", "iterable"),
        ("callable", "std:term", "glossary.html#term-callable", "callable"),
        ("mapping", "std:term", "glossary.html#term-mapping", "mapping"),
        ("bltin-null-object", "std:label", "library/stdtypes.html#$", "The Null Object"),
        ("int", "py:class", "library/functions.html#$"),
        ("float", "py:class", "library/functions.html#$"),
        ("str", "py:class", "library/stdtypes.html#$"),
        ("dict", "py:class", "library/stdtypes.html#$"),
        ("list", "py:class", "library/stdtypes.html#$"),
        ("tuple", "py:class", "library/stdtypes.html#$"),
        ("ValueError", "py:exception", "library/exceptions.html#$"),
        ("pathlib.Path", "py:class", "library/pathlib.html#$"),
    ],
    "numpy": [
        ("numpy.ndarray", "py:class", "reference/generated/$.html#$"),
        ("numpy.random.Generator", "py:class", "reference/random/generator.html#$"),
        ("numpy.random.default_rng", "py:function", "reference/random/generator.html#$"),
        ("numpy.float64", "py:class", "reference/arrays.scalars.html#$"),
        ("numpy.float32", "py:class", "reference/arrays.scalars.html#$"),
        ("numpy.int64", "py:class", "reference/arrays.scalars.html#$"),
        ("numpy.dtype", "py:class", "reference/generated/$.html#$"),
        ("numpy.savez", "py:function", "reference/generated/$.html#$"),
        ("numpy.load", "py:function", "reference/generated/$.html#$"),
        ("numpy.sum", "py:function", "reference/generated/$.html#$"),
        ("numpy.bincount", "py:function", "reference/generated/$.html#$"),
        ("array_like", "std:term", "glossary.html#term-array_like", "array_like"),
        ("arrays.scalars", "std:label", "reference/$.html", "Scalars"),
    ],
    "scipy": [
        ("scipy.stats.rv_continuous", "py:class", "reference/generated/$.html#$"),
        ("scipy.stats.norm", "py:data", "reference/generated/$.html#$"),
        ("scipy.stats.anderson", "py:function", "reference/generated/$.html#$"),
        ("scipy.optimize.minimize", "py:function", "reference/generated/$.html#$"),
        ("scipy.optimize.minimize_scalar", "py:function", "reference/generated/$.html#$"),
        ("scipy.special.log_softmax", "py:function", "reference/generated/$.html#$"),
        ("scipy.special.softmax", "py:function", "reference/generated/$.html#$"),
    ],
    "jax": [
        ("jax.Array", "py:class", "_autosummary/$.html#$"),
        ("jax.random.PRNGKey", "py:function", "_autosummary/$.html#$"),
        ("jax.device_put", "py:function", "_autosummary/$.html#$"),
        ("jax.numpy.asarray", "py:function", "_autosummary/$.html#$"),
    ],
    "numpyro": [
        ("numpyro.infer.mcmc.MCMC", "py:class", "mcmc.html#$"),
        ("numpyro.infer.MCMC", "py:class", "mcmc.html#numpyro.infer.mcmc.MCMC"),
        ("numpyro.infer.hmc.NUTS", "py:class", "mcmc.html#$"),
        ("numpyro.infer.NUTS", "py:class", "mcmc.html#numpyro.infer.hmc.NUTS"),
        ("numpyro.infer.util.Predictive", "py:class", "utilities.html#$"),
        ("numpyro.infer.Predictive", "py:class", "utilities.html#numpyro.infer.util.Predictive"),
        ("numpyro.distributions.continuous.Dirichlet", "py:class", "distributions.html#$"),
        ("numpyro.distributions.Dirichlet", "py:class",
         "distributions.html#numpyro.distributions.continuous.Dirichlet"),
    ],
    "arviz": [
        ("arviz.InferenceData", "py:class", _AZ),
        ("arviz.summary", "py:function", _AZ),
        ("arviz.hdi", "py:function", _AZ),
        ("arviz.from_dict", "py:function", _AZ),
        ("arviz.from_numpyro", "py:function", _AZ),
        ("arviz.psislw", "py:function", _AZ),
        ("arviz.plot_posterior", "py:function", _AZ),
    ],
    "sklearn": [
        ("sklearn.neural_network.MLPClassifier", "py:class", _SK),
        ("sklearn.linear_model.LogisticRegression", "py:class", _SK),
        ("sklearn.isotonic.IsotonicRegression", "py:class", _SK),
        ("sklearn.calibration.CalibratedClassifierCV", "py:class", _SK),
        ("sklearn.calibration.calibration_curve", "py:function", _SK),
        ("sklearn.base.BaseEstimator", "py:class", _SK),
        ("sklearn.base.ClassifierMixin", "py:class", _SK),
        ("sklearn.base.clone", "py:function", _SK),
        ("sklearn.datasets.load_digits", "py:function", _SK),
        ("sklearn.datasets.load_breast_cancer", "py:function", _SK),
        ("sklearn.datasets.load_iris", "py:function", _SK),
        ("sklearn.datasets.load_diabetes", "py:function", _SK),
        ("sklearn.metrics.brier_score_loss", "py:function", _SK),
        ("sklearn.metrics.log_loss", "py:function", _SK),
        ("sklearn.model_selection.train_test_split", "py:function", _SK),
        ("sklearn.preprocessing.StandardScaler", "py:class", _SK),
        ("sklearn.pipeline.make_pipeline", "py:function", _SK),
        ("sklearn.utils.estimator_checks.check_estimator", "py:function", _SK),
    ],
    "matplotlib": [
        ("matplotlib.figure.Figure", "py:class", "api/_as_gen/$.html#$"),
        ("matplotlib.axes.Axes", "py:class", "api/axes_api.html#$"),
    ],
    "pandas": [
        ("pandas.DataFrame", "py:class", "reference/api/$.html#$"),
        ("pandas.read_parquet", "py:function", "reference/api/$.html#$"),
    ],
    "xarray": [
        ("xarray.DataTree", "py:class", "generated/$.html#$"),
        ("xarray.Dataset", "py:class", "generated/$.html#$"),
    ],
    "dask": [
        ("dask.dataframe.DataFrame", "py:class", "generated/$.html#$"),
        ("dask.array.Array", "py:class", "generated/$.html#$"),
    ],
}


def inventory(name: str) -> bytes:
    """The objects.inv bytes of project ``name``."""
    spec = PROJECTS[name]
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {spec['project']}\n"
        "# Version: stable\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    lines = []
    for obj, role, uri, *title in sorted(OBJECTS[name]):
        if role.startswith("std:") and not title:
            raise ValueError(f"{obj}: a label or term needs its title")
        lines.append(f"{obj} {role} {-1 if role == 'std:label' else 1} {uri} {title[0] if title else '-'}\n")
    return header.encode() + zlib.compress("".join(lines).encode(), 9)


def main() -> None:
    out = HERE / "intersphinx"
    out.mkdir(exist_ok=True)
    assert set(OBJECTS) == set(PROJECTS)
    for name in PROJECTS:
        (out / f"{name}.inv").write_bytes(inventory(name))
        print(f"{out.name}/{name}.inv: {len(OBJECTS[name])} objects -> {PROJECTS[name]['url']}")


if __name__ == "__main__":
    main()
