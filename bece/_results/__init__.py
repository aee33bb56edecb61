"""Result types: posterior draws of the ECE (or of a difference) and their summaries.

Every model returns these, so results compare directly whichever path made
them; the ArviZ layer (``to_inference_data``, ``summary``, ``hdi``) imports
ArviZ only when called.
"""

from .comparison import Comparison
from .ece import BayesianECE, BayesianTopLabelECE, SmoothBayesianECE
from .summaries import DrawSummaries
from .verdict import Verdict, comparison_verdict, verdict

__all__ = [
    "BayesianECE",
    "BayesianTopLabelECE",
    "Comparison",
    "DrawSummaries",
    "SmoothBayesianECE",
    "Verdict",
    "comparison_verdict",
    "verdict",
]
