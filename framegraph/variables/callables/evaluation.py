"""``eval(expression)`` and ``compile(...)`` of source known at trace time.

``compile`` is a pure function of its arguments (the code object it returns is a
constant), unless it warns: a SyntaxWarning is output, left to CPython.

``eval(src)`` without namespaces runs an expression in the calling frame's
globals, with its locals (fast locals and the contents of its cells, as
``PyEval_GetLocals`` gathers them) looked up first. The expression is compiled
here, so a SyntaxError is CPython's; then it is traced as the body of
``lambda <the locals it names>: (src)`` made in the frame's globals, which
resolves every name as ``LOAD_NAME`` would: a bound local, else a global, else
a builtin. An expression that could tell the two apart is left to CPython:
one with a nested scope (a lambda or comprehension there cannot see the locals)
or one that stores (``:=`` writes the locals mapping, not the frame).
"""
import dis
import types
import warnings

from ...errors import unsupported
from ..core.constant import ConstantVariable
from ..core.exceptions import python_operation
from .functions import CellVariable, UserFunctionVariable

_STORES = frozenset({"STORE_NAME", "DELETE_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"})


def _constant(var):
    return var.as_python_constant() if var is not None and var.is_python_constant() else None


def compile_model(tx, *args, **kwargs):
    """``compile(source, filename, mode, ...)`` on constants: the code object, or CPython's
    SyntaxError raised in the trace."""
    if not all(a.is_python_constant() for a in list(args) + list(kwargs.values())):
        unsupported("side_effect_builtin", "compile() of values not known at trace time")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with python_operation("compile()"):
            code = compile(*[a.as_python_constant() for a in args],
                           **{k: v.as_python_constant() for k, v in kwargs.items()})
    if caught:  # printed (or raised) by CPython's warning machinery: not the trace's to do
        unsupported("side_effect_builtin", f"compile() warns: {caught[0].message}")
    return ConstantVariable(code)


def _frame_locals(tx, names):
    """{name: tracker} of the calling frame's bound locals among ``names``."""
    found = {}
    for name in names:
        if name not in tx.symbolic_locals:
            continue
        value = tx.load_local(name)
        if isinstance(value, CellVariable):
            if value.contents is None:  # an empty cell is not in the locals mapping
                continue
            value = tx.cell(name).contents
        found[name] = value
    return found


def eval_model(tx, source, globals_=None, locals_=None):
    """``eval(src)`` of a constant expression, in the calling frame's namespaces."""
    if globals_ is not None or locals_ is not None:
        unsupported("side_effect_builtin", "eval() with namespaces of its own")
    src = _constant(source)
    if not isinstance(src, str):
        unsupported("side_effect_builtin", "eval() of a value not known at trace time")
    with python_operation("eval()"):  # CPython's SyntaxError
        code = compile(src.lstrip(" \t"), "<string>", "eval")
    if any(isinstance(c, types.CodeType) for c in code.co_consts) or any(
            inst.opname in _STORES for inst in dis.get_instructions(code)):
        unsupported("side_effect_builtin", "eval() of an expression with a scope or a store of its own")
    bound = _frame_locals(tx, code.co_names)
    try:
        wrapped = compile(f"lambda {', '.join(bound)}: (\n{src.lstrip(' ')}\n)", "<string>", "eval")
    except SyntaxError:  # a form the wrapping does not hold (a trailing line continuation)
        unsupported("side_effect_builtin", "eval() of an expression that does not fit in a lambda")
    fn = eval(wrapped, tx.f_globals)  # noqa: S307 - makes the function only: the lambda is traced
    return UserFunctionVariable(fn).call(tx, list(bound.values()), {})
