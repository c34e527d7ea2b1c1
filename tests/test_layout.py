"""Structure the code must keep: layers that import only downwards,
no import cycle, no private name used across modules, imports inside functions only
for optional or slow third-party packages (and two slow standard modules), small modules and functions, one atomic
writer for every file linsvm writes.  docs/design.md describes the layers."""
import ast
import functools
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
BASE = {"linsvm._version", "linsvm._lazy", "linsvm._openmp", "linsvm.errors"}
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
                                    "linsvm.cli.command_convert", "linsvm.problem.catalog"])
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
    number = re.compile(r"\b(issues?|item)" + r"[ _]?#?[0-9]+", re.I)
    found = [f"{path.name}:{n}" for path in sorted((ROOT / "tests").glob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if number.search(line)]
    assert found == []


def test_only_csr_pxd_reads_the_csr_buffers():
    """docs/design.md, "The data view": the cores read rows through csr.pxd's accessors
    and never test the layout of the values themselves (csr.pxd's value_layout does), so
    a new layout of the values changes csr.pxd alone."""
    reads = re.compile(r"\.(indptr|indices|data|data32)\[|\.(unit|row_scale)\b")
    offenders = []
    for path in sorted((ROOT / "csrc").glob("*.p*")):
        if path.name in ("csr.pxd", "_data.pyx", "_kernels.pyx", "_scale.pyx", "_svmlight.pyx") \
                or path.name.startswith("svmlight_") or path.suffix not in (".pyx", ".pxd", ".pxi"):
            continue              # the accessors; the buffer checks; the text I/O kernels
        code = _lex_file(path)[0].splitlines()           # strings and comments blanked
        hits = [k + 1 for k, ln in enumerate(code) if reads.search(ln)]
        if hits:
            offenders.append(f"csrc/{path.name}:{hits[0]}")
    assert not offenders, f"read the rows through csr.pxd's accessors: {offenders}"


# ---------------------------------------------------------------- comments and Cython sources
# The Cython sources: the cores (csrc/*.pyx), their shared declarations and inline helpers
# (csrc/*.pxd) and the declarations linsvm/ holds for the cores that cimport each other.
CYTHON_SOURCES = sorted((ROOT / "csrc").glob("*.pyx")) + sorted((ROOT / "csrc").glob("*.pxd")) + \
    sorted((ROOT / "csrc").glob("*.pxi")) + \
    sorted((ROOT / "linsvm").glob("*.pxd"))
# Every source whose comments and docstrings the prose tests read.
PROSE_SOURCES = sorted((ROOT / "linsvm").rglob("*.py")) + CYTHON_SOURCES
MAX_PARAMETERS = 12
# The documented API, whose keywords are the options of the command line: train,
# cross_validate and the scikit-learn estimators' __init__ (docs/python.md).
MANY_PARAMETERS_DOCUMENTED = {"linsvm.fit.training.train", "linsvm.fit.cv.cross_validate"}
_STRING_PREFIXES = {"r", "u", "b", "f", "br", "rb", "fr", "rf", "c"}


@functools.lru_cache(maxsize=None)
def _lex_file(path):
    return _lex(path.read_text())


def _lex(src):
    """(code, prose) of Python or Cython source: `code` is the source with every comment
    blanked and every string literal replaced by one `0` (newlines kept, so lines and
    columns stay); `prose` is [(line, text)] of every comment and of every string that
    stands as a statement of its own (the docstrings).  Cython lexes as Python does for
    this purpose; written here so as not to depend on the tokenize module's treatment
    of Cython's extra tokens."""
    code, prose = list(src), []
    i, n, depth, line, start = 0, len(src), 0, 1, True

    def blank(a, b):
        for k in range(a, b):
            if code[k] != "\n":
                code[k] = " "

    while i < n:
        ch = src[i]
        if ch == "#":
            j = src.find("\n", i)
            j = n if j < 0 else j
            prose.append((line, src[i:j]))
            blank(i, j)
            i = j
            continue
        if ch == "\n":
            line += 1
            start = start or depth == 0
            i += 1
            continue
        if ch == "\\" and src.startswith("\n", i + 1):
            line, i = line + 1, i + 2
            continue
        first = i
        if ch.isalpha() or ch == "_":
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            if not (j < n and src[j] in "'\"" and src[i:j].lower() in _STRING_PREFIXES):
                start, i = False, j
                continue
            ch, i = src[j], j
        if ch in "'\"":
            quote = ch * 3 if src.startswith(ch * 3, i) else ch
            j = i + len(quote)
            while j < n and not src.startswith(quote, j) and (len(quote) == 3 or src[j] != "\n"):
                j += 2 if src[j] == "\\" else 1
            j = min(n, j + len(quote))
            end = src.find("\n", j)
            rest = src[j:n if end < 0 else end].strip()
            if start and depth == 0 and (not rest or rest.startswith("#")):
                prose.append((line, src[first:j]))
            blank(first, j)
            code[first] = "0"
            line += src.count("\n", first, j)
            start, i = False, j
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if not ch.isspace():
            start = False
        i += 1
    return "".join(code), prose


def _prose_hits(pattern, paths=PROSE_SOURCES):
    """{path relative to the checkout: [(line, match)]} of `pattern` in the comments and
    docstrings of `paths`."""
    out = {}
    for path in paths:
        for line, text in _lex_file(path)[1]:
            for m in pattern.finditer(text):
                at = line + text.count("\n", 0, m.start())
                out.setdefault(str(path.relative_to(ROOT)), []).append((at, m.group()))
    return out


def _listed(hits):
    """The hits as "file:line: match" lines."""
    return [f"{f}:{line}: {m!r}" for f, found in sorted(hits.items()) for line, m in found]


def test_lexer_finds_comments_and_docstrings_only():
    code, prose = _lex('"""doc\n# not a comment"""\nx = f("# no", \'y\')  # yes\n'
                       'def g(a=")"):\n    r"""raw"""\n    z = ("kept"\n         "out")\n')
    assert [t for _, t in prose] == ['"""doc\n# not a comment"""', "# yes", 'r"""raw"""']
    assert [ln for ln, _ in prose] == [1, 3, 5]
    assert code.splitlines()[2].rstrip() == 'x = f(0     , 0  )' and code.count("\n") == 7
    assert "def g(a=0  ):" in code


# A dotted name of the package in prose: linsvm.x, linsvm.x.y.z (a trailing full stop
# ends the sentence, not the name).
_DOTTED = re.compile(r"(?<![\w.])linsvm(?:\.[A-Za-z_]\w*)+")


def _resolves(dotted):
    """Whether `dotted` names a module of linsvm (compiled ones included) or an attribute
    of one: the longest prefix that imports, then getattr for the rest."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ModuleNotFoundError as exc:
            if not (dotted + ".").startswith(f"{exc.name}."):
                raise                   # linsvm's module exists and needs a missing package
            continue
        for part in parts[k:]:
            if not hasattr(obj, part):
                return False
            obj = getattr(obj, part)
        return True
    return False


@pytest.mark.slow
def test_dotted_names_in_comments_and_docstrings_resolve():
    """Every `linsvm.x.y` a comment or docstring of linsvm/ or csrc/ names is a module or
    an attribute of one, so that a reader can follow it."""
    hits = {}
    for f, found in _prose_hits(_DOTTED).items():
        bad = [(line, name) for line, name in found if not _resolves(name)]
        if bad:
            hits[f] = bad
    assert _listed(hits) == []


# An issue's number: the word issue (or issues, PR, pull request), an optional #, a
# number; or # and a number alone, as in a parenthesis after a sentence.
_ISSUE = re.compile(r"\bissues?[\s_-]*#?\d+|(?<![\w&#])#\d+\b|\b(?:PR|pull request)\s*#?\d+", re.I)

# A timing or a measured figure.  A time: a number and a unit of time ("0.3 s", "12 ms",
# "10-20 ms", "2 minutes"); the short units are lower case, and a number followed by
# `=`, by `[` or `(` at once, or preceded by `^` is mathematics ("eq. 17 s = argmin",
# "x^2 s[k]").
# A ratio: a number with an x ("2x", "1.5x", "1.8-2.6x"; "2 x 2" and "0x1f" are not),
# or "N times / N% faster".  A report: "measured:", "measured on / at / over / with",
# "took N", "median(s) of N ... runs".  Option text and tolerances ("-e 0.01", "eps",
# "1e-3") carry no unit and no x, and stay.
_NUMBER = r"(?<![\w.^])\d+(?:\.\d+)?(?:\s*(?:-|to)\s*\d+(?:\.\d+)?)?"
_TIMING = re.compile(
    _NUMBER + r"\s?(?:s|ms|us|µs|μs|ns|secs?|mins?|[Ss]econds?|[Mm]illiseconds?|[Mm]icroseconds?"
    r"|[Nn]anoseconds?|[Mm]inutes?|[Hh]ours?)\b(?!\s*=|[\[(])"
    r"|" + _NUMBER + r"[x×](?!\w)"
    r"|(?i:" + _NUMBER + r"\s*(?:times|%)\s+(?:faster|slower|quicker))"
    r"|(?i:\bmeasured\s*(?::|on\b|at\b|over\b|with\b))"
    r"|(?i:\btook\s+(?:about\s+|only\s+)?\d)"
    r"|(?i:\bmedians?\s+of\s+\d+\s+(?:\w+\s+){0,2}runs?\b)")


def test_timing_pattern():
    """What the timing pattern takes, and the mathematics and option text it leaves."""
    for text in ("takes 0.3 s", "12 ms", "10-20 ms", "2x faster", "1.8-2.6x the iterations",
                 "3 times slower", "(measured: python -X importtime)", "measured on SECTOR",
                 "took 2665 loops", "median of 3 interleaved runs", "2 seconds",
                 "spin for about 0.1 s (docs/threads.md)"):
        assert _TIMING.search(text), text
    for text in ("-e 0.01", "eps / 10", "1e-3", "a 2 x 2 system", "0x1f", "eq. 17 s = argmin",
                 "x_ij^2 s[0:k]", "Joachims 2006 Sec. 4", "measured as ||g||", "every 100 loops",
                 "the last measured violation", "seconds spent in collectives"):
        assert not _TIMING.search(text), text


@pytest.mark.slow
def test_no_issue_numbers_or_timings_in_comments_and_docstrings():
    """The code says what it does and why, in its own terms: no issue numbers (the issues
    are not in the repository) and no timings or measured figures, which belong in docs/
    beside how they were measured (a comment names the page)."""
    assert _listed(_prose_hits(_ISSUE)) == []
    assert _listed(_prose_hits(_TIMING)) == []


# A def, cdef or cpdef statement that opens a parameter list: the keyword, the return
# type and qualifiers, then the name and `(` (not a class, struct or extern block, and no
# `=` before the `(`: `cdef double x = f(y)` declares a variable).
_CYTHON_DEF = re.compile(r"^( *)(?:cpdef|cdef|def)\s+(?!(?:class|struct|union|enum|extern|packed|"
                         r"public|readonly|fused)\b)[^=(\n]*?\b(\w+)\s*\(", re.M)


def _cython_functions(path):
    """[(name, first line, lines, parameters, defined here?)] of every function of a Cython
    source.  A function starts at a `def`/`cdef`/`cpdef` line with `(` and ends at the next
    non-blank, non-comment line indented no deeper than that line (for the module's
    functions: the next top-level statement); its lines run from the `def` line to the
    last non-blank one before that.  Its parameters are the comma-separated entries of the
    parenthesised list up to the matching `)` (a bare `*` is no parameter, `self` of a
    method aside).  A declaration without a body (`cdef ... (...) nogil` in a .pxd) counts
    its parameters and no lines."""
    code = _lex_file(path)[0]
    lines = code.splitlines()
    out = []
    for m in _CYTHON_DEF.finditer(code):
        indent, name = len(m.group(1)), m.group(2)
        depth, i, params, cur = 1, m.end(), [], ""
        while depth:
            ch = code[i]
            depth += (ch in "([{") - (ch in ")]}")
            if depth == 1 and ch == ",":
                params.append(cur)
                cur = ""
            elif depth:
                cur += ch
            i += 1
        params = [p.strip() for p in params + [cur] if p.strip() not in ("", "*", "/")]
        if indent and params and params[0] == "self":
            params = params[1:]
        first = code.count("\n", 0, m.start())                       # 0-based line
        close = code.count("\n", 0, i)
        head_end = next(k for k in range(close, len(lines))
                        if not lines[k].rstrip().endswith(("\\", ",")) or k == len(lines) - 1)
        body = lines[head_end].rstrip().endswith(":")
        last = head_end
        if body:
            for k in range(head_end + 1, len(lines)):
                text = lines[k]
                if not text.strip():
                    continue
                if len(text) - len(text.lstrip()) <= indent:
                    break
                last = k
        out.append((name, first + 1, last - first + 1 if body else 0, len(params), body))
    return out


def _cython_offenders():
    """{file or file:function, relative to the checkout: what exceeds}: files over
    MAX_MODULE_LINES lines, functions over MAX_FUNCTION_LINES lines or MAX_PARAMETERS
    parameters, in the Cython sources."""
    out = {}
    for path in CYTHON_SOURCES:
        rel = str(path.relative_to(ROOT))
        n = len(path.read_text().splitlines())
        if n > MAX_MODULE_LINES:
            out[rel] = f"{n} lines"
        for name, line, length, n_params, _ in _cython_functions(path):
            why = ([f"{length} lines"] if length > MAX_FUNCTION_LINES else []) + \
                  ([f"{n_params} parameters"] if n_params > MAX_PARAMETERS else [])
            if why:
                out[f"{rel}:{name}"] = f"line {line}: " + ", ".join(why)
    return out


def test_cython_function_boundaries_and_parameters(tmp_path):
    """The rule _cython_functions applies, on a small source."""
    src = ("cdef extern from 'x.h':\n    double sqrt(double)\n\n"
           "cdef inline double f(const double* x, int64_t n,\n"
           "                     double[:, ::1] a) noexcept nogil:\n"
           '    """doc\nat column 0 inside a string"""\n'
           "    cdef double s = g(x, n)\n\n"
           "# a comment at column 0\n    return s\n\n"
           "# the next one\n@cython.boundscheck(False)\n"
           "def h(*, a, b=(1, 2), c=')', **kw):\n    pass\n"
           "cdef class K:\n    cdef int m(self, int a) except -1:\n        return a\n"
           "cdef double d(int a, int b) noexcept nogil\n")
    path = tmp_path / "sample.pyx"
    path.write_text(src)
    assert _cython_functions(path) == [("f", 4, 8, 3, True), ("h", 15, 2, 4, True),
                                       ("m", 18, 2, 1, True), ("d", 20, 0, 2, False)]


def test_cython_sources_are_small_and_take_few_parameters():
    """The limits of linsvm's modules hold for the Cython sources too: files of at most
    MAX_MODULE_LINES lines, functions of at most MAX_FUNCTION_LINES lines, and no
    function with more than MAX_PARAMETERS parameters (pass a settings, work or output
    struct by pointer instead)."""
    assert _cython_offenders() == {}


def _python_functions_with_many_parameters():
    """{module.qualified name: parameters} of linsvm's functions with more than
    MAX_PARAMETERS parameters (every kind counted, `self` and `cls` of a method aside),
    but for the documented API: MANY_PARAMETERS_DOCUMENTED and the __init__ of the
    scikit-learn estimators."""
    out = {}
    for module, path in MODULES.items():

        def visit(node, prefix, in_class):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.", True)
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    a = child.args
                    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
                    names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
                    if in_class and names and names[0] in ("self", "cls"):
                        names = names[1:]
                    qualified = f"{module}.{prefix}{child.name}"
                    documented = qualified in MANY_PARAMETERS_DOCUMENTED or (in_class and (
                        child.name == "__init__" and module.startswith("linsvm.sklearn.")))
                    if len(names) > MAX_PARAMETERS and not documented:
                        out[qualified] = len(names)
                    visit(child, f"{prefix}{child.name}.<locals>.", False)

        visit(_tree(path), "", False)
    return out


@pytest.mark.slow
def test_functions_take_few_parameters():
    """No function of linsvm takes more than MAX_PARAMETERS parameters but the documented
    API, whose keywords are the command line's options (a settings record or a Problem
    carries the rest)."""
    assert _python_functions_with_many_parameters() == {}
    for name in MANY_PARAMETERS_DOCUMENTED:                 # the exemptions name real functions
        module, attr = name.rsplit(".", 1)
        assert callable(getattr(importlib.import_module(module), attr)), name

# ------------------------------------------------------------------ the solver catalog

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
