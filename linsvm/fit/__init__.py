"""Fitting: train() around the solvers (inputs, classes, costs, warm starts,
one-vs-rest), cross-validation and probability calibration on folds.

    from linsvm.fit import train, cross_validate, calibrate
"""
from .._lazy import lazy_exports

__getattr__ = lazy_exports(__name__, {
    "train": ".training",
    "cross_validate": ".cv",
    "calibrate": ".calibration",
    "out_of_fold_decision_values": ".calibration",
    "collecting_warnings": ".reporting",
})
