"""The pieces of linsvm.liblinearutil, LIBLINEAR's Python interface over linsvm's solvers:
its options (options), data forms (data), models and prediction (models) and training
(training).  Import linsvm.liblinearutil; these modules are internal."""
