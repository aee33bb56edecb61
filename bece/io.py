"""Files in: CSV, Parquet and NPZ prediction files, read whole
(:func:`read_predictions`) or streamed in chunks into statistics
(:func:`read_statistics`, :func:`file_statistics`).
"""

from ._io.files import Predictions, example_path, read_predictions, read_statistics
from ._io.stream import FileStatistics, iter_chunks

__all__ = [
    "example_path",
    "FileStatistics",
    "iter_chunks",
    "Predictions",
    "read_predictions",
    "read_statistics",
]
