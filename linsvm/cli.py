"""Command line: `linsvm train|predict|cv|synth` and the `linsvm-train`, `linsvm-predict`,
`linsvm-cv` stand-alone commands (same options).

This module parses options and prints; reading data is linsvm.data's job,
training linsvm.train's, the file format linsvm.model's.  Every user error
ends as one line `PROG: error: ...` on stderr and a non-zero exit status
(1 for bad data/model/files, 2 for bad usage); no traceback reaches the user,
and a failed command leaves no output file behind.

On MPI (`mpiexec -n P linsvm-train ...`, P > 1; linsvm.distributed.mpi_launch
states how a launch is recognised, from the environment alone) `train` and `cv`
run on P ranks (_Job): each reads its share of the data
(linsvm.distributed.read_training_share) and trains with the others
(train(comm=...)).  Rank 0 alone prints -- notes, progress, warnings, the
summary, results -- and writes the model.  An error every rank meets alike
(options, data, a serial-only solver) is printed once, by rank 0, and every
rank exits with its status (the others silently: the entry points hide their
copy).  A check that could differ between ranks (a file one rank cannot read)
is made collective (_Job.run) before any rank goes on, and anything unexpected
on one rank ends the whole job at once (linsvm.collective.Collective.abort:
`linsvm: error: MPI rank R: ...`), so no rank is left waiting.  Without a
launcher, or with P = 1, nothing imports mpi4py: the serial program.
"""
from __future__ import annotations

import os
import re
import sys
import threading
import time
from typing import NamedTuple

import click
import numpy as np

from . import __version__
from .atomic import check_output_path
from .errors import LinsvmError, ParameterError
from .model import MODEL_FORMATS
from .predict import format_label
from .solvers import LIBLINEAR_UNSUPPORTED, SOLVERS, liblinear_code

_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _prog_name():
    """The name the user invoked: `linsvm-train`, `linsvm-predict`, `linsvm-cv`, or
    `linsvm train` for the group (and `python -m linsvm train`)."""
    ctx = click.get_current_context(silent=True)
    return ctx.command_path if ctx is not None and ctx.command_path else "linsvm"


class CommandError(click.ClickException):
    """A failure reported as one line `PROG: error: message`, exit status 1.  PROG is
    the invoked command, taken when the error is raised (Click shows the error
    after the command's context has closed)."""

    exit_code = 1

    def __init__(self, message):
        super().__init__(message)
        self.prog = _prog_name()

    def show(self, file=None):
        click.echo(f"{self.prog}: error: {self.format_message()}", err=True)


def _flag(name):
    """The command-line flag of a solver option's Python name (max_iter -> --max-iter)."""
    return "-p" if name == "p" else "--" + name.replace("_", "-")


def _error_text(exc):
    """A LinsvmError's message, naming a solver option by its flag, not its keyword."""
    if getattr(exc, "option", None) and getattr(exc, "detail", None):
        others = getattr(exc, "others", None)
        listed = "" if others is None else \
            f" (its options: {', '.join(map(_flag, others)) or 'none'})"
        return f"{_flag(exc.option)} {exc.detail}{listed}"
    return str(exc)


class UsageLineError(CommandError):
    """A usage error that needs no usage text (e.g. a LIBLINEAR -s code linsvm does not
    solve): one line `PROG: error: message`, exit status 2."""

    exit_code = 2


def _fail_on_errors(func):
    """Turn LinsvmError / OSError / Ctrl-C inside a command into one-line errors; on a
    rank of an MPI job anything but a LinsvmError or Click's error (which every rank
    meets alike) first ends the whole job (_abort_job)."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except LinsvmError as exc:
            raise CommandError(_error_text(exc)) from None
        except click.ClickException:
            raise
        except BaseException as exc:
            _abort_job(exc)             # on MPI: one rank's fault ends every rank
            raise
        finally:
            _Job.active = None

    return _serial_errors(wrapper)


def _serial_errors(func):
    """OSError, MemoryError and Ctrl-C inside a command as one-line errors."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError):       # `linsvm-predict ... - | head`
                try:
                    sys.stdout = open(os.devnull, "w")
                finally:
                    raise SystemExit(0)
            raise CommandError(_os_error_text(exc)) from None
        except MemoryError as exc:
            detail = f" ({exc})" if str(exc) else ""
            raise CommandError(f"out of memory{detail}; with sparse, large feature indices "
                               "'linsvm renumber' makes the weight vectors shorter") from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            raise SystemExit(130) from None

    return wrapper


def _os_error_text(exc):
    where = f" '{exc.filename}'" if getattr(exc, "filename", None) else ""
    return f"cannot access{where}: {exc.strerror or exc}"


def _abort_job(exc):
    """On a rank of a distributed command: print the fault and end every rank
    (Collective.abort); nothing for the serial program."""
    job = _Job.active
    if job is None or job.coll is None or isinstance(exc, (SystemExit, click.exceptions.Exit)):
        return
    if isinstance(exc, KeyboardInterrupt):
        text = "interrupted"
    elif isinstance(exc, OSError):
        text = _os_error_text(exc)
    else:
        text = f"{type(exc).__name__}: {exc}"
    job.coll.abort(text)


# ---------------------------------------------------------------------------- MPI

class _Job:
    """The ranks a train or cv command runs on: the serial program (comm None) or
    one rank of an MPI job (module notes).  rank, size; root: rank 0, the one that
    prints and writes.  `active` is the job of the command running now (one at a
    time per process), for _fail_on_errors."""

    active = None

    def __init__(self, comm):
        from .collective import collective_of

        self.comm = comm
        self.coll = collective_of(comm)
        self.rank = 0 if comm is None else int(comm.Get_rank())
        self.size = 1 if comm is None else int(comm.Get_size())
        self.root = self.rank == 0

    def run(self, fn, *args, root_only=False, **kwargs):
        """fn(*args, **kwargs) with its errors made collective: a one-line error
        (LinsvmError, OSError, Click's) on any rank is raised on every rank, the
        lowest failing rank's (prefixed "MPI rank R: " when R > 0), after one
        allgather, so no rank goes on alone.  root_only: fn runs on rank 0 only
        (what rank 0 alone writes).  Returns fn's result (None on the others with
        root_only)."""
        if self.comm is None:
            return fn(*args, **kwargs)
        out, fault = None, None
        if self.root or not root_only:
            try:
                out = fn(*args, **kwargs)
            except click.ClickException as exc:
                fault = (exc.exit_code, exc.format_message())
            except LinsvmError as exc:
                fault = (1, _error_text(exc))
            except OSError as exc:
                fault = (1, _os_error_text(exc))
        for rank, f in enumerate(self.comm.allgather(fault)):
            if f is not None:
                text = (f"MPI rank {rank}: " if rank else "") + f[1]
                raise (UsageLineError if f[0] == 2 else CommandError)(text)
        return out

    def gather(self, obj):
        """Every rank's picklable obj, in rank order ([obj] when serial)."""
        return [obj] if self.comm is None else self.comm.allgather(obj)


def _open_job(solver=None, probability=0):
    """The _Job of a train/cv command: the MPI job this process was launched in
    (linsvm.distributed.world_comm), else the serial program.  On several ranks a
    serial-only solver and -b 1 are refused here, before any data is read."""
    from .distributed import world_comm
    from .train import refuse_serial_only

    job = _Job(world_comm())
    if job.comm is None:
        return job
    _Job.active = job
    if solver is not None:
        refuse_serial_only(SOLVERS[solver])
    if probability:
        raise UsageLineError("-b 1 does not run on several MPI ranks (the sigmoids are fitted "
                             "on every fold's decision values at once); train with -b 1 "
                             "without mpiexec")
    return job


def _launch_rank():
    """This process's rank in an MPI launch (0 without one), from the environment."""
    from .distributed import mpi_launch

    launch = mpi_launch()
    return 0 if launch is None else launch.rank


def _refuse_launch(command):
    """Commands that run on one process only refuse an MPI launch of several ranks
    (each rank would do the whole work and write the same output)."""
    from .distributed import mpi_launch

    launch = mpi_launch()
    if launch is not None and launch.size != 1:
        raise UsageLineError(f"{command} runs on one process; run it without mpiexec (only "
                             "train and cv run on several MPI ranks)")


def _stderr_is_tty():
    """Whether stderr is a terminal: progress lines show only then (tests replace this)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


PROGRESS_DELAY = 2.0    # seconds a run lasts before its progress line first shows
PROGRESS_EVERY = 0.25   # seconds between redraws


class _Console:
    """stderr for one command: log lines (None when quiet), notes, and one transient
    progress line, redrawn in place with '\\r' on a terminal once the run has lasted
    PROGRESS_DELAY seconds; no progress when quiet or when stderr is not a terminal."""

    def __init__(self, quiet, silent=False):
        quiet = quiet or silent             # silent: an MPI rank other than 0, not even warnings
        self.quiet, self.silent = quiet, silent
        self.live = not quiet and _stderr_is_tty()
        self.t0 = time.monotonic()
        self.last = -1e9
        self.shown = False
        self.lock = threading.Lock()
        self.log = None if quiet else self._log

    def _log(self, line):
        with self.lock:
            self._clear()
            click.echo(line, err=True)

    def note(self, text):
        """A one-line remark about the data or the result (silenced by -q)."""
        if not self.quiet:
            self._log(f"note: {text}")

    def warn(self, text):
        """A warning (shown even with -q; not on MPI ranks other than 0)."""
        if self.silent:
            return
        with self.lock:
            self._clear()
            click.echo(f"warning: {text}", err=True)

    def progress(self, text):
        """Show `text` as the progress line (throttled; a no-op off a terminal)."""
        if not self.live:
            return
        now = time.monotonic()
        if now - self.t0 < PROGRESS_DELAY or now - self.last < PROGRESS_EVERY:
            return
        with self.lock:
            self.last = now
            click.echo("\r" + text + "\033[K", err=True, nl=False)
            self.shown = True

    def _clear(self):
        if self.shown:
            click.echo("\r\033[K", err=True, nl=False)
            self.shown = False

    def done(self):
        """Remove the progress line, if one is shown."""
        with self.lock:
            self._clear()


def _fmt_stat(v):
    """A statistic for people: counts as integers, other numbers to 4 digits."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return str(int(v))
    return f"{v:.4g}"


_fmt_number = format_label      # a label: shortest text that reads back as the same double


# ---------------------------------------------------------------------------- train

def _codes_text(info):
    """LIBLINEAR's -s codes of a solver, e.g. 'LIBLINEAR -s 1 (= --loss l2), -s 3 (= --loss l1)'."""
    parts = []
    for code, implied in sorted(info.liblinear_codes.items()):
        extra = " ".join(f"{_flag(k)} {v}" for k, v in implied.items())
        parts.append(f"-s {code}" + (f" (= {extra})" if extra else ""))
    return "LIBLINEAR " + ", ".join(parts) if parts else ""


def _solver_help():
    lines = ["\b", "Solvers (-s NAME, or LIBLINEAR's code where linsvm solves the same problem), "
             "the objective each minimizes, and the meaning/default of -e:"]
    for info in SOLVERS.values():
        lines.append(f"  {info.name:10s} {info.objective}")
        lines.append(f"  {'':10s} -e: {info.tol_meaning}; default {info.default_tol:g}  [{info.paper}]")
        if info.liblinear_codes:
            lines.append(f"  {'':10s} {_codes_text(info)}")
    lines.append(f"  LIBLINEAR's -s {', '.join(map(str, sorted(LIBLINEAR_UNSUPPORTED)))}: not solved "
                 "by linsvm; `-s CODE` says what each is and what to use.")
    lines.append("  `--help-solver NAME` describes one solver and its options.")
    return "\n".join(lines)


class _Solver(NamedTuple):
    """The value of -s: a registered solver name, the options a LIBLINEAR code
    implies (dcd's --loss), and the code itself (None when a name was given)."""

    name: str
    implied: dict
    code: int | None


class _SolverParam(click.ParamType):
    """-s NAME or LIBLINEAR's numeric code (1 = dcd --loss l2, 2 = mfn, ...)."""

    name = "solver"

    def get_metavar(self, param, ctx=None):
        return "NAME|CODE"

    def convert(self, value, param, ctx):
        if isinstance(value, _Solver):
            return value
        text = str(value).strip()
        if text in SOLVERS:
            return _Solver(text, {}, None)
        try:
            code = int(text)
        except ValueError:
            codes = ", ".join(map(str, sorted(c for info in SOLVERS.values() for c in info.liblinear_codes)))
            self.fail(f"{text!r} is not a solver: choose one of {', '.join(SOLVERS)} "
                      f"(or LIBLINEAR's code {codes})", param, ctx)
        try:
            name, implied = liblinear_code(code)
        except ParameterError as exc:       # one line, not Click's usage block
            raise UsageLineError(str(exc)) from None
        return _Solver(name, implied, code)


def _resolve_solver(solver, solver_options):
    """The solver's name, with the options its LIBLINEAR code implies added to
    solver_options (in place); a code that contradicts an option given is an error."""
    for key, value in solver.implied.items():
        given = solver_options.get(key)
        if given is not None and given != value:
            raise click.UsageError(f"-s {solver.code} is {solver.name} {_flag(key)} {value}, "
                                   f"which contradicts {_flag(key)} {given}")
        solver_options[key] = value
    return solver.name


def _option_owners():
    """Solver option name -> [(solver name, Option)] in registry order."""
    seen = {}
    for info in SOLVERS.values():
        for name, opt in info.options.items():
            seen.setdefault(name, []).append((info.name, opt))
    return seen


def _family(info):
    """A solver's family: its module, mfn_family counted with mfn."""
    return info.fit.__module__.rsplit(".", 1)[-1].split("_")[0]


def _families():
    """Family -> its solver names, in registry order."""
    out = {}
    for info in SOLVERS.values():
        out.setdefault(_family(info), []).append(info.name)
    return out


_SHARED_SECTION = "Options of several solvers"


def _option_section(owners):
    """The help section of a solver option: its family's, or the shared one."""
    families = {_family(SOLVERS[n]) for n in owners}
    if len(families) > 1:
        return _SHARED_SECTION
    return "Options of " + ", ".join(_families()[families.pop()])


def _solver_list(names):
    """Solver names for help text, a whole family of three or more as 'mfn family'."""
    out, names = [], list(names)
    for members in _families().values():
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
    section = _option_section(names)
    whole = section != _SHARED_SECTION and names == _families()[_family(SOLVERS[names[0]])]
    if len(by_default) == 1:
        where = ("" if whole else _solver_list(names) + "; ") + f"default {opt.default}"
    else:
        where = "default " + ", ".join(f"{d} ({_solver_list(ns)})" for d, ns in by_default.values())
    return f"{opt.help} [{where}]"


def _solver_option_decorators(exclude=()):
    """One Click option per solver option name across the registry (defaults None:
    only options the user gives are passed, and train() checks they apply);
    options with a fixed set of values are Click choices."""
    decorators = []
    for name, owners in sorted(_option_owners().items()):
        if name in exclude:
            continue
        opt = owners[0][1]
        help_text = _option_help(opt, owners)
        flag = name.replace("_", "-")
        if opt.type is bool:
            decorators.append(click.option(f"--{flag}/--no-{flag}", name, default=None, help=help_text))
        else:
            flags = ("-p", "--p") if name == "p" else (f"--{flag}",)
            typ = click.Choice(list(opt.choices)) if opt.choices else opt.type
            decorators.append(click.option(*flags, name, type=typ, default=None, help=help_text))
    return decorators


def _help_solver(ctx, param, value):
    """--help-solver NAME: one solver's objective, -e, codes and options; then exit."""
    if value is None or ctx.resilient_parsing:
        return
    name = _SolverParam().convert(value, param, ctx).name
    info = SOLVERS[name]
    out = [f"{info.name} ({info.kind}): {info.objective}",
           f"  -e: {info.tol_meaning}; default {info.default_tol:g}",
           f"  paper: {info.paper}"]
    if info.liblinear_codes:
        out.append(f"  {_codes_text(info)}")
    out.append("")
    rows = []
    for opt_name, opt in info.options.items():
        flag = _flag(opt_name)
        if opt.type is bool:
            flag = f"{flag}/--no-{opt_name.replace('_', '-')}"
        elif opt.choices:
            flag += " [" + "|".join(opt.choices) + "]"
        else:
            flag += " " + opt.type.__name__.upper()
        rows.append((flag, f"{opt.help} [default {opt.default}]"))
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


class _Command(click.Command):
    """A train/cv command: help with the solver options in sections by solver
    family, and LIBLINEAR's `-wLABEL WEIGHT` read as `-w LABEL:WEIGHT`."""

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
        owners = _option_owners()
        general, sections = [], {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.name in owners:
                sections.setdefault(_option_section([n for n, _ in owners[param.name]]), []).append(record)
            else:
                general.append(record)
        with formatter.section("Options"):
            formatter.write_dl(general)
        order = [_SHARED_SECTION] + ["Options of " + ", ".join(v) for v in _families().values()]
        for title in order:
            if title in sections:
                with formatter.section(title):
                    formatter.write_dl(sections[title])


def _parse_class_weights(values):
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


def _read_instance_weights(path, n):
    try:
        with open(path, "rb") as fh:
            lines = fh.read().split()
    except OSError as exc:
        raise CommandError(f"cannot read instance weights '{path}': {exc.strerror}") from None
    values = np.empty(len(lines))
    for i, tok in enumerate(lines):
        try:
            values[i] = float(tok)
        except ValueError:
            raise CommandError(f"{path}: value {i + 1} {tok.decode(errors='replace')!r} is not a number") from None
    if values.shape[0] != n:
        raise CommandError(f"{path}: {values.shape[0]} instance weights for {n} training examples")
    return values


def _data_options(single_cost):
    """Options shared by `train` and `cv`: solver, objective, weights, seed, quiet."""
    if single_cost:
        cost = click.option("-c", "--cost", "C", default=1.0, show_default=True, type=float,
                            help="C: cost of the loss (LIBLINEAR's -c, the same for every solver).")
    else:
        cost = click.option("-c", "--cost", "C", default=None, metavar="GRID",
                            help="C values: a list 0.25,0.5,1 or a range lo:hi:step (default 1).")
    return [
        click.argument("training_file", type=click.Path(dir_okay=False, allow_dash=True)),
        click.option("-s", "--solver", default="mfn", show_default=True, type=_SolverParam(),
                     help="Solver: a name or LIBLINEAR's code 1, 2, 3, 4 (see the list below)."),
        click.option("--help-solver", metavar="NAME", expose_value=False, is_eager=True,
                     callback=_help_solver, help="Describe solver NAME and its options, and exit."),
        cost,
        click.option("-e", "--tol", type=float, default=None,
                     help="Stopping tolerance (solver-specific meaning; see the list below)."),
        click.option("-B", "--bias", default=1.0, show_default=True, type=float,
                     help="Append a constant feature of this value to every example, its weight "
                          "regularized like the others (LIBLINEAR's -B); <= 0: no bias."),
        click.option("-w", "--class-weight", "class_weights", multiple=True, metavar="LABEL:WEIGHT",
                     help="Multiply C by WEIGHT for class LABEL (repeatable; LIBLINEAR's -wLABEL "
                          "WEIGHT too, e.g. -w-1 0.5), or `-w balanced`: class j gets weight "
                          "n_samples / (n_classes * n_j), scikit-learn's rule for imbalanced data."),
        click.option("-W", "--instance-weights", type=click.Path(dir_okay=False),
                     help="File with one weight >= 0 per training example, scaling its loss."),
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
    ]


def _decorate(func, options):
    for deco in reversed(options):
        func = deco(func)
    return func


def _train_command(func):
    func = _decorate(_fail_on_errors(func), _solver_option_decorators())
    options = _data_options(single_cost=True)
    options[1:1] = [click.argument("model_file", required=False, type=click.Path(dir_okay=False))]
    options += [
        click.option("-i", "--init", "init_model", type=click.Path(dir_okay=False),
                     help="Warm start from this model (beta-/alpha-seeding)."),
        click.option("--model-format", type=click.Choice(list(MODEL_FORMATS)), default="linsvm",
                     show_default=True,
                     help="linsvm: linsvm's format, weights as text up to 2^20 weights and as binary "
                          "float64 (LIBLINEAR's file size or less, loads without parsing) above; "
                          "linsvm-text / linsvm-binary: always text / binary weights; liblinear: "
                          "LIBLINEAR's format (not for ordinal models)."),
        click.option("-v", "--cross-validation", "n_folds", type=click.IntRange(2), default=None,
                     help="N-fold cross-validation at -c instead of training (as LIBLINEAR's -v); "
                          "see `linsvm cv` for grids."),
        click.option("-j", "--jobs", "n_jobs", type=click.IntRange(0), default=0, show_default=True,
                     help="Threads for the columns of a one-vs-rest run (a binary solver on "
                          "more than two classes); 0 = the free cores (CPUs less the load "
                          "average).  Each column's kernels then run on one thread (or "
                          "--n-threads).  The model does not depend on it."),
        click.option("-b", "--probability", type=click.IntRange(0, 1), default=0, show_default=True,
                     help="1: also fit Platt sigmoids for probability estimates (linsvm-predict "
                          "-b 1) on 5-fold out-of-fold decision values, with the same solver "
                          "options and seed; costs about 5 more trainings.  Stored in the model "
                          "(linsvm format version 3).  Not for ordinal solvers, -v or "
                          "--model-format liblinear."),
    ]
    return click.command("train", cls=_Command, context_settings=_CONTEXT, epilog=_solver_help(),
                         help="Train a linear SVM on TRAINING_FILE (SVM-light format; '-' is "
                              "stdin; gzip/bzip2/xz accepted) and write MODEL_FILE (default: "
                              "the training file's name + '.model'; '-' is stdout).  The model "
                              "path is checked before training.  Under `mpiexec -n P` it trains "
                              "on P ranks, each reading its share; rank 0 prints and writes the "
                              "model (README: MPI).")(_decorate(func, options))


class _Data(NamedTuple):
    """The training data a command holds: X, y, qid (None unless a ranking solver and
    several qids over all the data), sample_weight -- on MPI this rank's rows -- and
    over all ranks: n_rows, nnz, and the distinct labels in order of first appearance
    (None when not known)."""

    X: object
    y: np.ndarray
    qid: object
    sample_weight: object
    n_rows: int
    nnz: int
    labels: object


def _load_training(training_file, solver, instance_weights, console=None, job=None,
                   shards=False):
    """The training data (_Data): the parser's CSRBuffers, as train() takes it, labels,
    qids and sample weights; the rows read so far show on the console's progress line.
    On several ranks (job) or with --shards: linsvm.distributed.read_training_share
    (each rank its share; rank 0 notes when the input had to be scattered)."""
    from .data import load_svmlight_buffers

    name = "stdin" if training_file == "-" else training_file
    progress = None if console is None or not console.live else (
        lambda rows: console.progress(f"reading {name}: {rows:,} rows"))
    ordinal = SOLVERS[solver].kind == "ordinal"
    distributed = job is not None and job.comm is not None
    if not distributed and not shards:
        if ordinal:
            X, y, qid = load_svmlight_buffers(training_file, with_qid=True, progress=progress)
            qid = qid if np.unique(qid).size > 1 else None
        else:
            (X, y), qid = load_svmlight_buffers(training_file, progress=progress), None
        if console is not None:
            console.done()
        sample_weight = _read_instance_weights(instance_weights, X.n_rows) \
            if instance_weights else None
        return _Data(X, y, qid, sample_weight, X.n_rows, X.nnz, None)
    from .distributed import read_training_share

    share, how = read_training_share(training_file, job.comm if distributed else None,
                                     shards=shards, with_qid=ordinal, progress=progress)
    if console is not None:
        console.done()
        if how == "scatter":
            console.note(f"{name} was read by rank 0 and its rows sent to the {job.size} "
                         "ranks; a plain file (every rank reads its own share) or --shards "
                         "is faster")
    X, y, qid = share.X, share.y, share.qid
    sums = (job or _Job(None)).gather((X.nnz, int(qid.min()) if qid is not None and qid.size
                                       else None, int(qid.max()) if qid is not None
                                       and qid.size else None))
    nnz = sum(r[0] for r in sums)
    if qid is not None:
        ends = [v for r in sums for v in r[1:] if v is not None]
        qid = qid if ends and min(ends) != max(ends) else None
    sample_weight = None
    if instance_weights:
        weights = (job or _Job(None)).run(_read_instance_weights, instance_weights,
                                          share.n_rows_total)
        sample_weight = weights[share.row_offset:share.row_offset + X.n_rows]
    return _Data(X, y, qid, sample_weight, share.n_rows_total, nnz, share.labels)


IMBALANCE_NOTE = 0.95   # note when one class holds more than this fraction of the training rows


def _print_warnings(console, records):
    """One line `warning: ...` on stderr per (message, is_convergence) record."""
    for message, _ in records:
        console.warn(message)


def _cross_validate(console, unit, X, y, **kwargs):
    """linsvm.cv.cross_validate with its progress on the console ("N/M `unit` trained")
    and its warnings, merged over folds, printed one line each."""
    from .cv import cross_validate
    from .train import collecting_warnings

    with collecting_warnings() as records:
        res = cross_validate(X, y, progress=lambda done, total: console.progress(
            f"cross-validation: {done}/{total} {unit} trained"), **kwargs)
    console.done()
    _print_warnings(console, records)
    return res


def _note_imbalance(console, y, solver, class_weight, job=None):
    """One line when one class dominates the training data of a classifier and no
    class weights were given: accuracy then says little, and -w balanced helps.  On
    several ranks (job) the counts are those of all ranks (every rank takes part)."""
    if class_weight or SOLVERS[solver].kind == "ordinal":
        return
    labels, counts = np.unique(y, return_counts=True)
    if job is not None and job.comm is not None:
        merged = {}
        for labs, cnts in job.gather((labels, counts)):
            for label, count in zip(labs.tolist(), cnts.tolist()):
                merged[label] = merged.get(label, 0) + count
        labels = np.array(sorted(merged), dtype=np.float64)
        counts = np.array([merged[v] for v in labels.tolist()], dtype=np.int64)
    n = int(counts.sum())
    if n == 0:
        return
    top = int(np.argmax(counts))
    share = counts[top] / n
    if labels.shape[0] >= 2 and share > IMBALANCE_NOTE:
        console.note(f"class {_fmt_number(labels[top])} holds {100 * share:.4g}% of the "
                     f"{n} training examples (always predicting it scores that "
                     f"accuracy); consider -w balanced, and judge by F1 or PRBEP "
                     f"(linsvm-cv --metric f1)")


def _train(training_file, model_file, solver, C, tol, bias, class_weights, instance_weights,
           init_model, seed, model_format, quiet, n_folds, allow_many_classes, n_jobs,
           probability=0, shards=False, **solver_options):
    from .model import check_model_format, load_model
    from .train import collecting_warnings, train

    if model_file is None and n_folds is None:
        if training_file == "-":
            raise click.UsageError("MODEL_FILE is required when training from stdin")
        if shards:
            raise click.UsageError("MODEL_FILE is required with --shards")
        model_file = os.path.basename(training_file) + ".model"
    solver_options = {k: v for k, v in solver_options.items() if v is not None}
    solver = _resolve_solver(solver, solver_options)
    class_weight = _parse_class_weights(class_weights)
    if probability:
        _check_probability_request(solver, n_folds)
    job = _open_job(solver, probability)
    console = _Console(quiet, silent=not job.root)
    log = console.log
    if n_folds is None:             # what can fail at saving fails now, not after training
        check_model_format(model_format, solver=solver, probability=bool(probability))
        job.run(_check_output, model_file, "model file", training_file, instance_weights,
                shards, stdout_ok=True, root_only=True)
    init = job.run(load_model, init_model) if init_model else None
    t0 = time.perf_counter()
    data = _load_training(training_file, solver, instance_weights, console, job, shards)
    X, y, qid, sample_weight = data.X, data.y, data.qid, data.sample_weight
    if n_folds is None:
        check_model_format(model_format, classes=np.unique(y if data.labels is None
                                                           else data.labels))
    if log:
        ranks = f" on {job.size} MPI ranks" if job.comm is not None else ""
        log(f"read {data.n_rows} examples, {X.n_features} features, {data.nnz} non-zeros "
            f"in {time.perf_counter() - t0:.3f}s{ranks}")
    _note_imbalance(console, y, solver, class_weight, job)
    if n_folds is not None:
        res = _cross_validate(console, "folds", X, y, solver=solver, Cs=[C], n_folds=n_folds,
                              seed=seed, qid=qid, bias=bias, tol=tol, class_weight=class_weight,
                              sample_weight=sample_weight, allow_many_classes=allow_many_classes,
                              comm=job.comm, **solver_options)
        pt = res.points[0]
        name = {"accuracy": "Accuracy", "mae": "Mean absolute error"}[res.metric]
        value = f"{100 * pt.mean:g}%" if res.metric == "accuracy" else f"{pt.mean:g}"
        if job.root:
            click.echo(f"Cross Validation {name} = {value}")
        return
    with collecting_warnings() as records:     # printed here, not as Python warnings
        model = train(X, y, solver=solver, C=C, bias=bias, tol=tol, class_weight=class_weight,
                      sample_weight=sample_weight, init=init, seed=seed, log=log, qid=qid,
                      allow_many_classes=allow_many_classes, n_jobs=n_jobs, comm=job.comm,
                      **solver_options)
    _print_warnings(console, records)
    if probability:
        model = _calibrate(console, model, X, y, sample_weight, solver=solver, C=C, bias=bias,
                           tol=tol, class_weight=class_weight, seed=seed,
                           allow_many_classes=allow_many_classes, n_jobs=n_jobs, **solver_options)
    job.run(model.save, model_file, format=model_format, root_only=True)
    if log:
        st = model.stats
        extra = "".join(f", {k} = {_fmt_stat(st[k])}" for k in ("n_active", "cg_iter", "kkt_violation")
                        if k in st)
        log(f"{solver}: objective = {st['objective']:.10g}, iterations = {st['n_iter']}{extra}, "
            f"time = {st['seconds']:.3f}s -> {model_file}")
        if "ranks" in st:
            log(_comm_summary(st))


def _check_output(path, what, training_file, instance_weights, shards, stdout_ok=False):
    """check_output_path for a command's output, the shard files among its inputs."""
    from .distributed import shard_paths

    data = shard_paths(training_file) if shards else [training_file]
    check_output_path(path, what=what, inputs=(*data, instance_weights), stdout_ok=stdout_ok)


def _comm_summary(st):
    """The summary line of a distributed training: ranks and communication (rank 0's
    time inside collectives, waiting for slower ranks included)."""
    return (f"{st['ranks']} MPI ranks: {st['comm_seconds']:.3f}s communicating in "
            f"{st['comm_calls']} collectives, {st['comm_bytes'] / 1e6:.4g} MB sent per rank")


def _check_probability_request(solver, n_folds):
    """-b 1 is refused, before any reading or training, where it has no meaning."""
    if SOLVERS[solver].kind == "ordinal":
        raise UsageLineError(f"-b 1: {solver} is an ordinal solver; its models have no class "
                             "probabilities")
    if n_folds is not None:
        raise UsageLineError("-b 1 with -v: cross-validation writes no model to store "
                             "probability sigmoids in")


def _calibrate(console, model, X, y, sample_weight, **options):
    """linsvm.probability.calibrate (5 folds), its progress and warnings on the console."""
    from .probability import calibrate
    from .train import collecting_warnings

    console.progress("probability: fitting sigmoids on 5-fold out-of-fold decision values")
    t0 = time.perf_counter()
    with collecting_warnings() as records:
        model = calibrate(model, X, y, n_folds=5, sample_weight=sample_weight, **options)
    console.done()
    _print_warnings(console, [("probability folds: " + m, c) for m, c in records])
    if console.log:
        console.log(f"probability sigmoids fitted in {time.perf_counter() - t0:.3f}s")
    return model


train_cmd = _train_command(_train)


# ---------------------------------------------------------------------------- predict

@click.command("predict", context_settings=_CONTEXT,
               help="Predict TEST_FILE (SVM-light; '-' is stdin) with MODEL_FILE (linsvm or "
                    "LIBLINEAR format) and write one label per line (or the decision values) to "
                    "OUTPUT_FILE ('-' is stdout).  Streams: memory does not grow with the test "
                    "file.  Features beyond the model's width are ignored.  Prints "
                    "'Accuracy = x% (a/b)' to stderr, then for binary models precision, recall, "
                    "F1, PRBEP and ROC area of the positive class (1 when the labels include 1 or "
                    "+1, else the model's first class) and the decision threshold with the best "
                    "F1, and for ordinal/ranking models the mean absolute "
                    "error, exact-rank and pairwise accuracy and Kendall tau (per qid when the "
                    "data has qids).  Measures that are undefined print as n/a.")
@click.argument("test_file", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("model_file", type=click.Path(dir_okay=False))
@click.argument("output_file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--decision-values", is_flag=True,
              help="Write decision values (one per class column, space separated) instead of labels.")
@click.option("--chunk-rows", default=None, type=click.IntRange(1),
              help="Rows read and predicted at a time [default: 65536, fewer for models with "
                   "many classes, so that a chunk's scores stay within 2^22 numbers (32 MB)].")
@click.option("-b", "--probability", type=click.IntRange(0, 1), default=0, show_default=True,
              help="1: write probability estimates as LIBSVM's svm-predict -b 1 does: a first "
                   "line 'labels L1 L2 ...', then per example the label of the largest "
                   "probability and one probability per class in that order.  The model must "
                   "have been trained with -b 1; not with --decision-values.")
@click.option("-q", "--quiet", is_flag=True, help="Do not print the accuracy.")
@_fail_on_errors
def predict_cmd(test_file, model_file, output_file, decision_values, chunk_rows, quiet, probability=0):
    from .model import load_model
    from .predict import note_lines, predict_file, report_lines

    _refuse_launch("predict")
    if probability and decision_values:
        raise UsageLineError("-b 1 and --decision-values cannot be used together "
                             "(one writes probabilities, the other decision values)")
    check_output_path(output_file, what="output file", inputs=(test_file, model_file), stdout_ok=True)
    model = load_model(model_file)
    if probability and model.probability_ is None:
        raise CommandError(f"-b 1: {model_file} has no probability sigmoids (train it with "
                           "linsvm-train -b 1)")
    console = _Console(quiet)
    result = predict_file(test_file, model, output_file, decision_values=decision_values,
                          chunk_rows=chunk_rows, measures=not quiet, probability=bool(probability),
                          progress=lambda rows: console.progress(f"predicting: {rows:,} rows"))
    console.done()
    if quiet:
        return
    for text in note_lines(result):
        console.note(text)
    for line in report_lines(result):
        click.echo(line, err=True)


# ---------------------------------------------------------------------------- renumber

@click.command("renumber", context_settings=_CONTEXT,
               help="Renumber the features of INPUT_FILE (SVM-light) to 1..d, d the number of "
                    "distinct feature indices it uses, and write OUTPUT_FILE (labels and qids "
                    "kept, comments dropped) and MAP_FILE (line k: the original index of feature "
                    "k).  Every solver keeps dense vectors as long as the largest feature index, "
                    "so a file with few features but large indices (hashed or sparse ids) trains "
                    "in a fraction of the memory and time once renumbered.  With --apply, read "
                    "MAP_FILE instead and renumber test data the same way (features the map does "
                    "not hold are dropped: the model has no weight for them).")
@click.argument("input_file", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("output_file", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("map_file", type=click.Path(dir_okay=False))
@click.option("--apply", "apply_map", is_flag=True,
              help="Read MAP_FILE (written by an earlier renumber) and apply it.")
@_fail_on_errors
def renumber_cmd(input_file, output_file, map_file, apply_map):
    from .data import (dump_svmlight, load_svmlight, read_feature_map, renumber_features,
                       write_feature_map)

    _refuse_launch("renumber")
    feature_map = read_feature_map(map_file) if apply_map else None
    X, y, qid = load_svmlight(input_file, with_qid=True)
    X, feature_map = renumber_features(X, feature_map)
    dump_svmlight(X, y, output_file, qid=qid if np.any(qid) else None)
    if not apply_map:
        write_feature_map(map_file, feature_map)


# ---------------------------------------------------------------------------- synth

@click.command("synth", context_settings=_CONTEXT,
               help="Write a realistic sparse text-like classification data set (Zipf vocabulary, "
                    "class topics, tf-idf rows of unit length) in SVM-light format: TRAIN_FILE and, "
                    "if given, TEST_FILE holding --test-fraction of the examples.")
@click.argument("train_file", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("test_file", required=False, type=click.Path(dir_okay=False))
@click.option("--n-samples", default=20000, show_default=True, type=click.IntRange(2),
              help="Number of documents (rows), training and test together.")
@click.option("--n-features", default=20000, show_default=True, type=click.IntRange(1),
              help="Vocabulary size: feature indices run from 1 to this.")
@click.option("--n-classes", default=2, show_default=True, type=click.IntRange(2),
              help="Number of classes (labels +1/-1 for two, 1..N for more).")
@click.option("--noise", default=0.05, show_default=True, type=click.FloatRange(0, 0.5),
              help="Fraction of labels flipped.")
@click.option("--test-fraction", default=0.25, show_default=True, type=click.FloatRange(0, 1, max_open=True),
              help="Fraction of the documents written to TEST_FILE (the last ones); "
                   "ignored without TEST_FILE.")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seed of the generator: the same seed and options give the same files.")
@_fail_on_errors
def synth_cmd(train_file, test_file, n_samples, n_features, n_classes, noise, test_fraction, seed):
    from .data import dump_svmlight
    from .synth import make_text_classification

    _refuse_launch("synth")
    X, y = make_text_classification(n_samples=n_samples, n_features=n_features,
                                    n_classes=n_classes, noise=noise, seed=seed)
    n_test = int(round(test_fraction * n_samples)) if test_file else 0
    if n_test:
        dump_svmlight(X[n_samples - n_test:], y[n_samples - n_test:], test_file)
    dump_svmlight(X[:n_samples - n_test], y[:n_samples - n_test],
                  sys.stdout.buffer if train_file == "-" else train_file)


# ---------------------------------------------------------------------------- cv

def _edge_warning(res, Cs):
    """A warning when the best C is the smallest or largest of a grid of several Cs
    (and the metric is not flat along it): the best may lie beyond the grid."""
    best = res.best
    line = [pt.mean for pt in res.points if pt.p == best.p and not np.isnan(pt.mean)]
    if len(set(Cs)) < 2 or np.isnan(best.mean) or max(line) == min(line):
        return None
    if best.C == min(Cs):
        end, way = "smallest", "smaller"
    elif best.C == max(Cs):
        end, way = "largest", "larger"
    else:
        return None
    return (f"the best C = {best.C:g} is the {end} C of the grid: the best may lie beyond it; "
            f"try {way} C values")


def _cv(training_file, solver, C, log2c, p_grid, tol, bias, class_weights, instance_weights, seed,
        quiet, n_folds, n_jobs, metric, fmt, output_model, warm_start, allow_many_classes,
        shards=False, **solver_options):
    import json

    from .cv import PERCENT_METRICS, parse_grid
    from .train import collecting_warnings, train

    if C is not None and log2c is not None:
        raise click.UsageError("give either -c or --log2c, not both")
    Cs = parse_grid(C, "C") if C is not None else [1.0]
    if log2c is not None:
        Cs = [2.0 ** e for e in parse_grid(log2c, "log2c")]
    if any(c <= 0 for c in Cs):
        raise click.BadParameter("C values must be > 0", param_hint="-c")
    ps = parse_grid(p_grid, "p") if p_grid is not None else None
    solver_options = {k: v for k, v in solver_options.items() if v is not None}
    solver = _resolve_solver(solver, solver_options)
    class_weight = _parse_class_weights(class_weights)
    job = _open_job(solver)
    console = _Console(quiet, silent=not job.root)
    log = console.log
    echo = click.echo if job.root else (lambda *a, **k: None)    # results: rank 0's
    if output_model is not None:    # checked now, not after the whole grid
        job.run(_check_output, output_model, "output model", training_file, instance_weights,
                shards, root_only=True)
    data = _load_training(training_file, solver, instance_weights, console, job, shards)
    X, y, qid, sample_weight = data.X, data.y, data.qid, data.sample_weight
    _note_imbalance(console, y, solver, class_weight, job)
    res = _cross_validate(console, "models", X, y, solver=solver, Cs=Cs, ps=ps, n_folds=n_folds,
                          seed=seed, n_jobs=n_jobs, warm_start=warm_start, metric=metric, qid=qid,
                          log=log, bias=bias, tol=tol, class_weight=class_weight,
                          sample_weight=sample_weight, allow_many_classes=allow_many_classes,
                          comm=job.comm, **solver_options)
    best = res.best
    rows = [{"C": pt.C, "p": pt.p, "mean": pt.mean, "std": pt.std, "seconds": pt.seconds,
             "iterations": pt.n_iter} for pt in res.points]

    def machine(v):                     # undefined (nan) is null in json, empty in tsv
        return None if np.isnan(v) else v
    if fmt == "json":
        for r in rows:
            r["mean"], r["std"] = machine(r["mean"]), machine(r["std"])
        echo(json.dumps({"metric": res.metric, "folds": n_folds, "points": rows,
                               "best": {"C": best.C, "p": best.p, "mean": machine(best.mean)}},
                              indent=1))
    elif fmt == "tsv":
        echo("\t".join(["C", "p", res.metric, "std", "seconds", "iterations"]))
        for r in rows:
            echo("\t".join([repr(r["C"]), "" if r["p"] is None else repr(r["p"]),
                                  *("" if np.isnan(r[k]) else repr(r[k]) for k in ("mean", "std")),
                                  f"{r['seconds']:.6f}",
                                  str(r["iterations"])]))
    else:
        pct = res.metric in PERCENT_METRICS

        def show(v, width, digits):
            if np.isnan(v):
                return f"{'n/a':>{width}s}"
            return f"{100 * v:{width - 1}.{digits}g}%" if pct else f"{v:{width}.{digits}g}"
        head = f"{'C':>12s} " + (f"{'p':>6s} " if ps else "") + \
            f"{res.metric:>10s} {'std':>9s} {'train s':>9s} {'iter':>7s}"
        echo(head)
        for r in rows:
            echo(f"{r['C']:12.6g} " + (f"{r['p']:6.3g} " if ps else "") +
                       f"{show(r['mean'], 10, 6)} {show(r['std'], 9, 3)} {r['seconds']:9.3f} "
                       f"{r['iterations']:7d}")
        echo(f"best: C = {best.C:g}" + (f", p = {best.p:g}" if ps else "") +
                   f", {res.metric} = {show(best.mean, 0, 6).strip()}")
    edge = _edge_warning(res, Cs)
    if edge:
        console.warn(edge)
    if output_model:
        opts = dict(solver_options)
        if best.p is not None:
            opts["p"] = best.p
        with collecting_warnings() as records:
            model = train(X, y, solver=solver, C=best.C, bias=bias, tol=tol,
                          class_weight=class_weight, sample_weight=sample_weight, seed=seed,
                          qid=qid, allow_many_classes=allow_many_classes, comm=job.comm, **opts)
        _print_warnings(console, records)
        job.run(model.save, output_model, root_only=True)
        if log:
            log(f"trained at the best point on all data -> {output_model}")


def _cv_command(func):
    func = _decorate(_fail_on_errors(func), _solver_option_decorators(exclude=("p",)))
    options = _data_options(single_cost=False)
    options[3:3] = [
        click.option("--log2c", default=None, metavar="LO:HI:STEP",
                     help="C = 2^e for e in the range (e.g. -5:5:0.5)."),
        click.option("-p", "--p", "p_grid", default=None, metavar="GRID",
                     help="Grid of loss exponents p for solvers with -p (e.g. 1:2:0.1)."),
    ]
    options += [
        click.option("-v", "--folds", "n_folds", type=click.IntRange(2), default=5, show_default=True,
                     help="Number of folds (stratified; whole queries with qid data)."),
        click.option("-j", "--jobs", "n_jobs", type=click.IntRange(1), default=1, show_default=True,
                     help="Folds run in parallel threads; results do not depend on it."),
        click.option("--metric", type=click.Choice(["accuracy", "prbep", "roc", "f1", "mae", "pairwise"]),
                     default=None,
                     help="Default: accuracy, or mae for ordinal solvers.  prbep, roc and f1 "
                          "(binary) are about the positive class: 1 when the labels include it, "
                          "else the first class."),
        click.option("--format", "fmt", type=click.Choice(["table", "tsv", "json"]), default="table",
                     show_default=True,
                     help="table: for people, accuracy, prbep, f1 and pairwise as percentages; "
                          "tsv and json: fractions, full precision."),
        click.option("--output-model", type=click.Path(dir_okay=False), default=None,
                     help="Train at the best point on all data and save the model here."),
        click.option("--warm-start/--no-warm-start", default=True, show_default=True,
                     help="Seed each C from the previous one along the ascending grid."),
    ]
    return click.command("cv", cls=_Command, context_settings=_CONTEXT, epilog=_solver_help(),
                         help="k-fold cross-validation of a solver over a grid of C (and p) on "
                              "TRAINING_FILE: a table of the metric's mean and std per grid "
                              "point, training time and iterations, and the best point.  Under "
                              "`mpiexec -n P` every fold trains on P ranks; the folds and results "
                              "are the serial ones (README: MPI).")(
        _decorate(func, options))


cv_cmd = _cv_command(_cv)


# ---------------------------------------------------------------------------- entry points

@click.group(context_settings=_CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="linsvm")
def cli():
    """linsvm: linear SVMs on large sparse data (finite Newton, sequential dual, ALM,
    cutting-plane solvers).  `linsvm COMMAND --help` for each command."""


cli.add_command(train_cmd)
cli.add_command(predict_cmd)
cli.add_command(synth_cmd)
cli.add_command(renumber_cmd)
cli.add_command(cv_cmd)


def _run(command, prog_name):
    """Run a Click command as a program.  On an MPI rank other than 0 (from the
    launcher's environment) its errors exit with their status but are not shown:
    rank 0 shows the same line (module notes)."""
    if _launch_rank() == 0:
        command.main(prog_name=prog_name)
        return
    try:
        command.main(prog_name=prog_name, standalone_mode=False)
    except click.ClickException as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        sys.exit(1)
    sys.exit(0)


def main():
    """Entry point of `linsvm` and `python -m linsvm`."""
    _run(cli, "linsvm")


def train_main():
    """Entry point of `linsvm-train`."""
    _run(train_cmd, "linsvm-train")


def predict_main():
    """Entry point of `linsvm-predict`."""
    _run(predict_cmd, "linsvm-predict")


def cv_main():
    """Entry point of `linsvm-cv`."""
    _run(cv_cmd, "linsvm-cv")
