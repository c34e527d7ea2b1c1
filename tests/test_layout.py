"""Structure the code must keep (issues 16 and 25): layers that import only downwards,
no import cycle, no private name used across modules, imports inside functions only
for optional or slow third-party packages (and two slow standard modules), small modules and functions, one atomic
writer for every file linsvm writes.  docs/design.md describes the layers."""
import ast
import importlib
import inspect
import pathlib
import re

import pytest

import linsvm

PACKAGE = pathlib.Path(linsvm.__file__).parent
ROOT = pathlib.Path(__file__).resolve().parent.parent      # the checkout, not site-packages

# The layers, bottom first: a module may import its own layer and those below.
LAYERS = ["base", "problem", "runtime", "io", "model", "solvers", "fit", "interface"]
BASE = {"linsvm._version", "linsvm._lazy", "linsvm.errors"}
INTERFACE = {"linsvm", "linsvm.__main__", "linsvm.sklearn", "linsvm.sklearn.base",
             "linsvm.sklearn.classifiers", "linsvm.sklearn.regression", "linsvm.sklearn.outliers",
             "linsvm.sklearn.logistic", "linsvm.cv", "linsvm.distributed",
             "linsvm.liblinearutil"}
# Third-party packages a function may import where it needs them: optional extras, and
# the numerical stack where start-up must not pay for it (the command line's --help);
# and two standard modules few runs need whose imports cost milliseconds of every
# command's start-up (tempfile: shutil, random, bz2, lzma; socket: selectors, array).
LATE_IMPORTS = {"numpy", "scipy", "sklearn", "mpi4py", "matplotlib", "isal", "indexed_bzip2",
                "tempfile", "socket"}
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 100


def _modules():
    """{module name: path} of every Python module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()
COMPILED = {f"linsvm.{p.name.split('.')[0]}" for p in PACKAGE.glob("_*.so")} | \
    {f"linsvm.{p.name.split('.')[0]}" for p in PACKAGE.glob("_*.pyd")} | \
    {f"linsvm.{p.stem}" for p in (ROOT / "csrc").glob("_*.pyx")}


def layer(module):
    """The layer of a linsvm module (compiled cores are below everything)."""
    if module in COMPILED or module in BASE:
        return 0
    if module in INTERFACE or module.startswith(("linsvm.cli", "linsvm.liblinear_compat")):
        return LAYERS.index("interface")
    return LAYERS.index(module.split(".")[1])


def _tree(path):
    return ast.parse(path.read_text(), filename=str(path))


def _resolve(module, node):
    """The absolute module a relative ImportFrom of `module` names."""
    if node.level == 0:
        return node.module
    package = module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]
    base = package.split(".")
    if node.level > 1:
        base = base[:-(node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module):
    """[(imported linsvm module, lineno, at module level?, names)] of `module`: every
    import statement, a `from X import y` naming submodule X.y when y is one."""
    out = []
    tree = _tree(MODULES[module])
    top = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out.append((a.name, node.lineno, id(node) in top, []))
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            for a in node.names:
                sub = f"{target}.{a.name}"
                if sub in MODULES or sub in COMPILED:
                    out.append((sub, node.lineno, id(node) in top, []))
                else:
                    out.append((target, node.lineno, id(node) in top, [a.name]))
    return out


def _own(name):
    return name == "linsvm" or name.startswith("linsvm.")


def test_every_package_is_installed():
    """Every package directory of linsvm is in pyproject.toml's list, so that `pip
    install .` installs it."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "linsvm").rglob("__init__.py")}
    assert packages <= listed, sorted(packages - listed)


def test_every_module_has_a_layer():
    for module in MODULES:
        assert 0 <= layer(module) < len(LAYERS), module


@pytest.mark.slow
def test_imports_go_downwards_only():
    """A module imports its own layer and those below, never one above."""
    offenders = []
    for module in MODULES:
        for target, line, _, _ in _imports(module):
            if _own(target) and target != "linsvm" and layer(target) > layer(module):
                offenders.append(f"{module}:{line} imports {target} "
                                 f"({LAYERS[layer(module)]} -> {LAYERS[layer(target)]})")
    assert offenders == []


@pytest.mark.slow
def test_no_import_cycle():
    graph = {m: {t for t, *_ in _imports(m) if t in MODULES and t != m} for m in MODULES}
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert cycles == []


@pytest.mark.slow
def test_imports_inside_functions_are_for_late_third_party_packages_only():
    """linsvm's own modules and the standard library are imported at the top of a
    module; a function imports only an optional or slow third-party package."""
    offenders = []
    for module in MODULES:
        for target, line, at_top, _ in _imports(module):
            if not at_top and target.split(".")[0] not in LATE_IMPORTS:
                offenders.append(f"{module}:{line} imports {target} inside a function")
    assert offenders == []


def test_no_private_name_is_imported_from_another_module():
    offenders = []
    for module in MODULES:
        for target, line, _, names in _imports(module):
            if _own(target):
                offenders += [f"{module}:{line} imports {target}.{n}" for n in names
                              if n.startswith("_") and not n.startswith("__")]
    assert offenders == []


def test_lazy_names_resolve_and_respect_the_layers():
    """Every name a package exports lazily, every solver's fit in the catalog and every
    command body of linsvm.cli.commands' COMMANDS resolves; the catalog's fits are in
    linsvm.solvers and the commands' bodies in linsvm.cli."""
    from linsvm._lazy import LazyFunction
    from linsvm.cli import commands
    from linsvm.problem.catalog import SOLVERS

    for module, path in MODULES.items():
        if path.name == "__init__.py" and "lazy_exports" in path.read_text():
            pkg = importlib.import_module(module)
            for name in re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', path.read_text()):
                if name not in ("__getattr__",) and hasattr(pkg, "__all__") and name in pkg.__all__:
                    assert getattr(pkg, name) is not None
    for info in SOLVERS.values():
        if isinstance(info.fit, LazyFunction):
            assert info.fit.module.startswith("linsvm.solvers."), info.name
            assert callable(info.fit.resolve()), info.name
    # a module-level LazyFunction anywhere else (a runner's parts that only some runs
    # need) names a module of its own layer or below, as an import would
    for module in MODULES:
        for name, value in vars(importlib.import_module(module)).items():
            if isinstance(value, LazyFunction) and module != "linsvm.problem.catalog":
                assert layer(value.module) <= layer(module), f"{module}.{name}"
                assert callable(value.resolve()), f"{module}.{name}"
    for command in map(commands.command, commands.COMMANDS):
        lazy = inspect.unwrap(command.callback)
        assert isinstance(lazy, LazyFunction) and lazy.module.startswith("linsvm.cli.run_")
        assert callable(lazy.resolve())


@pytest.mark.slow
def test_modules_and_functions_are_small():
    long_modules = [f"{m}: {len(p.read_text().splitlines())} lines" for m, p in MODULES.items()
                    if len(p.read_text().splitlines()) > MAX_MODULE_LINES]
    assert long_modules == []
    long_functions = []
    for module, path in MODULES.items():
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long_functions.append(f"{module}.{node.name}: {n} lines")
    assert long_functions == []


@pytest.mark.subprocess
@pytest.mark.parametrize("module", ["linsvm.cli", "linsvm.cli.commands", "linsvm.cli.command_train",
                                    "linsvm.cli.command_predict", "linsvm.cli.command_cv",
                                    "linsvm.cli.command_tools", "linsvm.cli.command_inspect",
                                    "linsvm.problem.catalog"])
def test_the_command_line_declarations_import_no_numerics(module):
    """--help and --version read the declarations and the catalog alone (linsvm._lazy)."""
    import subprocess
    import sys

    from conftest import child_env

    code = (f"import sys, {module}; "
            "print(sorted(m for m in ('numpy', 'scipy', 'linsvm._mfn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=child_env(), check=True).stdout
    assert out.strip() == "[]"


def test_format_modules_do_not_import_the_model_module():
    """linsvm.model.model dispatches to the formats; none of them imports it back (no cycle)."""
    for name in ("tokens", "format_linsvm", "format_liblinear"):
        for target, *_ in _imports(f"linsvm.model.{name}"):
            assert target != "linsvm.model.model", name


def _writes_a_file(node):
    """A call that creates, replaces or syncs a file outside linsvm.io.atomic."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        if f.value.id == "os" and f.attr in ("replace", "rename", "fsync", "umask", "link", "mkstemp"):
            return True
        if f.value.id in ("tempfile", "shutil"):
            return True
    if isinstance(f, ast.Name) and f.id == "open" and len(node.args) >= 2:
        mode = node.args[1]
        target = ast.unparse(node.args[0])
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str) \
                and set(mode.value) & set("wax") and target != "os.devnull":
            return True
    return False


def test_every_file_is_written_through_linsvm_atomic():
    """Regression guard for 'one atomic writer': no module but io/atomic.py writes files
    itself (temporary names, renames, fsync, the umask), so every model, prediction
    and data file gets the same all-or-nothing policy."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "atomic.py":
            continue
        for node in ast.walk(_tree(path)):
            if _writes_a_file(node):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {ast.unparse(node)}")
    assert offenders == []
    assert "Umask" in (PACKAGE / "io" / "atomic.py").read_text()   # the creation mode is read there


def test_readme_second_command_is_what_ci_runs():
    """The README's second command (install with the test and mpi extras, the quick
    reproductions, the suite) is .ci/run's, its parts in the same order, with only the
    data-set tests' run without the data sets between them: a change to one must reach
    the other."""
    blocks = re.findall(r"```sh\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S)
    parts = blocks[1].split(" && ")
    assert parts[0] == 'python3 -m pip install ".[test,mpi]"' and parts[-1] == "pytest -q tests"
    ci = (ROOT / ".ci" / "run").read_text()
    ci = ci[ci.index("set -euo pipefail"):]               # the commands, not the comment
    at = [ci.index(part) for part in parts]
    assert at == sorted(at), parts
    between = ci[at[0] + len(parts[0]):at[-1]]
    assert between.count("pytest") == 1 and "pytest -q -m data tests" in between, between


def test_tests_are_named_after_behaviours_not_issues():
    """The issues are not in the repository: a test, its docstring and its comments say
    the behaviour they pin, never an issue's or an item's number."""
    number = re.compile(r"\b(issue|item)" + r"[ _]?[0-9]+", re.I)
    found = [f"{path.name}:{n}" for path in sorted((ROOT / "tests").glob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if number.search(line)]
    assert found == []


# ------------------------------------------------------------------ the solver catalog

MAX_PARAMETERS = 12
# the documented API, whose keywords are the user's: train, cross_validate and the
# scikit-learn estimators' constructors
DOCUMENTED_API = {("linsvm.fit.training", "train"), ("linsvm.fit.cv", "cross_validate")}


def _parameter_count(node):
    a = node.args
    names = [p.arg for p in a.posonlyargs + a.args]
    n = len(names) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
    return n - (1 if names and names[0] in ("self", "cls") else 0)


def test_no_internal_function_outside_the_solvers_takes_more_than_12_parameters():
    """Every function of linsvm (methods: besides self) takes at most 12 parameters,
    *args and **kwargs counted; a command's parsed options travel as one record.  The
    documented API and the solvers' modules aside."""
    offenders = []
    for module, path in MODULES.items():
        if module.startswith("linsvm.solvers."):
            continue
        for node in ast.walk(_tree(path)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if (module, node.name) in DOCUMENTED_API or (
                    module.startswith("linsvm.sklearn.") and node.name == "__init__"):
                continue
            n = _parameter_count(node)
            if n > MAX_PARAMETERS:
                offenders.append(f"{module}.{node.name}: {n} parameters")
    assert offenders == []


def _spec_modules():
    return sorted(m for m in MODULES if m.startswith("linsvm.solvers.") and m.endswith("_spec"))


def test_every_solver_family_is_one_spec_module_the_catalog_registers():
    """A family's solvers are declared in linsvm/solvers/FAMILY_spec.py (SPECS) and
    registered by the catalog's one line for FAMILY, in FAMILIES' order, each with
    family FAMILY and a fit in linsvm.solvers; no spec module is left out."""
    from linsvm.problem import catalog

    assert _spec_modules() == sorted(f"linsvm.solvers.{f}_spec" for f in catalog.FAMILIES)
    expected = []
    for family in catalog.FAMILIES:
        specs = importlib.import_module(f"linsvm.solvers.{family}_spec").SPECS
        assert specs, family
        expected += [(info.name, family) for info in specs]
    assert [(i.name, i.family) for i in catalog.SOLVERS.values()] == expected
    for info in catalog.SOLVERS.values():
        assert info.fit.module.startswith("linsvm.solvers.") and \
            not info.fit.module.endswith("_spec"), info.name
        assert info.kind in ("binary", "multiclass", "ordinal", "regression", "oneclass")


def test_spec_modules_are_pure_python_below_the_catalog():
    """A spec module imports only the registry, linsvm._lazy, linsvm.errors and other
    spec modules: the catalog (linsvm.problem) reads it without an upward import
    statement, without a cycle and without NumPy or a solver."""
    allowed = {"linsvm.problem.registry", "linsvm._lazy", "linsvm.errors"}
    offenders = []
    for module in _spec_modules():
        for target, line, _, _ in _imports(module):
            if target == "__future__":
                continue
            if target not in allowed and not (target.startswith("linsvm.solvers.")
                                              and target.endswith("_spec")):
                offenders.append(f"{module}:{line} imports {target}")
    assert offenders == []
    catalog_imports = {t for t, *_ in _imports("linsvm.problem.catalog")}
    assert not {t for t in catalog_imports if t.startswith("linsvm.solvers")}


FAKE_SPEC = '''
"""A fake solver family for the test: one solver, one option, one LIBLINEAR code."""
from .._lazy import LazyFunction
from ..problem.registry import LiblinearCode, Option, SolverInfo, WorkMemory

SPECS = (
    SolverInfo(
        name="fake",
        kind="binary",
        objective="the fake objective of the test",
        default_tol=0.5,
        tol_meaning="the fake tolerance",
        paper="no paper",
        fit=LazyFunction("linsvm.solvers.fake", "fit_fake"),
        options={"fake_scale": Option(float, 1.0, "the fake solver's scale", 0.0, 10.0)},
        liblinear_codes={99: LiblinearCode("FAKE_SVC")},
        memory=WorkMemory(1, 8),
        distributed="rows",
    ),
)
'''

FAKE_FIT = '''
import numpy as np
from ..problem.registry import FitResult


def fit_fake(problem, params, start, state, log):
    """Every weight = fake_scale * the mean label."""
    w = np.full(problem.n_weights, params["fake_scale"] * float(np.mean(problem.t)))
    return FitResult(w, {"objective": 0.0, "n_iter": 1})
'''

FAKE_CHILD = '''
import json, pathlib, sys, types
import linsvm.solvers
linsvm.solvers.__path__.append(sys.argv[1])          # linsvm/solvers/fake_spec.py, fake.py
source = pathlib.Path(sys.argv[2]).read_text()       # the catalog, with one more line
head, tail = source.split("FAMILIES = (", 1)
families, rest = tail.split(")", 1)
source = head + "FAMILIES = (" + families + '    "fake",\\n' + ")" + rest
catalog = types.ModuleType("linsvm.problem.catalog")
catalog.__file__, catalog.__package__ = sys.argv[2], "linsvm.problem"
sys.modules["linsvm.problem.catalog"] = catalog
exec(compile(source, sys.argv[2], "exec"), catalog.__dict__)

from click.testing import CliRunner
from linsvm.cli import train_cmd
from linsvm.model import load_model

data = pathlib.Path(sys.argv[1]) / "d.svm"
data.write_text("".join(f"{1 if i % 3 else -1} 1:{i % 5 + 1} 2:1\\n" for i in range(30)))
def run(*args):
    r = CliRunner().invoke(train_cmd, [str(a) for a in args])
    return [r.exit_code, r.output]
model = pathlib.Path(sys.argv[1]) / "m"
out = {"help": run("--help"), "help_solver": run("--help-solver", "fake"),
       "code": run("-q", "-s", "99", "--fake-scale", "2", "--model-format", "liblinear",
                   data, model),
       "range": run("-q", "-s", "fake", "--fake-scale", "11", data, model),
       "other": run("-q", "-s", "mfn", "--fake-scale", "2", data, model)}
m = load_model(model)
out["model"] = [m.solver, m.weights.ravel().tolist(), model.read_text().splitlines()[0]]
print(json.dumps(out))
'''


@pytest.mark.subprocess
def test_a_solver_registered_by_one_catalog_line_reaches_every_reader(tmp_path):
    """docs/design.md's walk-through: a family's spec module and fit module, and one line
    in the catalog's FAMILIES, make a solver that --help lists (with its option in its
    family's section and its LIBLINEAR code), --help-solver describes, the option
    checks know, -s CODE runs, and LIBLINEAR's model format writes and reads back."""
    import json
    import subprocess
    import sys

    from conftest import child_env

    (tmp_path / "fake_spec.py").write_text(FAKE_SPEC)
    (tmp_path / "fake.py").write_text(FAKE_FIT)
    proc = subprocess.run([sys.executable, "-c", FAKE_CHILD, str(tmp_path),
                           str(PACKAGE / "problem" / "catalog.py")],
                          capture_output=True, text=True, env=child_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    status, text = out["help"]
    assert status == 0
    assert "fake       the fake objective of the test" in text and "LIBLINEAR -s 99" in text
    assert "Options of fake:" in text and "--fake-scale" in text
    assert re.search(r"LIBLINEAR's\s+code\s+[0-9,\s]*21,\s+99\s", text)
    status, text = out["help_solver"]
    assert status == 0 and text.startswith("fake (binary): the fake objective of the test")
    assert "--fake-scale FLOAT" in text and "default 0.5" in text
    assert out["code"] == [0, ""]
    status, text = out["range"]
    assert status != 0 and "--fake-scale" in text and "out of range [0, 10]" in text
    status, text = out["other"]
    assert status != 0 and "does not apply to solver 'mfn'" in text
    solver, weights, first_line = out["model"]
    assert solver == "liblinear:FAKE_SVC" and first_line == "solver_type FAKE_SVC"
    # fake_scale x the mean of t: +1 (LIBLINEAR's first class) on 20 of the 30 rows
    assert weights == [2 * (1 / 3)] * 3
