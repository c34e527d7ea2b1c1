"""linsvm.model.format_liblinear: LIBLINEAR's solver_type names, and the type a model is
exported with, derived from the solver registry."""

import numpy as np
import pytest
import scipy.sparse as sp

from linsvm.model import format_liblinear as model_liblinear
from linsvm.model import Model
from linsvm.model.format_liblinear import SOLVER_TYPES
from linsvm.solvers import SOLVERS, LiblinearCode

try:
    from liblinear import liblinear as liblinear_c
    from liblinear import liblinearutil
except ImportError:          # liblinear-official is an optional test dependency
    liblinearutil = None

needs_liblinear = pytest.mark.skipif(liblinearutil is None, reason="liblinear-official not installed")


def _exported_type(model, tmp_path):
    path = tmp_path / "ll.model"
    model.save(path, format="liblinear")
    first = path.read_text().splitlines()[0].split()
    assert first[0] == "solver_type"
    return first[1]


def _model(solver, n_classes, params):
    """A model of `solver` with n_classes classes (one column for two), bias row included
    (a regression model: no classes, a one-class model: 1 and -1, no bias)."""
    rng = np.random.default_rng(n_classes)
    kind = SOLVERS[solver].kind if solver in SOLVERS else None
    if kind == "regression":
        return Model(solver=solver, classes=[], weights=rng.normal(size=(6, 1)), bias=1.0,
                     params=params, kind=kind)
    if kind == "oneclass":
        return Model(solver=solver, classes=[1, -1], weights=rng.normal(size=(5, 1)), bias=-1.0,
                     params=params, kind=kind, offset=-0.5)
    n_columns = 1 if n_classes == 2 else n_classes
    return Model(solver=solver, classes=np.arange(n_classes) + 1.0, weights=rng.normal(size=(6, n_columns)),
                 bias=1.0, params=params)


@needs_liblinear
def test_solver_type_table_is_liblinears_enum():
    """The code -> name table against LIBLINEAR's Python binding's own enum."""
    assert SOLVER_TYPES == {int(v): v.name for v in liblinear_c.solver_names}


@needs_liblinear
@pytest.mark.parametrize("code", sorted(SOLVER_TYPES))
def test_solver_type_names_are_what_liblinear_writes(tmp_path, code):
    """LIBLINEAR's `-s CODE` writes `solver_type SOLVER_TYPES[CODE]` in its model file, and
    the reader takes exactly its classification types."""
    rng = np.random.default_rng(code)
    X = sp.csr_matrix(rng.normal(size=(40, 3)))
    y = np.where(X[:, 0].toarray().ravel() > 0, 1.0, -1.0)
    if code == 4:
        y[:10] = 2.0
    lm = liblinearutil.train(y, X, f"-s {code} -q")
    path = tmp_path / "ll.model"
    liblinearutil.save_model(str(path), lm)
    assert path.read_text().splitlines()[0] == f"solver_type {SOLVER_TYPES[code]}"
    assert (SOLVER_TYPES[code] in model_liblinear.LIBLINEAR_CLASSIFIERS) == (code <= 7)
    assert (SOLVER_TYPES[code] in model_liblinear.LIBLINEAR_OTHERS) == (code > 7)


def test_every_registered_code_exports_its_liblinear_type(tmp_path):
    """A model trained with the options a solver's LIBLINEAR code implies is written with
    that code's solver_type (three classes: MCSVM_CS keeps its type)."""
    checked = 0
    for info in SOLVERS.values():
        for code, liblinear in info.liblinear_codes.items():
            assert liblinear.solver_type == SOLVER_TYPES[code]
            assert _exported_type(_model(info.name, 3, dict(liblinear.implied)),
                                  tmp_path) == SOLVER_TYPES[code]
            checked += 1
    assert checked >= 4          # dcd -s 1 and -s 3, mfn -s 2, sdm-cs -s 4


def test_solvers_without_a_liblinear_code_export_as_l2r_l2loss_svc(tmp_path):
    """Behaviour kept from before the registry held the mapping: any solver without a
    matching code (and dcd without a loss it knows) writes L2R_L2LOSS_SVC."""
    checked = 0
    for info in SOLVERS.values():
        if info.liblinear_codes or info.kind not in ("binary", "multiclass") \
                or info.loss == "logistic":     # softmax: refused (tests/test_logistic_e2e.py)
            continue
        for n_classes in (2, 3):
            assert _exported_type(_model(info.name, n_classes, {}), tmp_path) == "L2R_L2LOSS_SVC"
        checked += 1
    assert checked >= 3
    assert _exported_type(_model("dcd", 3, {}), tmp_path) == "L2R_L2LOSS_SVC"
    assert _exported_type(_model("dcd", 3, {"loss": "l3"}), tmp_path) == "L2R_L2LOSS_SVC"


@pytest.mark.parametrize("loss,expect", [("hinge", "L2R_L1LOSS_SVC_DUAL"), ("L1", "L2R_L1LOSS_SVC_DUAL"),
                                         ("squared_hinge", "L2R_L2LOSS_SVC_DUAL"),
                                         ("L2", "L2R_L2LOSS_SVC_DUAL")])
def test_dcd_loss_names_as_before(tmp_path, loss, expect):
    """A hand-built dcd model's loss is matched case-insensitively, with scikit-learn's names."""
    assert _exported_type(_model("dcd", 3, {"loss": loss}), tmp_path) == expect


def test_export_type_follows_the_registry_not_solver_names(tmp_path, monkeypatch):
    """The exported type once came from solver names hard-coded in model.py: change a solver's
    liblinear_codes in the registry and the exported type follows."""
    mfn, dcd = SOLVERS["mfn"], SOLVERS["dcd"]
    monkeypatch.setitem(SOLVERS, "mfn", mfn._replace(
        liblinear_codes={1: LiblinearCode(SOLVER_TYPES[1])}))
    monkeypatch.setitem(SOLVERS, "dcd", dcd._replace(liblinear_codes={}))
    assert _exported_type(_model("mfn", 3, {}), tmp_path) == "L2R_L2LOSS_SVC_DUAL"
    assert _exported_type(_model("dcd", 3, {"loss": "l1"}), tmp_path) == "L2R_L2LOSS_SVC"
    # the first matching code, in code order
    monkeypatch.setitem(SOLVERS, "mfn", mfn._replace(liblinear_codes={
        3: LiblinearCode(SOLVER_TYPES[3]), 1: LiblinearCode(SOLVER_TYPES[1], {"seed": 0})}))
    assert _exported_type(_model("mfn", 3, {"seed": 0}), tmp_path) == "L2R_L2LOSS_SVC_DUAL"
    assert _exported_type(_model("mfn", 3, {"seed": 1}), tmp_path) == "L2R_L1LOSS_SVC_DUAL"


def test_two_class_layouts_override_the_registry_type(tmp_path):
    """One column for two classes cannot be MCSVM_CS (LIBLINEAR reads MCSVM_CS with
    nr_class columns); two columns for two classes must be."""
    assert _exported_type(_model("sdm-cs", 2, {}), tmp_path) == "L2R_L2LOSS_SVC"
    two = Model(solver="dcd", classes=[1, 2], weights=np.array([[1.0, -1.0], [0.5, -0.5]]), bias=-1,
                params={"loss": "l1"})
    assert _exported_type(two, tmp_path) == "MCSVM_CS"

