"""Streaming releases: a state file that absorbs new rows and new columns (``ppdm stream``).

:mod:`ppdm.streaming.store` holds the state and its transactions, :mod:`ppdm.streaming.commands` the four
commands, :mod:`ppdm.streaming.nmds` the NMDS streams (new rows placed against fixed landmarks) and
:mod:`ppdm.streaming.dask_update` the partitioned update of the Dask backend (imported only when asked for).
"""

from ppdm.streaming.commands import stream_add_columns, stream_init, stream_status, stream_update
from ppdm.streaming.store import METHODS, StreamResult, state_lock

__all__ = ["StreamResult", "stream_init", "stream_update", "stream_add_columns", "stream_status", "state_lock",
           "METHODS"]
