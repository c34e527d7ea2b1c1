"""LIBLINEAR's training options as liblinearutil parses them: the `parameter` class,
its `-s` codes (`solver_names`), LIBLINEAR's own defaults and refusals, and the
mapping of a parameter onto `linsvm.train`'s arguments.

The option string is LIBLINEAR's `train` syntax, split on white space (or a list
of tokens): ``-s type -c cost -p epsilon -n nu -e eps -B bias -wLABEL weight -v n
-C -q -R``.  Every option takes the next token as its value except -q, -C and -R.
The defaults are LIBLINEAR's, not linsvm's command line's: ``-s 1`` (L2-loss SVM by
dual coordinate descent), ``-c 1``, ``-p 0.1``, ``-n 0.5``, ``-B -1`` (no bias
feature) and the per-code ``-e`` of `LIBLINEAR_EPS`; ``-C`` without ``-s`` is
``-s 2`` with 5 folds.  Each code runs the linsvm solver the catalog gives for it
(`linsvm.problem.catalog.liblinear_code`, the mapping `linsvm-train -s N` uses).

A LIBLINEAR ``-e`` becomes the linsvm solver's tolerance in proportion to the two
defaults, tol = eps * (solver's default -e) / (LIBLINEAR's default -e): LIBLINEAR's
default gives the solver's, which ends no further from the optimum than LIBLINEAR's own
(tighter than LIBLINEAR's for -s 0, 1, 2, 3, 5, 6 and 7: docs/liblinear.md, "Defaults").
"""
from __future__ import annotations

import enum
import math

from ..errors import ParameterError
from ..problem.catalog import SOLVERS, liblinear_code, liblinear_entry

__all__ = ["solver_names", "print_null", "parameter", "LIBLINEAR_EPS", "SEARCH_CODES", "REGRESSION_CODES",
           "PROBABILITY_CODES", "ONECLASS_CODE", "FREE_BIAS_CODES", "check_parameter",
           "train_arguments"]


class solver_names(enum.IntEnum):
    """LIBLINEAR's solver codes (-s), named as in its linear.h."""

    L2R_LR = 0
    L2R_L2LOSS_SVC_DUAL = 1
    L2R_L2LOSS_SVC = 2
    L2R_L1LOSS_SVC_DUAL = 3
    MCSVM_CS = 4
    L1R_L2LOSS_SVC = 5
    L1R_LR = 6
    L2R_LR_DUAL = 7
    L2R_L2LOSS_SVR = 11
    L2R_L2LOSS_SVR_DUAL = 12
    L2R_L1LOSS_SVR_DUAL = 13
    ONECLASS_SVM = 21


def print_null(s):
    """A printer that prints nothing (liblinearutil's, for scripts that name it)."""
    return None


# LIBLINEAR's default -e of each code (its train's usage text).
LIBLINEAR_EPS = {0: 0.01, 1: 0.1, 2: 0.01, 3: 0.1, 4: 0.1, 5: 0.01, 6: 0.01, 7: 0.1,
                 11: 0.0001, 12: 0.1, 13: 0.1, 21: 0.01}
SEARCH_CODES = (0, 2, 11)           # -C: LIBLINEAR's warm-started parameter search
REGRESSION_CODES = (11, 12, 13)
PROBABILITY_CODES = (0, 6, 7)       # the logistic losses: predict -b 1
ONECLASS_CODE = 21
FREE_BIAS_CODES = (0, 2, 5, 6, 11)  # -R
_VALUED = ("-s", "-c", "-p", "-n", "-e", "-B", "-v")


def _number(flag, text, kind=float):
    """The value of option `flag`, or ParameterError saying LIBLINEAR refuses it."""
    if text is None:
        raise ParameterError(f"Wrong options: {flag} needs a value")
    try:
        return kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise ParameterError(f"Wrong options: {flag} needs {what}, got {text!r}") from None


def _code(text):
    """LIBLINEAR's -s code, checked against the codes linsvm solves (all of LIBLINEAR's)."""
    code = _number("-s", text, int)
    liblinear_code(code)                # ParameterError listing the codes
    return solver_names(code)


class parameter:
    """LIBLINEAR's training parameters, from an option string (module notes).

    ``parameter('-s 0 -c 4 -B 1')``; ``parameter()`` or ``parameter('')`` holds the
    defaults.  Fields, as liblinear-official names them: solver_type, eps, C, p, nu,
    bias, nr_weight, weight_label, weight, regularize_bias (1, or 0 with -R),
    flag_cross_validation, nr_fold, flag_find_parameters, flag_C_specified,
    flag_p_specified, flag_solver_specified, and quiet (-q).  The fields may be set
    directly after parsing; train() reads them when it runs.  An option LIBLINEAR
    refuses raises ParameterError (a ValueError) with LIBLINEAR's reason."""

    def __init__(self, options=None):
        self.parse_options("" if options is None else options)

    def set_to_default_values(self):
        """LIBLINEAR's defaults (module notes); eps is left to be chosen by the code."""
        self.solver_type = solver_names.L2R_L2LOSS_SVC_DUAL
        self.eps = math.inf
        self.C = 1.0
        self.p = 0.1
        self.nu = 0.5
        self.bias = -1.0
        self.nr_weight = 0
        self.weight_label = []
        self.weight = []
        self.regularize_bias = 1
        self.flag_cross_validation = False
        self.flag_find_parameters = False
        self.flag_C_specified = False
        self.flag_p_specified = False
        self.flag_solver_specified = False
        self.nr_fold = 0
        self.quiet = False

    def parse_options(self, options):
        """Set every field from `options` (a str or a list of tokens), LIBLINEAR's way."""
        if isinstance(options, str):
            argv = options.split()
        elif isinstance(options, list):
            argv = [str(t) for t in options]
        else:
            raise TypeError("arg 1 should be a list or a str.")
        self.set_to_default_values()
        i = 0
        while i < len(argv):
            flag = argv[i]
            value = argv[i + 1] if i + 1 < len(argv) else None
            if flag in _VALUED or (flag.startswith("-w") and len(flag) > 2):
                self._take(flag, value)
                i += 2
            elif flag in ("-q", "-C", "-R"):
                self._switch(flag)
                i += 1
            else:
                raise ParameterError(f"Wrong options: {flag!r} is not a LIBLINEAR training "
                                     "option (-s -c -p -n -e -B -wLABEL -v -C -q -R)")
        self._finish()

    def _take(self, flag, value):
        """One option with a value."""
        if flag == "-s":
            self.solver_type = _code(value)
            self.flag_solver_specified = True
        elif flag == "-c":
            self.C = _number(flag, value)
            self.flag_C_specified = True
        elif flag == "-p":
            self.p = _number(flag, value)
            self.flag_p_specified = True
        elif flag == "-n":
            self.nu = _number(flag, value)
        elif flag == "-e":
            self.eps = _number(flag, value)
        elif flag == "-B":
            self.bias = _number(flag, value)
        elif flag == "-v":
            self.flag_cross_validation = True
            self.nr_fold = _number(flag, value, int)
            if self.nr_fold < 2:
                raise ParameterError("n-fold cross validation: n must >= 2")
        else:                               # -wLABEL WEIGHT
            self.weight_label.append(_number("-w (its label)", flag[2:], int))
            self.weight.append(_number(flag, value))
            self.nr_weight += 1

    def _switch(self, flag):
        if flag == "-q":
            self.quiet = True
        elif flag == "-C":
            self.flag_find_parameters = True
        else:
            self.regularize_bias = 0

    def _finish(self):
        """-C's defaults and refusal, then the code's default eps."""
        if self.flag_find_parameters:
            if not self.flag_cross_validation:
                self.nr_fold = 5
            if not self.flag_solver_specified:
                self.solver_type = solver_names.L2R_L2LOSS_SVC
                self.flag_solver_specified = True
            elif int(self.solver_type) not in SEARCH_CODES:
                raise ParameterError("Warm-start parameter search only available for -s 0, "
                                     "-s 2 and -s 11")
        if self.eps == math.inf:
            self.eps = LIBLINEAR_EPS[int(self.solver_type)]

    def __str__(self):
        fields = ("solver_type", "eps", "C", "p", "nu", "bias", "nr_weight", "weight_label",
                  "weight", "regularize_bias", "flag_cross_validation", "nr_fold",
                  "flag_find_parameters", "quiet")
        return "\n".join(f"{name}: {getattr(self, name)}" for name in fields)


def check_parameter(param, bias):
    """ParameterError with LIBLINEAR's reason (its check_parameter) when `param`
    cannot train a problem whose bias feature is `bias`; else the code (an int)."""
    code = int(param.solver_type)
    liblinear_code(code)
    for name, value in (("C", param.C), ("eps", param.eps), ("p", param.p), ("nu", param.nu),
                        ("bias", bias)):
        if not math.isfinite(float(value)):
            raise ParameterError(f"Error: {name} = {value!r} is not finite")
    if param.eps <= 0:
        raise ParameterError("Error: eps <= 0 (-e must be > 0)")
    if param.C <= 0:
        raise ParameterError("Error: C <= 0 (-c must be > 0)")
    if param.p < 0 and code in REGRESSION_CODES:
        raise ParameterError("Error: p < 0 (-p must be >= 0)")
    if code == ONECLASS_CODE and not 0 < param.nu <= 1:
        raise ParameterError("Error: nu must be in (0, 1] (-n)")
    if bias >= 0 and code == ONECLASS_CODE:
        raise ParameterError("Error: prob->bias >=0, but this is ignored in ONECLASS_SVM "
                             "(-s 21 takes no -B)")
    if not param.regularize_bias:
        if bias != 1.0:
            raise ParameterError("Error: To not regularize bias, must specify -B 1 along with -R")
        if code not in FREE_BIAS_CODES:
            raise ParameterError("Error: -R option supported only for solver L2R_LR, "
                                 "L2R_L2LOSS_SVC, L1R_L2LOSS_SVC, L1R_LR, and L2R_L2LOSS_SVR")
    return code


def train_arguments(param, code):
    """linsvm.train's keyword arguments for a checked `param` of LIBLINEAR code `code`:
    solver, C, tol (module notes), and the solver options the code implies plus -p,
    -n and -R.  The bias and class weights are the caller's (they depend on the
    data).  The problem solved is LIBLINEAR's, by the code's defaults in the catalog
    (LiblinearCode.defaults, as `linsvm-train -s CODE` takes them): -s 11's bias weight
    is regularized unless -R, -s 12/13 do not centre the targets."""
    name, entry = liblinear_entry(code)
    info = SOLVERS[name]
    options = dict(entry.implied, **entry.defaults)
    if code in REGRESSION_CODES:
        options["epsilon"] = float(param.p)
    if "regularize_bias" in info.options and not param.regularize_bias:
        options["regularize_bias"] = False
    if code == ONECLASS_CODE:
        options["nu"] = float(param.nu)
    tol = float(param.eps) * info.default_tol / LIBLINEAR_EPS[code]
    return dict(solver=name, C=float(param.C), tol=tol, **options)
