"""The command line's options from the solver catalog: -s, the solver options, their
help in sections by family, --help-solver, and the options train and cv share.

Everything here is read from linsvm.problem.catalog, the one home of the solvers'
defaults; nothing imports a solver or NumPy, so `--help` starts at once.
"""
from __future__ import annotations

import re
from types import MappingProxyType
from typing import Mapping, NamedTuple

import click

from ..errors import ParameterError
from ..problem.catalog import SOLVERS, liblinear_entry, liblinear_no_effect
from .messages import SHORT_FLAGS, OneLineUsage, UsageLineError, flag

__all__ = ["SolverChoice", "SolverParam", "SolverCommand", "resolve_solver", "one_thread_m",
           "one_thread_note", "m_as_jobs", "drop_no_effect", "no_effect_note",
           "liblinear_problem_note", "solver_help",
           "solver_option_decorators", "option_owners", "parse_class_weights", "data_options",
           "cache_option", "decorate", "codes_text"]


def codes_text(info):
    """LIBLINEAR's -s codes of a solver, e.g. 'LIBLINEAR -s 1 (= --loss l2), -s 3 (= --loss
    l1)', with the defaults that make a code's problem LIBLINEAR's: '-s 11 (=
    --regularize-bias)'."""
    parts = []
    for code, liblinear in sorted(info.liblinear_codes.items()):
        extra = [f"{flag(k)} {v}" for k, v in liblinear.implied.items()]
        extra += [_bool_flag(k, v) for k, v in liblinear.defaults.items()]
        parts.append(f"-s {code}" + (f" (= {' '.join(extra)})" if extra else ""))
    return "LIBLINEAR " + ", ".join(parts) if parts else ""


def _bool_flag(name, value):
    """--name or --no-name for a bool option's value."""
    return flag(name) if value else f"--no-{name.replace('_', '-')}"


def _codes_list():
    """LIBLINEAR's -s codes linsvm takes, in order: '1, 2, 3, 4, 11, ...'."""
    return ", ".join(map(str, sorted(c for info in SOLVERS.values() for c in info.liblinear_codes)))


def solver_help():
    lines = ["\b", "Solvers (-s NAME, or LIBLINEAR's code where linsvm solves the same problem), "
             "the objective each minimizes, and the meaning/default of -e:"]
    for info in SOLVERS.values():
        lines.append(f"  {info.name:10s} {info.objective}")
        lines.append(f"  {'':10s} -e: {info.tol_meaning}; default {info.default_tol:g}  [{info.paper}]")
        if info.liblinear_codes:
            lines.append(f"  {'':10s} {codes_text(info)}")
    lines.append("  `--help-solver NAME` describes one solver and its options.")
    return "\n".join(lines)


class SolverChoice(NamedTuple):
    """The value of -s: a registered solver name, the options a LIBLINEAR code
    implies (dcd's --loss), the code itself (None when a name was given), and the
    defaults that make the problem LIBLINEAR's under the code (svr's regularize_bias
    under -s 11; linsvm.problem.registry.LiblinearCode)."""

    name: str
    implied: dict
    code: int | None
    defaults: Mapping = MappingProxyType({})


class SolverParam(click.ParamType):
    """-s NAME or LIBLINEAR's numeric code (1 = dcd --loss l2, 2 = mfn, ...)."""

    name = "solver"

    def get_metavar(self, param, ctx=None):
        return "NAME|CODE"

    def convert(self, value, param, ctx):
        if isinstance(value, SolverChoice):
            return value
        text = str(value).strip()
        if text in SOLVERS:
            return SolverChoice(text, {}, None)
        try:
            code = int(text)
        except ValueError:
            codes = ", ".join(map(str, sorted(c for info in SOLVERS.values() for c in info.liblinear_codes)))
            self.fail(f"{text!r} is not a solver: choose one of {', '.join(SOLVERS)} "
                      f"(or LIBLINEAR's code {codes})", param, ctx)
        try:
            name, entry = liblinear_entry(code)
        except ParameterError as exc:       # one line, not Click's usage block
            raise UsageLineError(str(exc)) from None
        return SolverChoice(name, dict(entry.implied), code, dict(entry.defaults))


def resolve_solver(solver, solver_options, bias=1.0):
    """The solver's name, with the options its LIBLINEAR code implies added to
    solver_options (in place), and the code's defaults (LIBLINEAR's problem) where the
    option is not given; a code that contradicts an option given is an error.
    LIBLINEAR's flags become the solver's options here: -p is the tube width
    (epsilon) of a solver without a p, -R turns regularize_bias off (which needs a bias
    feature, bias > 0), -m N sets n_threads (a solver on one thread has no n_threads:
    call one_thread_m first, which takes -m out; LIBLINEAR's options the code ignores:
    drop_no_effect first, which takes them out)."""
    _liblinear_flags(SOLVERS[solver.name], solver_options)
    if solver_options.get("regularize_bias") is False and bias is not None and bias <= 0:
        raise UsageLineError(f"-R (--no-regularize-bias) frees the bias weight, but -B {bias:g} "
                             "adds no bias feature: give -B > 0 (e.g. -B 1)")
    for key, value in solver.implied.items():
        given = solver_options.get(key)
        if given is not None and given != value:
            raise click.UsageError(f"-s {solver.code} is {solver.name} {flag(key)} {value}, "
                                   f"which contradicts {flag(key)} {given}")
        solver_options[key] = value
    for key, value in solver.defaults.items():
        solver_options.setdefault(key, value)
    return solver.name


# LIBLINEAR's flags drop_no_effect takes out of the solver options, by option name
_NO_EFFECT_KEYS = {"-p": "p", "-n": "nu"}


def drop_no_effect(solver, solver_options, C_given, class_weights):
    """The LIBLINEAR options given with `-s CODE` that LIBLINEAR accepts and ignores for
    the code (linsvm.problem.catalog.liblinear_no_effect), taken out so that the model
    is the one trained without them: -p and -n from solver_options (in place), -c
    (C_given: whether -c was given) and -w (class_weights: the -w values given) for the
    caller to drop.  Returns the flags, in LIBLINEAR's order; () for a solver named,
    not numbered (its options are checked as given, and refused where they do not
    apply)."""
    if solver.code is None:
        return ()
    given = {"-c": C_given, "-w": bool(class_weights)}
    out = []
    for f in liblinear_no_effect(solver.code):
        key = _NO_EFFECT_KEYS.get(f)
        if key is not None and solver_options.get(key) is not None:
            del solver_options[key]
            out.append(f)
        elif given.get(f):
            out.append(f)
    return tuple(out)


def no_effect_note(solver, flags):
    """The note for the options drop_no_effect took out."""
    verb, it = ("has", "it") if len(flags) == 1 else ("have", "them")
    return f"{', '.join(flags)} {verb} no effect with -s {solver.code} (LIBLINEAR ignores {it} too)"


def liblinear_problem_note(solver, solver_options, bias):
    """For a LIBLINEAR code whose defaults (SolverChoice.defaults) made the problem
    LIBLINEAR's, the end of the summary line naming the options that give the solver's
    own default where they apply (a free bias weight needs a bias feature) and were not
    given: e.g. ' (LIBLINEAR's -s 11 problem; svr's default: -R)'; '' otherwise.
    solver_options: the options as given, before resolve_solver."""
    info = SOLVERS[solver.name]
    bias = info.default_bias if bias is None else bias
    given = set(solver_options) | ({"regularize_bias"} if solver_options.get("free_bias") else set())
    out = []
    for key, value in solver.defaults.items():
        if key in given or (key == "regularize_bias" and not bias > 0):
            continue
        own = info.options[key].default
        if own == value:
            continue
        out.append("-R" if key == "regularize_bias" and own is False else _bool_flag(key, own))
    if not out:
        return ""
    return f" (LIBLINEAR's -s {solver.code} problem; {solver.name}'s default: {' '.join(out)})"


def _p_is_epsilon(info):
    """Whether LIBLINEAR's -p is the solver's tube width epsilon: it has an epsilon and
    no option p of its own (alm's loss exponent)."""
    return "p" not in info.options and "epsilon" in info.options


def _liblinear_flags(info, opts):
    """-p, -R and -m as the solver's options (resolve_solver), in place."""
    if opts.get("p") is not None and _p_is_epsilon(info):
        if opts.get("epsilon") is not None:
            raise click.UsageError("-p and --epsilon are one option for "
                                   f"{info.name} (the tube width): give one")
        opts["epsilon"] = opts.pop("p")
    if opts.pop("free_bias", None):
        if "regularize_bias" not in info.options:
            raise UsageLineError(f"-R: {info.name} has no free intercept (solvers that have "
                                 f"one: {', '.join(_with_option('regularize_bias'))})")
        if opts.get("regularize_bias"):
            raise click.UsageError("-R contradicts --regularize-bias")
        opts["regularize_bias"] = False
    threads = opts.pop("threads", None)     # a solver on one thread: one_thread_m's
    if threads is not None:
        if opts.get("n_threads") is not None and opts["n_threads"] != threads:
            raise click.UsageError("-m and --n-threads differ: give one")
        opts["n_threads"] = threads


def one_thread_m(solver, solver_options):
    """-m N given to a solver that runs on one thread, taken out of solver_options; else
    None.  Multi-core LIBLINEAR takes -m with every -s and uses it where it has threads;
    here a one-vs-rest run spends it on its columns (m_as_jobs), as -j."""
    if "n_threads" in SOLVERS[solver.name].options:
        return None
    return solver_options.pop("threads", None)


def one_thread_note(solver, threads):
    """The start of the note for -m `threads` given to a solver on one thread."""
    return f"-m {threads}: {solver} runs on one thread (its coordinate steps are sequential)"


def m_as_jobs(note, solver, threads, n_jobs):
    """The one-vs-rest column threads (-j) for -m `threads` given to a solver on one
    thread (one_thread_m): threads when -j is left at 0 (the free cores), else -j; says
    so in one note."""
    what = one_thread_note(solver, threads)
    if SOLVERS[solver].kind != "binary":
        note(f"{what}; -m is ignored")
        return n_jobs
    if n_jobs:
        note(f"{what}; the columns of a one-vs-rest run take -j {n_jobs}")
        return n_jobs
    note(f"{what}; the columns of a one-vs-rest run take {threads} (as -j {threads})")
    return threads


def _with_option(name):
    return [n for n, info in SOLVERS.items() if name in info.options]


def option_owners():
    """Solver option name -> [(solver name, Option)] in registry order."""
    seen = {}
    for info in SOLVERS.values():
        for name, opt in info.options.items():
            seen.setdefault(name, []).append((info.name, opt))
    return seen


def family(info):
    """A solver's family (SolverInfo.family: the FAMILY of the spec module that declares
    it, linsvm/solvers/FAMILY_spec.py)."""
    return info.family


def family_members():
    """Family -> its solver names, in registry order."""
    out = {}
    for info in SOLVERS.values():
        out.setdefault(family(info), []).append(info.name)
    return out


SHARED_SECTION = "Options of several solvers"


def option_section(owners):
    """The help section of a solver option: its family's, or the shared one."""
    families = {family(SOLVERS[n]) for n in owners}
    if len(families) > 1:
        return SHARED_SECTION
    return "Options of " + ", ".join(family_members()[families.pop()])


def _solver_list(names):
    """Solver names for help text, a whole family of three or more as 'mfn family'."""
    out, names = [], list(names)
    for members in family_members().values():
        if len(members) > 2 and all(m in names for m in members):
            out.append(f"{members[0]} family")
            names = [n for n in names if n not in members]
    return ", ".join(out + names)


def _option_help(opt, owners):
    """Help of a solver option: its text, the solvers it applies to (when not its
    whole help section's) and its default(s)."""
    by_default = {}
    for name, o in owners:
        by_default.setdefault(repr(o.default), (o.default, []))[1].append(name)
    names = [n for n, _ in owners]
    section = option_section(names)
    whole = section != SHARED_SECTION and names == family_members()[family(SOLVERS[names[0]])]
    if len(by_default) == 1:
        where = ("" if whole else _solver_list(names) + "; ") + f"default {opt.default}"
    else:
        where = "default " + ", ".join(f"{d} ({_solver_list(ns)})" for d, ns in by_default.values())
    return f"{opt.help} [{where}]"


def solver_option_decorators(exclude=()):
    """One Click option per solver option name across the registry (defaults None:
    only options the user gives are passed, and train() checks they apply);
    options with a fixed set of values are Click choices."""
    decorators = []
    for name, owners in sorted(option_owners().items()):
        if name in exclude:
            continue
        opt = owners[0][1]
        help_text = _option_help(opt, owners)
        flag = name.replace("_", "-")
        if opt.type is bool:
            decorators.append(click.option(f"--{flag}/--no-{flag}", name, default=None, help=help_text))
        else:
            flags = (SHORT_FLAGS[name], f"--{flag}") if name in SHORT_FLAGS else (f"--{flag}",)
            if name == "p":
                help_text += _p_as_epsilon_help()
            typ = click.Choice(list(opt.choices)) if opt.choices else opt.type
            decorators.append(click.option(*flags, name, type=typ, default=None, help=help_text))
    return decorators


def _p_as_epsilon_help():
    """The end of -p's help: the solvers whose tube width it is (_p_is_epsilon)."""
    infos = [info for info in SOLVERS.values() if _p_is_epsilon(info)]
    if not infos:
        return ""
    kinds = {info.kind for info in infos}
    which = f"the {kinds.pop()} solvers" if len(kinds) == 1 else "the solvers"
    return (f"  For {which} ({', '.join(info.name for info in infos)}) -p is the tube width "
            "--epsilon, as LIBLINEAR's -p.")


def _bias_default_help():
    """-B's default, from the solvers' default_bias: 1, or none for the solvers without
    a bias feature by default."""
    parts = [f"-s {info.name}" + (f" ({codes_text(info)})" if info.liblinear_codes else "")
             for info in SOLVERS.values() if info.default_bias <= 0]
    return "[default: 1" + (f"; none for {', '.join(parts)}" if parts else "") + "]"


def _help_solver(ctx, param, value):
    """--help-solver NAME: one solver's objective, -e, codes and options; then exit."""
    if value is None or ctx.resilient_parsing:
        return
    name = SolverParam().convert(value, param, ctx).name
    info = SOLVERS[name]
    out = [f"{info.name} ({info.kind}): {info.objective}",
           f"  -e: {info.tol_meaning}; default {info.default_tol:g}",
           f"  paper: {info.paper}"]
    if info.liblinear_codes:
        out.append(f"  {codes_text(info)}")
    out.append("")
    rows = []
    for opt_name, opt in info.options.items():
        name = flag(opt_name)
        if opt.type is bool:
            name = f"{name}/--no-{opt_name.replace('_', '-')}"
        elif opt.choices:
            name += " [" + "|".join(opt.choices) + "]"
        else:
            name += " " + opt.type.__name__.upper()
        rows.append((name, f"{opt.help} [default {opt.default}]"))
    if rows:
        formatter = ctx.make_formatter()
        with formatter.section(f"Options of {info.name}"):
            formatter.write_dl(rows)
        out.append(formatter.getvalue().rstrip())
    else:
        out.append(f"{info.name} has no options of its own.")
    click.echo("\n".join(out))
    ctx.exit(0)


# LIBLINEAR's `-wLABEL WEIGHT` (-w1 2, -w-1 0.5): a label glued to -w, the weight next.
_W_GLUED = re.compile(r"^-w([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)$")


class SolverCommand(OneLineUsage, click.Command):
    """A train/cv command: help with the solver options in sections by solver
    family, LIBLINEAR's `-wLABEL WEIGHT` read as `-w LABEL:WEIGHT`, usage errors in
    one line (OneLineUsage)."""

    def parse_args(self, ctx, args):
        out, i = [], 0
        while i < len(args):
            tok = args[i]
            if tok == "--":
                out += args[i:]
                break
            m = _W_GLUED.match(tok)
            if m and i + 1 < len(args):
                out += ["-w", f"{m.group(1)}:{args[i + 1]}"]
                i += 2
                continue
            out.append(tok)
            i += 1
        return super().parse_args(ctx, out)

    def format_options(self, ctx, formatter):
        owners = option_owners()
        general, sections = [], {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.name in owners:
                sections.setdefault(option_section([n for n, _ in owners[param.name]]), []).append(record)
            else:
                general.append(record)
        with formatter.section("Options"):
            formatter.write_dl(general)
        order = [SHARED_SECTION] + ["Options of " + ", ".join(v) for v in family_members().values()]
        for title in order:
            if title in sections:
                with formatter.section(title):
                    formatter.write_dl(sections[title])


def parse_class_weights(values):
    """-w values: LABEL:WEIGHT pairs, or `balanced` alone (scikit-learn's rule)."""
    if "balanced" in values:
        if len(values) > 1:
            raise click.BadParameter("'balanced' cannot be combined with other class weights",
                                     param_hint="-w")
        return "balanced"
    weights = {}
    for text in values:
        label, sep, weight = text.partition(":")
        try:
            if not sep:
                raise ValueError
            weights[float(label)] = float(weight)
        except ValueError:
            raise click.BadParameter(f"{text!r} is not LABEL:WEIGHT (or -wLABEL WEIGHT, or balanced)",
                                     param_hint="-w") from None
    return weights


def data_options(single_cost):
    """Options shared by `train` and `cv`: solver, objective, weights, seed, quiet."""
    if single_cost:
        cost = click.option("-c", "--cost", "C", default=1.0, show_default=True, type=float,
                            help="C: cost of the loss (LIBLINEAR's -c, the same for every solver).")
    else:
        cost = click.option("-c", "--cost", "C", default=None, metavar="GRID",
                            help="C values: a list 0.25,0.5,1 or a range lo:hi:step (default 1).")
    return [
        click.argument("training_file", type=click.Path(dir_okay=False, allow_dash=True)),
        click.option("-s", "--solver", default="mfn", show_default=True, type=SolverParam(),
                     help=f"Solver: a name or LIBLINEAR's code {_codes_list()} (see the list below)."),
        click.option("--help-solver", metavar="NAME", expose_value=False, is_eager=True,
                     callback=_help_solver, help="Describe solver NAME and its options, and exit."),
        cost,
        click.option("-e", "--tol", type=float, default=None,
                     help="Stopping tolerance (solver-specific meaning; see the list below)."),
        click.option("-B", "--bias", default=None, type=float,
                     help="Append a constant feature of this value to every example, its weight "
                          "regularized like the others unless -R (LIBLINEAR's -B); <= 0: no "
                          "bias.  " + _bias_default_help()),
        click.option("-w", "--class-weight", "class_weights", multiple=True, metavar="LABEL:WEIGHT",
                     help="Multiply C by WEIGHT for class LABEL (repeatable; LIBLINEAR's -wLABEL "
                          "WEIGHT too, e.g. -w-1 0.5), or `-w balanced`: class j gets weight "
                          "n_samples / (n_classes * n_j), scikit-learn's rule for imbalanced data."),
        click.option("-W", "--instance-weights", type=click.Path(dir_okay=False),
                     help="File with one weight >= 0 per training example, scaling its loss."),
        click.option("-R", "free_bias", is_flag=True, default=False,
                     help="Do not regularize the bias weight (LIBLINEAR's -R; = "
                          "--no-regularize-bias, for the solvers that have it: the finite Newton "
                          "solvers mfn, ls, svr and the logistic and L1 ones); needs -B > 0."),
        click.option("-m", "threads", type=click.IntRange(1), default=None, metavar="N",
                     help="Threads for the sparse kernels (multi-core LIBLINEAR's -m; = "
                          "--n-threads, for the solvers that have it).  The solvers on one "
                          "thread (dcd, sdm, the dual solvers) spend it on the columns of a "
                          "one-vs-rest run, as -j."),
        click.option("--seed", default=0, show_default=True, type=int,
                     help="Seed for random choices (and cross-validation folds)."),
        click.option("--allow-many-classes", is_flag=True,
                     help="Train on labels that do not look like classes: by default a classifier "
                          "refuses a label that is not an integer (regression data) and more than "
                          "100 classes with under 10 training examples per class on average."),
        click.option("-q", "--quiet", is_flag=True,
                     help="No progress, notes or summary (warnings still show)."),
        click.option("--shards", is_flag=True,
                     help="TRAINING_FILE names shard files: a glob pattern (quoted, so that "
                          "linsvm expands it, not the shell) or a comma-separated list of names "
                          "and patterns, plain or compressed, read in sorted name order as one "
                          "data set.  Under mpiexec each rank reads whole shards, spread by size."),
        cache_option("TRAINING_FILE"),
    ]


def cache_option(what):
    """--cache/--no-cache of train, cv and predict (linsvm.io.cache)."""
    return click.option(
        "--cache/--no-cache", "cache", default=None,
        help=f"Parse {what} (SVM-light text, plain or compressed) once: convert it on first "
             "use into a binary copy in the cache directory ($LINSVM_CACHE, else "
             "$XDG_CACHE_HOME/linsvm or ~/.cache/linsvm) and map that copy while the file's "
             "size and modification time are unchanged; a stale or damaged copy is made "
             "again.  Setting LINSVM_CACHE=DIR turns it on; --no-cache turns it off.  "
             "Standard input and binary files are read as they are (docs/convert.md).")


def decorate(func, options):
    for deco in reversed(options):
        func = deco(func)
    return func
