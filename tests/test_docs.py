"""The documentation holds together: README.md stays a short page for users
whose first command installs and runs linsvm, every relative link in README.md and
docs/*.md reaches a file of the repository (and a #anchor a heading of that file, by
GitHub's rules), and the command pages name every option their command has."""
import pathlib
import re
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent      # the checkout, not site-packages
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

FENCE = re.compile(r"^(```|~~~)")
# [text](target) and ![alt](target); the target ends at whitespace or ')'.
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")


def _prose_lines(text):
    """The lines outside fenced code blocks, with their 1-based numbers."""
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line.lstrip()):
            inside = not inside
            continue
        if not inside:
            yield number, line


def github_slug(heading):
    """The anchor GitHub gives a heading: markup dropped (link text kept), lower case,
    every character but letters, digits, spaces, '-' and '_' removed, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)      # links: their text
    text = re.sub(r"<[^>]+>", "", text)                               # inline HTML
    text = text.strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(path):
    """Every anchor of the headings of a Markdown file, duplicates numbered as GitHub
    numbers them (x, x-1, x-2, ...)."""
    seen = {}
    out = set()
    for _, line in _prose_lines(path.read_text(encoding="utf-8")):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = github_slug(m.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(path):
    """(line number, target) of every link of a Markdown file outside code."""
    for number, line in _prose_lines(path.read_text(encoding="utf-8")):
        for m in LINK.finditer(INLINE_CODE.sub("", line)):
            yield number, m.group(1)


def _is_external(target):
    return re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) is not None     # http:, mailto:, ...


def test_slug_rules():
    """The slug function on headings of the kinds the docs use (GitHub's results)."""
    assert github_slug("Coming from LIBLINEAR") == "coming-from-liblinear"
    assert github_slug("linsvm-train") == "linsvm-train"
    assert github_slug("One-vs-rest on threads (`-j`)") == "one-vs-rest-on-threads--j"
    assert github_slug("Probabilities: version 3") == "probabilities-version-3"
    assert github_slug("Before the work: paths and memory") == "before-the-work-paths-and-memory"
    assert github_slug("LIBLINEAR's format") == "liblinears-format"
    assert github_slug("mfn: the modified finite Newton method") == "mfn-the-modified-finite-newton-method"


def test_the_docs_exist():
    names = {p.name for p in DOCS.glob("*.md")}
    for name in ("index.md", "train.md", "predict.md", "cv.md", "synth.md", "renumber.md",
                 "solvers.md", "mpi.md", "model-format.md", "benchmarks.md", "python.md",
                 "design.md", "inspect.md", "convert.md", "binary-format.md"):
        assert name in names, name


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    """Every relative link names a file of the repository, and its #anchor (or a bare
    #anchor, into the page itself) one of that file's headings."""
    bad = []
    for number, target in links(page):
        if _is_external(target):
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        where = f"{page.relative_to(ROOT)}:{number}: {target}"
        if ROOT not in dest.parents and dest != ROOT:
            bad.append(f"{where}: outside the repository")
            continue
        if not dest.exists():
            bad.append(f"{where}: no such file")
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{where}: no heading with that anchor")
    assert bad == []


def test_docs_cite_no_design_note_outside_the_repository():
    """The docs cite only files in the repository: no ../shared/ or DESIGN.md outside it."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert "shared/DESIGN.md" not in text, page
        assert "DESIGN.md" not in text, page


def test_readme_is_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 420


def test_readme_first_command_installs_generates_trains_and_predicts():
    """The README's first ```sh block is one line: install this checkout, generate a data
    set with `linsvm synth`, train on it, predict with the model, in that order, and
    every program it runs after pip is a console script the package installs."""
    blocks = re.findall(r"```sh\n(.*?)\n```", README.read_text(encoding="utf-8"), re.S)
    first = blocks[0]
    assert "\n" not in first
    steps = first.split(" && ")
    assert steps[0] == "python3 -m pip install ."
    programs = [s.split()[0] + (" " + s.split()[1] if s.split()[0] == "linsvm" else "")
                for s in steps[1:]]
    assert programs == ["linsvm synth", "linsvm-train", "linsvm-predict"]
    synth, train, predict = (s.split() for s in steps[1:])
    train_data, model = train[-2], train[-1]
    assert train_data == synth[2] and predict[1] == synth[3] and predict[2] == model
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert {"linsvm", "linsvm-train", "linsvm-predict"} <= set(scripts)


def _long_options(command):
    """The long option names (--x) of the rows of `linsvm COMMAND --help` (its own
    options and the solver options), through the command line itself."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "linsvm", command, "--help"], check=True,
                         capture_output=True, text=True,
                         env={**__import__("os").environ, "COLUMNS": "200"}).stdout
    names = set()
    for line in out.splitlines():      # option rows: two spaces, then the names
        m = re.match(r"^  (?:-\w+, )?(--[\w-]+)(?: / (--[\w-]+))?", line)
        if m:
            names.update(n for n in m.groups() if n)
    return names - {"--help"}


@pytest.mark.subprocess
@pytest.mark.parametrize("command, page", [("train", "train.md"), ("predict", "predict.md"),
                                           ("cv", "cv.md"), ("synth", "synth.md"),
                                           ("renumber", "renumber.md"),
                                           ("inspect", "inspect.md"),
                                           ("convert", "convert.md")])
def test_command_pages_name_every_option(command, page):
    """Each command's page names every long option the command takes (for cv, the options
    it shares with train may be named on train's page, which cv.md links to)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    if command == "cv":
        text += (DOCS / "train.md").read_text(encoding="utf-8")
    missing = sorted(opt for opt in _long_options(command)
                     if not re.search(re.escape(opt) + r"(?![\w-])", text))
    assert missing == []


def _design_steps():
    """The file paths the 'Adding a solver / Adding a kind' steps of docs/design.md name
    (in backticks; templates with NAME or MODULE left out)."""
    text = (DOCS / "design.md").read_text(encoding="utf-8")
    steps = re.findall(r"^## Adding a (?:solver|kind)\n(.*?)(?=^## )", text, re.M | re.S)
    paths = set()
    for block in steps:
        for token in re.findall(r"`([^`\s]+)`", block):
            if "/" in token and "NAME" not in token and "MODULE" not in token \
                    and re.search(r"\.(py|pyx|pxd|md)$|/$", token):
                paths.add(token)
    return sorted(paths)


def test_design_steps_name_files_that_exist():
    """docs/design.md's steps for adding a solver or a kind name files of the repository."""
    paths = _design_steps()
    assert len(paths) >= 8, paths
    missing = [p for p in paths if not (list(ROOT.glob(p)) if "*" in p else (ROOT / p).exists())]
    assert missing == []


def _mpi_table_solvers(heading, page="mpi.md"):
    """The solver names in the first column of the table under `heading` of docs/mpi.md
    (or of another page)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    block = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#)", text, re.M | re.S).group(1)
    names = set()
    for row in re.findall(r"^\|([^|]+)\|", block, re.M):
        names.update(n.strip() for n in row.split(",") if re.fullmatch(r"\s*[a-z][a-z0-9-]*\s*", n))
    return names - {"solver", "solvers"}


def test_mpi_page_lists_which_solvers_run_distributed_as_the_catalog_does():
    """docs/mpi.md's table of how each solver runs on P ranks names exactly the solvers
    registered with a distributed mode, and its serial-only table the others."""
    from linsvm.problem.catalog import SOLVERS

    distributed = {n for n, info in SOLVERS.items() if info.distributed is not None}
    assert _mpi_table_solvers("How each solver runs on P ranks") == distributed
    assert _mpi_table_solvers("Serial only") == set(SOLVERS) - distributed


def test_streaming_page_lists_which_solvers_stream_as_the_catalog_does():
    """docs/streaming.md's two tables name exactly the solvers whose catalog entry says
    they read the rows in passes (SolverInfo.streams), and the others."""
    from linsvm.problem.catalog import SOLVERS

    streams = {n for n, info in SOLVERS.items() if info.streams}
    assert _mpi_table_solvers("Solvers that stream", "streaming.md") == streams
    assert _mpi_table_solvers("Solvers that need the data in memory",
                              "streaming.md") == set(SOLVERS) - streams


def _adding_a_solver():
    text = (DOCS / "design.md").read_text(encoding="utf-8")
    return re.search(r"^## Adding a solver\n(.*?)(?=^## )", text, re.M | re.S).group(1)


def test_adding_a_solver_says_what_the_catalog_does():
    """docs/design.md's walk-through of adding a solver is the catalog's mechanism: each
    family in the catalog's FAMILIES is a spec module linsvm/solvers/FAMILY_spec.py with
    its SPECS, every SolverInfo field the steps name is one, and the test that registers
    a fake family by one line is where the page says."""
    from linsvm.problem import catalog, registry

    block = _adding_a_solver()
    assert "`FAMILIES` of `linsvm/problem/catalog.py`" in block
    assert "`linsvm/solvers/MODULE_spec.py`" in block and "`SPECS`" in block
    for family in catalog.FAMILIES:
        assert (ROOT / "linsvm" / "solvers" / f"{family}_spec.py").is_file(), family
    step = re.search(r"^3\. (.*?)^4\. ", block, re.M | re.S).group(1)
    named = set(re.findall(r"`([a-z_]+)`", step)) | set(re.findall(r"`([a-z_]+)=", step))
    assert {"kind", "options", "liblinear_codes", "memory", "probabilities", "default_bias",
            "distributed", "fit"} <= named
    assert named <= set(registry.SolverInfo._fields), named - set(registry.SolverInfo._fields)
    for name in ("LiblinearCode", "WorkMemory", "Option", "SolverInfo"):
        assert f"`{name}`" in step and hasattr(registry, name), name
    layout = (ROOT / "tests" / "test_layout.py").read_text(encoding="utf-8")
    assert "`tests/test_layout.py` checks it" in block
    assert "def test_a_solver_registered_by_one_catalog_line_reaches_every_reader" in layout
