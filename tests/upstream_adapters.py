"""Running scikit-learn's own test functions against linsvm's estimators (the helpers of
tests/test_sklearn_upstream*.py): copies of upstream test functions whose defaults and
parametrize marks name thin adapters instead of scikit-learn's classes; the upstream
functions themselves stay untouched and no assertion changes."""
import types

import pytest


def swap(value, adapters):
    """value with scikit-learn's classes replaced by their adapters (a dict class ->
    adapter), in tuples, lists, dicts and pytest.param sets."""
    if isinstance(value, type) and value in adapters:
        return adapters[value]
    if isinstance(value, (tuple, list)):
        return type(value)(swap(v, adapters) for v in value)
    if isinstance(value, dict):
        return {k: swap(v, adapters) for k, v in value.items()}
    if type(value).__name__ == "ParameterSet":
        return value._replace(values=swap(value.values, adapters))
    return value


def adapted_mark(mark, adapters, keep=None):
    """A parametrize mark with the adapters in its values (and only the values for which
    keep(names, value) holds, when given); other marks as they are."""
    if mark.name != "parametrize":
        return mark
    names, values, *rest = mark.args
    values = [v for v in values if keep is None or keep(names, v)]
    return pytest.mark.parametrize(names, swap(list(values), adapters), *rest,
                                   **mark.kwargs).mark


def adapted(fn, adapters, keep=None):
    """A copy of the upstream test function fn whose defaults and parametrize marks name
    the adapters (see adapted_mark for keep)."""
    new = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__,
                             swap(fn.__defaults__, adapters), fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__dict__.update(fn.__dict__)
    if hasattr(fn, "pytestmark"):
        new.pytestmark = [adapted_mark(m, adapters, keep) for m in fn.pytestmark]
    return new


def expect_failures(request, failures):
    """Mark the running upstream test as a strict xfail when `failures` (node name without
    its test_ prefix, or without its parametrization -> reason) lists it."""
    name = request.node.name[len("test_"):]
    reason = failures.get(name) or failures.get(name.split("[")[0])
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
