"""Files and tables in: CSV, Parquet and NPZ prediction files, read whole
(:func:`read_predictions`) or streamed in chunks into statistics
(:func:`read_statistics`); database tables and Spark DataFrames reduced to
statistics where they are (:func:`sql_statistics`, :func:`spark_statistics`,
:func:`statistics_query`); each prediction's window of time, to group by
(:func:`window_starts`).
"""

from ._io.files import Predictions, example_path, read_predictions, read_statistics
from ._io.sql import StatisticsQuery, spark_statistics, sql_statistics, statistics_query
from ._io.stream import FileStatistics, iter_chunks
from ._stats.windows import window_starts

__all__ = [
    "example_path",
    "FileStatistics",
    "iter_chunks",
    "Predictions",
    "read_predictions",
    "read_statistics",
    "spark_statistics",
    "sql_statistics",
    "statistics_query",
    "StatisticsQuery",
    "window_starts",
]
