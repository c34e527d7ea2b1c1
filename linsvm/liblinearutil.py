"""A drop-in for liblinear-official's ``liblinearutil``, over linsvm's solvers.

A script written for LIBLINEAR's Python interface runs with one line changed::

    from linsvm.liblinearutil import *      # was: from liblinear.liblinearutil import *
    y, x = svm_read_problem('heart_scale', return_scipy=True)
    m = train(y[:200], x[:200], '-s 2 -c 4')
    p_label, p_acc, p_val = predict(y[200:], x[200:], m)

The option strings are LIBLINEAR's and mean what they mean there, with its defaults
(``-s 1``, ``-B -1``, its ``-e`` per solver); each ``-s`` code runs the linsvm solver
of the same objective; models are saved as LIBLINEAR model files.  What differs from
liblinear-official is listed in docs/python.md ("Coming from liblinearutil").
"""
from .liblinear_compat.data import evaluations, problem, svm_read_problem
from .liblinear_compat.models import load_model, model, predict, save_model
from .liblinear_compat.options import parameter, print_null, solver_names
from .liblinear_compat.scaling import csr_find_scale_param, csr_scale
from .liblinear_compat.training import train

__all__ = ["svm_read_problem", "evaluations", "problem", "parameter", "solver_names", "model",
           "train", "predict", "save_model", "load_model", "print_null", "csr_find_scale_param",
           "csr_scale"]
