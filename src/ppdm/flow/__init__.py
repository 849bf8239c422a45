"""The release flow's shared pieces, below every execution path.

The in-memory pipeline (:mod:`ppdm.pipeline`), the Dask backend (:mod:`ppdm.backends`), streams
(:mod:`ppdm.streaming`), the release sweep (:mod:`ppdm.release`) and the attacks all use these, and none of
them is imported from here: the numeric core of a release (:mod:`ppdm.flow.arrays`), what a run writes and
reads back (:mod:`ppdm.flow.artifacts`), and how two tables are made comparable (:mod:`ppdm.flow.tables`).
"""

from ppdm.flow.arrays import check_magnitude, perturb_array
from ppdm.flow.artifacts import PerturbResult, align_with_state, load_release_state, save_release_state
from ppdm.flow.tables import align_tables, sample_rows

__all__ = ["perturb_array", "check_magnitude", "PerturbResult", "save_release_state", "load_release_state",
           "align_with_state", "align_tables", "sample_rows"]
