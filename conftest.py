"""pytest's configuration for the whole repository (tests/conftest.py has the
tests' fixtures): the modules of an optional extra are collected, their doctests
included, only where the extra is installed; CI's extras stage installs them."""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("torchmetrics") is None:
    collect_ignore += ["bece/torch.py", "bece/_api/torch_metric.py"]
