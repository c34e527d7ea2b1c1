"""Structure the code must keep (issue 16): the model formats below linsvm.model, and
one atomic writer for every file linsvm writes."""
import ast
import pathlib

import linsvm

PACKAGE = pathlib.Path(linsvm.__file__).parent


def _tree(path):
    return ast.parse(path.read_text(), filename=str(path))


def test_format_modules_do_not_import_the_model_module():
    """linsvm.model dispatches to the formats; none of them imports it back (no cycle)."""
    for name in ("model_io.py", "model_linsvm.py", "model_liblinear.py", "atomic.py"):
        for node in ast.walk(_tree(PACKAGE / name)):
            if isinstance(node, ast.ImportFrom):
                target = ("." * node.level) + (node.module or "")
                assert target not in (".model", "linsvm.model"), (name, target)
                assert not (node.level == 1 and node.module is None
                            and any(a.name == "model" for a in node.names)), name


def _writes_a_file(node):
    """A call that creates, replaces or syncs a file outside linsvm.atomic."""
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
    """Regression guard for 'one atomic writer': no module but atomic.py writes files
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
    assert "Umask" in (PACKAGE / "atomic.py").read_text()      # the creation mode is read there


def test_readme_second_command_is_what_ci_runs():
    """The README's second command (install with the test and mpi extras, the quick
    reproductions, the suite) is .ci/run's: a change to one must reach the other."""
    import re

    root = pathlib.Path(__file__).resolve().parent.parent    # the checkout, not site-packages
    blocks = re.findall(r"```sh\n(.*?)\n```", (root / "README.md").read_text(), re.S)
    install, suite = blocks[1].rsplit(" && ", 1)
    ci = (root / ".ci" / "run").read_text().splitlines()
    assert install in ci, install
    assert suite in ci and install.startswith('python3 -m pip install ".[test,mpi]"')
