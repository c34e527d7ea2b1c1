"""The cross-validation metrics by name, and which way is better (pure Python: the
command line's choices).  linsvm.problem.kinds says which apply to which kind and
computes them."""

# name -> higher is better
METRICS = {"accuracy": True, "prbep": True, "roc": True, "f1": True, "mae": False,
           "pairwise": True, "mse": False, "scc": True}
# fractions people read as percentages
PERCENT_METRICS = ("accuracy", "prbep", "f1", "pairwise")
