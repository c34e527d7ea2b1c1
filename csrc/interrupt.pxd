# Stopping a compiled solve: Ctrl-C, and stop requests from another thread
# (csrc/interrupt.pxd; shared by every module with a long loop).
#
# A solve runs without the GIL, so Python's SIGINT handler, which only notes the
# signal for the interpreter to act on between bytecodes, cannot stop it; nor can
# an exception raised in a `with gil:` callback leave a noexcept kernel (it would be
# printed as "Exception ignored" and the solve would go on).  So each solve keeps a
# Stop record on its C stack and its long loops poll it:
#
#     cdef Stop S
#     stop_init(&S)
#     with nogil:
#         ... while ...:                          # an outer iteration, a CG iteration,
#                 if stop_poll(&S, work):          # a pass over the examples
#                     break                        # leave every loop, skip what follows
#     stop_raise(&S)                               # raises if the solve was stopped
#
# stop_poll adds `work` (about the non-zeros the loop touched since the last poll) to
# a counter and returns S.stopped; only once the counter passes STOP_WORK (about four
# million non-zeros of work) does it look further, so its cost per call is an add
# and a compare, and the GIL is taken once per STOP_WORK of work at most:
#   - if request_stop() (below) was called since the solve began, the solve stops;
#   - with the GIL, PyErr_CheckSignals() runs the Python signal handlers (on the
#     main thread only: elsewhere it returns at once); the exception a handler raises
#     (KeyboardInterrupt for Ctrl-C) is kept in S and the solve stops.
# A callback's exception is kept the same way (stop_keep).  After the nogil block,
# stop_raise re-raises the kept exception (KeyboardInterrupt if the stop came from
# request_stop), once the work arrays -- numpy arrays owned by the Python entry, or
# freed in its `finally` -- can be released as the exception unwinds.
#
# Solves in other threads: signals reach the main thread only, so a KeyboardInterrupt
# there cannot reach a solve running in a worker by itself.  The code that starts
# workers catches it and calls linsvm.runtime.interrupt.stop_running_solves(), which calls
# request_stop() of every compiled module: that bumps the module's stop generation,
# and each solve that began before the bump stops at its next check and raises
# KeyboardInterrupt in its own thread.  Solves begun after the bump run normally,
# so nothing needs resetting.

from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from libc.stdint cimport int64_t

from linsvm._data cimport stop_generation

cdef extern from *:
    """
    /* The slow path of stop_check, out of line (noinline) so that the loops that poll stay
       small enough for the compiler to inline them as before: with the GIL, run Python's
       signal handlers; returns the exception a handler raised (a new reference, its
       traceback attached) or NULL. */
    #if defined(__GNUC__) || defined(__clang__)
    #define LINSVM_NOINLINE __attribute__((noinline))
    #elif defined(_MSC_VER)
    #define LINSVM_NOINLINE __declspec(noinline)
    #else
    #define LINSVM_NOINLINE
    #endif
    static LINSVM_NOINLINE PyObject* linsvm_check_signals(void) {
        PyObject *type, *value, *tb;
        PyObject *exc = NULL;
        PyGILState_STATE gil = PyGILState_Ensure();
        if (PyErr_CheckSignals() != 0) {
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            if (tb != NULL && value != NULL)
                PyException_SetTraceback(value, tb);
            Py_XDECREF(type);
            Py_XDECREF(tb);
            exc = value;
        }
        PyGILState_Release(gil);
        return exc;
    }
    """
    PyObject* linsvm_check_signals() noexcept nogil

# the work between two checks, in non-zeros touched (2**22)
cdef enum:
    STOP_WORK = 1 << 22

cdef struct Stop:
    long generation        # stop_generation() when the solve began
    int64_t work           # work since the last check
    int64_t per_row        # the work of one row: 1 + the mean non-zeros per row
    int stopped            # 1: leave the loops
    PyObject* exc          # the exception to raise (a new reference), or NULL


cdef inline void stop_init(Stop* s, int64_t nnz=0, int64_t n_rows=0) noexcept nogil:
    """A fresh record for a solve beginning now, on rows of nnz / n_rows non-zeros on
    average (sets s.per_row, so that a pass over n rows polls n * s.per_row)."""
    s.generation = stop_generation()
    s.work = 0
    s.per_row = 1 + (nnz // n_rows if n_rows > 0 else 0)
    s.stopped = 0
    s.exc = NULL


cdef inline void stop_keep(Stop* s, object e) noexcept:
    """Stop the solve and keep e (the first exception wins); call with the GIL."""
    if s.exc == NULL:
        Py_INCREF(e)
        s.exc = <PyObject*>e
    s.stopped = 1


cdef inline int stop_check(Stop* s) noexcept nogil:
    """Check now (request_stop, then the signal handlers); returns s.stopped."""
    s.work = 0
    if s.stopped:
        return 1
    if stop_generation() != s.generation:
        s.stopped = 1
        return 1
    s.exc = linsvm_check_signals()          # s.exc was NULL: nothing had stopped the solve
    if s.exc != NULL:
        s.stopped = 1
    return s.stopped


cdef inline int stop_poll(Stop* s, int64_t work) noexcept nogil:
    """Count `work` and check once STOP_WORK has accumulated; returns s.stopped."""
    s.work += work
    if s.work >= STOP_WORK:
        return stop_check(s)
    return s.stopped


cdef inline int stop_raise(Stop* s) except -1:
    """Raise the exception that stopped the solve (KeyboardInterrupt if none was kept)."""
    cdef object e
    if not s.stopped:
        return 0
    if s.exc == NULL:
        raise KeyboardInterrupt
    e = <object>s.exc
    Py_XDECREF(s.exc)
    s.exc = NULL
    raise e

