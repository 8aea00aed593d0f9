"""Dynamic shapes: which tensor dimensions are symbolic, and the guards that keep that sound.

The policy, per ``compile(dynamic=...)``:

* ``None`` (default), "automatic dynamic": the first trace of a code object
  specialises every size. Each trace records, per tensor source, the sizes
  it saw; when a later trace (a recompile) sees a different size in some
  dimension, that dimension is traced symbolically from then on, so one
  graph serves every size. A function called with 20 batch sizes compiles
  twice.
* ``True``: every dimension of every plain input tensor is symbolic from the
  first trace.
* ``False``: never automatically; ``mark_dynamic`` still applies.
* ``mark_dynamic(t, dim)`` marks a dimension of one tensor up front.

A symbolic dimension is a SymInt of a ``ShapeEnv`` (torch.fx.experimental.
symbolic_shapes) shared with the trace's FakeTensorMode. Sizes 0 and 1 are
specialised, as in torch: a symbol is only made for a size >= 2, and its
range (>= 2) is guarded. Everything the trace decided about symbolic sizes
(``x.size(0) == y.size(0)``, ``s0 // 2 <= s0``) is in ``shape_env.guards``;
``ShapeContext.guard()`` turns those, with each symbol's range, into one
SHAPE_ENV guard whose code reads sizes back from the frame's inputs.

Only plain, contiguous tensors get symbolic dimensions (their strides then
follow from the sizes, and ``is_contiguous()`` is checked); parameters,
subclasses and strided views stay static, like Dynamo's
``force_parameter_static_shapes``.

Python ints follow the same policy: an int argument (or global, attribute)
seen with two values becomes a graph input with a symbolic value on the
recompile (``dynamic=True``: from the start), guarded by its type only. Where
Python needs its value (``range(n)``) it is specialised by a shape guard.
"""
import dataclasses
import math
import weakref
from typing import Dict, Optional, Set, Tuple

import sympy
import torch
import torch._guards
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv
from torch.utils._sympy.numbers import int_oo
from torch.utils._sympy.printers import PythonPrinter

from ..config import config, on_reset
from ..guards.sources import LocalSource, Source
from .fakes import new_fake

_MARK = "_framegraph_dynamic_dims"
_STATIC = "_framegraph_static_dims"
_UNBACKED = "_framegraph_unbacked_dims"
# the marks torch._dynamo's mark_dynamic / maybe_mark_dynamic / mark_unbacked put on a
# tensor (read by name: code written for torch.compile marks its inputs this way)
_TORCH_DYNAMIC = ("_dynamo_dynamic_indices", "_dynamo_weak_dynamic_indices", "_dynamo_unbacked_indices")
# torch's own attribute for a tensor whose address stays the same across calls
# (Inductor's CUDA graphs read it: such an input is not copied into the graph's pool)
_STATIC_ADDRESS = "_dynamo_static_input_type"
_MARKS = frozenset((_MARK, _STATIC, _STATIC_ADDRESS, "_dynamo_static_indices") + _TORCH_DYNAMIC)

# code object -> {tensor source: sizes seen, None where they changed}. Runtime
# state of automatic dynamic shapes; it dies with the code and reset() clears it.
_frame_sizes: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _mark(name, attr, t, dim) -> None:
    """Add the dims ``dim`` (an int, a list of ints, None: all) of ``t`` to its mark ``attr``."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"framegraph.{name}() expects a tensor, got {type(t).__name__}")
    dims = range(t.dim()) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    for d in dims:
        if not isinstance(d, int) or not -t.dim() <= d < t.dim():
            raise IndexError(f"framegraph.{name}(): dim {d!r} out of range for a {t.dim()}-d tensor")
    setattr(t, attr, set(getattr(t, attr, ())) | {d % t.dim() for d in dims})


def mark_dynamic(t: torch.Tensor, dim) -> None:
    """Trace dimension ``dim`` (an int or a list of ints) of ``t`` symbolically from the first call.

    A size the trace then needs as a number (a branch on it, ``range(n)``) is
    guarded, so the graph is reused for the sizes that take the same branch.
    """
    _mark("mark_dynamic", _MARK, t, dim)


def maybe_mark_dynamic(t: torch.Tensor, dim) -> None:
    """Like ``mark_dynamic``: a hint that ``dim`` of ``t`` varies. framegraph never
    raises where a marked size is specialised, so the two mean the same here."""
    _mark("maybe_mark_dynamic", _MARK, t, dim)


def mark_static(t: torch.Tensor, dim=None) -> None:
    """Never trace dimension ``dim`` of ``t`` (all of them when None) symbolically,
    even with ``dynamic=True`` or after its size changed: each size compiles its own graph."""
    _mark("mark_static", _STATIC, t, dim)


def mark_unbacked(t: torch.Tensor, dim) -> None:
    """Trace dimension ``dim`` of ``t`` symbolically for every size, 0 and 1 included
    (a dynamic size is specialised at 0 and 1 otherwise).

    torch._dynamo makes it an unbacked symbol and raises where the program
    branches on it; framegraph's symbol keeps its value, and a branch on it is
    guarded instead. A size of 1 can still get a graph of its own: the check
    that the input is contiguous tells a dimension of size 1 apart.
    """
    _mark("mark_unbacked", _UNBACKED, t, dim)
    _mark("mark_unbacked", _MARK, t, dim)


def mark_static_address(t: torch.Tensor, guard: bool = True) -> None:
    """Say that ``t``'s storage stays the same across calls (an optimizer's state, a
    KV cache): its sizes are static, and CUDA graphs (``mode="reduce-overhead"``)
    read it in place instead of copying it. torch's attribute, set the way torch sets it."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"framegraph.mark_static_address() expects a tensor, got {type(t).__name__}")
    if not isinstance(guard, bool):
        raise TypeError("framegraph.mark_static_address(): guard must be a bool")
    setattr(t, _STATIC_ADDRESS, "guarded" if guard else "unguarded")


def observe_unmodified_call(code, f_locals, names) -> None:
    """Record the sizes of a call that runs unmodified (set_stance("eager_then_compile")),
    as a trace would: the first compile then makes dynamic what changed since."""
    sizes = _frame_sizes.setdefault(code, {})
    for name in names:
        value = f_locals.get(name)
        if isinstance(value, torch.Tensor):
            sizes.setdefault(LocalSource(name), list(value.size()))
        elif type(value) is int:
            sizes.setdefault(LocalSource(name), [value])


@on_reset
def forget(code=None) -> None:
    """Drop the recorded sizes of ``code`` (all codes when None): part of reset()."""
    if code is None:
        _frame_sizes.clear()
    else:
        _frame_sizes.pop(code, None)


@dataclasses.dataclass(frozen=True)
class _DimSource(torch._guards.Source):
    """The name ShapeEnv logs for a symbol (``L['x'].size()[0]``)."""

    label: str

    @property
    def _name_template(self):
        return self.label

    @property
    def guard_source(self):
        return torch._guards.GuardSource.LOCAL

    def is_ephemeral(self):
        return False


class ShapeContext:
    """The ShapeEnv, FakeTensorMode and symbol table of one trace."""

    def __init__(self, options):
        self.dynamic = getattr(options, "dynamic", None)
        # unbacked sizes only where config asks for them: else data-dependent ops stay
        # graph breaks, as without a ShapeEnv (scalars: symint.unbacked_item)
        self.shape_env = ShapeEnv(duck_shape=False, allow_scalar_outputs=False,
                                  allow_dynamic_output_shape_ops=config.capture_dynamic_output_shape_ops)
        self.fake_mode = FakeTensorMode(shape_env=self.shape_env, static_shapes=False)
        self.symbols: Dict[sympy.Symbol, Tuple[Source, Optional[int]]] = {}  # dim None: an int input
        self.sizes: Dict[Source, list] = {}

    def hand_to_backend(self) -> None:
        """From the backend on, data-dependent scalars are allowed: Inductor lowers
        ``scan`` to a ``while_loop`` that reads its counter with ``.item()``, in the
        forward graph and again when AOTAutograd compiles the backward, lazily. The
        trace itself is over, so no break is lost."""
        self.shape_env.settings = dataclasses.replace(self.shape_env.settings, allow_scalar_outputs=True)

    def bind(self, code) -> None:
        """Use (and update) the sizes recorded for ``code`` by earlier traces."""
        self.sizes = _frame_sizes.setdefault(code, {})

    def dynamic_dims(self, t: torch.Tensor, source: Source) -> Set[int]:
        """The dimensions of input ``t`` to trace symbolically (records its sizes too)."""
        seen = self.sizes.get(source)
        if seen is None or len(seen) != t.dim():
            seen = self.sizes[source] = list(t.size())
        else:
            for i, n in enumerate(t.size()):
                if seen[i] != n:
                    seen[i] = None  # changed between traces
        if type(t) is not torch.Tensor or not t.is_contiguous() or t.is_sparse:
            return set()  # a parameter, a subclass: static (the marks below are not read)
        if _MARKS.isdisjoint(t.__dict__):  # marks are instance attributes: none set
            marked, static = set(), set()
        else:
            marked = set(getattr(t, _MARK, ())).union(*(getattr(t, a, ()) for a in _TORCH_DYNAMIC))
            static = set(getattr(t, _STATIC, ())).union(getattr(t, "_dynamo_static_indices", ()))
            if hasattr(t, _STATIC_ADDRESS):
                static = set(range(t.dim()))
        if self.dynamic is True:
            return (set(range(t.dim())) | marked) - static
        if self.dynamic is False:
            return marked - static
        return (marked | {i for i, n in enumerate(seen) if n is None}) - static

    def dynamic_int(self, value: int, source: Source) -> bool:
        """Should int input ``value`` be a graph input with a symbolic value? (records it too)"""
        seen = self.sizes.setdefault(source, [value])
        if seen[0] != value:
            seen[0] = None  # changed between traces
        return self.dynamic is True or self.dynamic is None and seen[0] is None

    def symint(self, value: int, source: Source):
        """A SymInt for int input ``value`` (any value: ints are not 0/1-specialised)."""
        sym = self.shape_env.create_symbol(value, _DimSource(source.name()), dynamic_dim=DimDynamic.DYNAMIC,
                                           positive=None, do_not_specialize_zero_one=True)
        self.symbols[sym] = (source, None)
        return self.shape_env.create_symintnode(sym, hint=value)

    def fakeify(self, t: torch.Tensor, source: Source):
        """A FakeTensor for input ``t``: symbolic in its dynamic dims, else static."""
        dims = self.dynamic_dims(t, source)
        if not dims:
            fake = plain_fake(self.fake_mode, t)
            return fake if fake is not None else self.fake_mode.from_tensor(t, static_shapes=True)
        sizes = []
        unbacked = set(getattr(t, _UNBACKED, ())).union(getattr(t, "_dynamo_unbacked_indices", ()))
        for i, n in enumerate(t.size()):
            if i not in dims:
                sizes.append(n)
                continue
            sym = self.shape_env.create_symbol(n, _DimSource(f"{source.name()}.size()[{i}]"),
                                               dynamic_dim=DimDynamic.DYNAMIC,
                                               do_not_specialize_zero_one=i in unbacked)
            if isinstance(sym, sympy.Symbol):
                self.symbols[sym] = (source, i)
            sizes.append(self.shape_env.create_symintnode(sym, hint=n))
        strides, step = [], 1
        for n in reversed(sizes):
            strides.append(step)
            step = step * (n if not isinstance(n, int) else max(n, 1))
        with self.fake_mode:
            return torch.empty_strided(sizes, tuple(reversed(strides)), dtype=t.dtype, device=t.device,
                                       requires_grad=t.requires_grad)

    def guard(self, live_sources) -> Optional["ShapeGuards"]:
        """The SHAPE_ENV guard of this trace, or None when nothing was symbolic."""
        symbols = {s: v for s, v in self.symbols.items() if v[0] in live_sources}
        if not symbols:
            return None
        env = self.shape_env
        exprs = []
        for sym in symbols:
            bounds = env.var_to_range.get(sym)
            if bounds is not None and bounds.lower > 0:
                exprs.append(sympy.Ge(sym, int(bounds.lower), evaluate=False))
            if bounds is not None and bounds.upper not in (int_oo, sympy.oo):
                exprs.append(sympy.Le(sym, int(bounds.upper), evaluate=False))
        for g in env.guards:
            if g.expr.free_symbols <= set(symbols) and g.expr not in exprs:
                exprs.append(g.expr)
        if not exprs:  # e.g. a symbolic int with no constraint: its TYPE_MATCH is enough
            return None
        table = tuple((s, src, dim) for s, (src, dim) in symbols.items())
        return ShapeGuards(tuple(exprs), table)


def _read(expr: str, dim: Optional[int]) -> str:
    """Python that reads a symbol's value: a size of a tensor, or an int input itself."""
    return expr if dim is None else f"{expr}.size({dim})"


class _Printer(PythonPrinter):
    """Prints a shape expression with each symbol replaced by a read of its size."""

    def __init__(self, names):
        super().__init__()
        self.names = names

    def _print_Symbol(self, expr):
        return self.names[expr]


@dataclasses.dataclass(frozen=True)
class ShapeGuards:
    """The value of a SHAPE_ENV guard: relations over sizes of the inputs."""

    exprs: Tuple[sympy.Expr, ...]
    symbols: Tuple[Tuple[sympy.Symbol, Source, int], ...]

    def _print(self, expr, readable: bool) -> str:
        names = {s: _read(src.name() if readable else src.expr(), dim) for s, src, dim in self.symbols}
        return _Printer(names).doprint(expr)

    def code(self) -> str:
        return "(" + " and ".join(f"({self._print(e, False)})" for e in self.exprs) + ")"

    def readable(self) -> str:
        return "; ".join(self._print(e, True) for e in self.exprs)

    def uses_globals(self) -> bool:
        return any(src.uses_globals() for _, src, _ in self.symbols)

    def explain(self, scope) -> str:
        """Which relation the sizes of this call break, and the sizes involved."""
        scope = dict(scope, math=math, torch=torch)
        for expr in self.exprs:
            try:
                ok = eval(self._print(expr, False), {}, scope)  # noqa: S307  (our own expression)
            except Exception as e:
                return f"the sizes of the inputs cannot be read ({type(e).__name__}: {e})"
            if not ok:
                return f"{self._print(expr, True)} no longer holds ({self._sizes(expr, scope)})"
        return "the shape guards failed"

    def _sizes(self, expr, scope) -> str:
        out = []
        for s, src, dim in self.symbols:
            if s in expr.free_symbols:
                value = eval(_read(src.expr(), dim), {}, scope)  # noqa: S307
                out.append(f"size of {src.name()} dim {dim} is {value}" if dim is not None
                           else f"{src.name()} is {value}")
        note = "; sizes 0 and 1 are specialised" if any(
            isinstance(e, sympy.Ge) and e.rhs == 2 for e in [expr]) else ""
        return ", ".join(out) + note


__all__ = ["mark_dynamic", "ShapeContext", "ShapeGuards", "forget"]


_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)


def plain_fake(mode, t: torch.Tensor):
    """The static FakeTensor of ``t`` made directly, or None where the converter must.

    A model's parameters are the common input: dense leaf tensors that own
    their storage alone. For those, what ``from_tensor`` works out through its
    tensor and storage descriptions is just a meta tensor of the same sizes,
    strides and dtype, a leaf with ``t``'s ``requires_grad``, marked as a
    parameter where ``t`` is one; made here it costs a fifth. Anything the
    converter models beyond that stays with it: views and storage shared with
    another tensor (the fakes must alias as the tensors do), a ``.grad``, a
    non-leaf, subclasses, sparse, quantized, conjugate or inference tensors. The
    fake is memoised as the converter's own, so a later ``from_tensor(t)`` gives
    the same FakeTensor."""
    if (type(t) not in _PLAIN_TENSORS or t.layout is not torch.strided or t.device.type not in ("cpu", "cuda")
            or not t.is_leaf or t.grad is not None or t._is_view() or t.is_quantized or t.is_nested
            or t.is_conj() or t.is_neg() or t.is_inference() or t._is_zerotensor()
            or t.storage_offset()):
        return None
    converter = mode.fake_tensor_converter
    if converter._get_memo(t) is not None:
        return None  # already faked: the converter returns that one
    storage = t.untyped_storage()
    # two: t's own reference and the one `storage` holds while we ask
    if torch._C._storage_Use_Count(storage._cdata) > 2 or storage.nbytes() != _extent(t) * t.element_size():
        return None
    meta = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta", requires_grad=t.requires_grad)
    fake = new_fake(mode, meta, t.device, is_param=type(t) is torch.nn.Parameter)
    converter.set_tensor_memo(t, fake)
    return fake


def _extent(t) -> int:
    """Elements between the first and one past the last that ``t`` addresses."""
    if t.numel() == 0:
        return 0
    return 1 + sum((n - 1) * st for n, st in zip(t.shape, t.stride()))
