# Type information for bece.models, which setuptools installs from the
# top-level models/ folder (package-dir): mypy cannot follow that mapping, so
# this stub re-exports the package it checks as `models`. Not installed (the
# wheel ships bece.models itself); tests/test_typing.py checks that it names
# exactly bece.models.__all__.
from models import DirichletGammaReparam as DirichletGammaReparam
from models import conjugate_collapsed as conjugate_collapsed
from models import conjugate_model as conjugate_model
from models import literal_collapsed as literal_collapsed
from models import literal_model as literal_model
from models import pit_dirichlet_model as pit_dirichlet_model
from models import pit_model as pit_model
from models import smooth_model as smooth_model
from models import temperature_model as temperature_model
from models import top_label_collapsed as top_label_collapsed
from models import top_label_model as top_label_model
from models import top_label_smooth_model as top_label_smooth_model

__all__ = [
    "DirichletGammaReparam",
    "conjugate_collapsed",
    "conjugate_model",
    "literal_collapsed",
    "literal_model",
    "pit_dirichlet_model",
    "pit_model",
    "smooth_model",
    "temperature_model",
    "top_label_collapsed",
    "top_label_model",
    "top_label_smooth_model",
]
