"""Linear lie/truth probes on hidden states: datasets, scikit-learn estimators, leakage-safe
evaluation (AUROC with intervals, transfer), one training function, persistence, and the
inline honesty monitor. This is the package's public face::

    from liedar.probes import LogisticProbe, train_lie_probe, HonestyMonitor, load_probe

Names are imported on first use (PEP 562), so ``import liedar.probes`` costs nothing and a
missing optional dependency (scikit-learn is in the ``local`` extra) is reported when the
name that needs it is used, in one line naming the install command.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "StatementSet": "liedar.probes.datasets",
    "builtin_set": "liedar.probes.datasets",
    "instructed_pairs": "liedar.probes.datasets",
    "load_csv": "liedar.probes.datasets",
    "load_truth_is_universal": "liedar.probes.datasets",
    "resolve_data": "liedar.probes.datasets",
    "LogisticProbe": "liedar.probes.estimators",
    "MassMeanProbe": "liedar.probes.estimators",
    "TTPD": "liedar.probes.estimators",
    "LATProbe": "liedar.probes.estimators",
    "make_probe": "liedar.probes.estimators",
    "BuergerTTPD": "liedar.probes.estimators",
    "RECIPES": "liedar.probes.recipes",
    "Recipe": "liedar.probes.recipes",
    "get_recipe": "liedar.probes.recipes",
    "auroc": "liedar.probes.evaluation",
    "cross_validated": "liedar.probes.evaluation",
    "layer_sweep": "liedar.probes.evaluation",
    "leave_one_topic_out": "liedar.probes.evaluation",
    "polarity_transfer": "liedar.probes.evaluation",
    "recall_at_fpr": "liedar.probes.evaluation",
    "transfer_matrix": "liedar.probes.evaluation",
    "TrainedProbe": "liedar.probes.training",
    "train_lie_probe": "liedar.probes.training",
    "ProbeMetadata": "liedar.probes.io",
    "load_probe": "liedar.probes.io",
    "save_probe": "liedar.probes.io",
    "HonestyMonitor": "liedar.probes.monitor",
    "MonitorResult": "liedar.probes.monitor",
    "calibrate_threshold": "liedar.probes.monitor_calibration",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'liedar.probes' has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        from liedar.core._util.extras import EXTRA_OF, MissingExtraError, install_hint

        top = (exc.name or "").split(".")[0]
        if top in EXTRA_OF:
            raise MissingExtraError(f"liedar.probes.{name} needs {top}: {install_hint(EXTRA_OF[top])}") from None
        raise


def __dir__() -> list[str]:
    return __all__
