"""Linear lie/truth probes on hidden states: datasets, scikit-learn estimators,
leakage-safe evaluation (AUROC with intervals, transfer), persistence, inline monitor."""
