"""Guard kinds as records: every kind checks, reads aloud and explains itself, and
guard functions are written from structured checks (golden text)."""
import collections
import math
import sys
import types

import pytest
import torch

import framegraph
from framegraph.guards.compile import CompiledGuard
from framegraph.guards.kinds import KINDS, Guard, GuardKind, HookDicts, TensorSpec, global_state
from framegraph.guards.sources import AttrSource, GetItemSource, GlobalSource, LocalSource
from helpers import CountingBackend

X, Y = LocalSource("x"), LocalSource("y")
OBJ, OTHER = object(), object()
EXEC_GLOBALS = {}
exec("def fn(x, y):\n    pass\n", EXEC_GLOBALS)  # noqa: S102  (globals the test may change)
FN = EXEC_GLOBALS["fn"]
HOOKS = {}


def _grad_off():
    torch.set_grad_enabled(False)
    return lambda: torch.set_grad_enabled(True)


def _float64():
    torch.set_default_dtype(torch.float64)
    return lambda: torch.set_default_dtype(torch.float32)


def _shadow_len():
    EXEC_GLOBALS["len"] = len
    return lambda: EXEC_GLOBALS.pop("len")


def _recursion_limit_up():
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(before + 1)
    return lambda: sys.setrecursionlimit(before)


def _add_hook():
    HOOKS[0] = print
    return HOOKS.clear


def _moved_ordered_dict():
    od = collections.OrderedDict(b=2, a=1)
    od.move_to_end("b")
    return od


def examples():
    """kind -> (guard, (x, y) it accepts, (x, y) it rejects or a change of state that makes it
    reject), made when a test runs: the global-state guards hold what the interpreter has then."""
    return {
        "GRAD_MODE": (Guard("GRAD_MODE", None, True), (0, 0), _grad_off),
        "GLOBAL_STATE": (Guard("GLOBAL_STATE", None, global_state()), (0, 0), _float64),
        "NO_HANDLED_EXCEPTION": (Guard("NO_HANDLED_EXCEPTION", None), (0, 0), "while handling"),
        "INTERPRETER_STATE": (Guard("INTERPRETER_STATE", None, (sys.getrecursionlimit, sys.getrecursionlimit())),
                              (0, 0), _recursion_limit_up),
        "SAME_GLOBALS": (Guard("SAME_GLOBALS", None, id(EXEC_GLOBALS)), (0, 0), "other globals"),
        "NOT_IN_GLOBALS": (Guard("NOT_IN_GLOBALS", None, "len"), (0, 0), _shadow_len),
        "MODULE_HOOKS": (Guard("MODULE_HOOKS", None, HookDicts([HOOKS])), (0, 0), _add_hook),
        "TYPE_MATCH": (Guard("TYPE_MATCH", X, int), (3, 0), ("3", 0)),
        "ID_MATCH": (Guard("ID_MATCH", X, (id(OBJ), "OBJ")), (OBJ, 0), (OTHER, 0)),
        "CONSTANT_MATCH": (Guard("CONSTANT_MATCH", X, 2), (2, 0), (2.0, 0)),
        "SET_MATCH": (Guard("SET_MATCH", X, (frozenset, (1, 2), frozenset({1, 2}).__sizeof__())),
                      (frozenset({1, 2}), 0), ({1, 2}, 0)),
        "LENGTH": (Guard("LENGTH", X, (list, 2)), ([1, 2], 0), ([1], 0)),
        "DICT_CONTAINS": (Guard("DICT_CONTAINS", X, ("a", True)), ({"a": 1}, 0), ({}, 0)),
        "DICT_KEYS": (Guard("DICT_KEYS", X, (dict, ("a", "b"))), ({"a": 1, "b": 2}, 0), ({"b": 2, "a": 1}, 0)),
        # an OrderedDict listed a, b whose table holds b, a (move_to_end("b") after b, a)
        "ODICT_TABLE_ORDER": (Guard("ODICT_TABLE_ORDER", X), (collections.OrderedDict(a=1, b=2), 0),
                              (_moved_ordered_dict(), 0)),
        "ODICT_TABLE_KEYS": (Guard("ODICT_TABLE_KEYS", X, ("b", "a")), (_moved_ordered_dict(), 0),
                             (collections.OrderedDict(a=1, b=2), 0)),
        "IS_SAME": (Guard("IS_SAME", X, Y), (OBJ, OBJ), (OBJ, OTHER)),
        "IS_NOT_SAME": (Guard("IS_NOT_SAME", X, Y), (OBJ, OTHER), (OBJ, OBJ)),
        "STORAGE_GROUPS": (Guard("STORAGE_GROUPS", None, ((X, Y), (0, 1))), (torch.ones(2), torch.ones(2)),
                           (lambda t: (t[:1], t[1:]))(torch.ones(2))),
        "TENSOR_MATCH": (Guard("TENSOR_MATCH", X, TensorSpec.of(torch.zeros(2))), (torch.ones(2), 0),
                         (torch.ones(3), 0)),
    }


def test_every_kind_has_a_complete_record():
    for name, kind in KINDS.items():
        assert isinstance(kind, GuardKind) and kind.name == name
        assert isinstance(kind.cost, int) and callable(kind.check) and callable(kind.line)
        assert kind.versioned in (None, "item", "dict")
    # SHAPE_ENV needs a ShapeEnv: test_dynamic_shapes covers it
    assert set(examples()) == set(KINDS) - {"SHAPE_ENV"}, "a new kind needs an example here"


@pytest.mark.parametrize("name", sorted(examples()))
def test_a_kind_checks_reads_aloud_and_explains_itself(name):
    guard, accepted, rejected = examples()[name]
    compiled = CompiledGuard([guard], ("x", "y"))
    assert compiled(FN, *accepted) is True
    assert compiled.failure(FN, *accepted) is None
    assert compiled.lines == [KINDS[name].line(guard)]
    fn, restore = FN, None
    if rejected == "other globals":
        fn = types.FunctionType(FN.__code__, {})
    elif callable(rejected):
        restore = rejected()
    elif rejected != "while handling":
        accepted = rejected
    try:
        if rejected == "while handling":  # called from an except block
            try:
                raise ValueError
            except ValueError:
                assert compiled(fn, *accepted) is False
                reason = compiled.failure(fn, *accepted)
        else:
            assert compiled(fn, *accepted) is False
            reason = compiled.failure(fn, *accepted)
    finally:
        if restore:
            restore()
    assert reason
    assert reason.startswith("guard failed: ") == (KINDS[name].explain is None), reason


def test_a_shared_prefix_is_bound_once_and_a_value_read_twice_is_bound():
    cfg = AttrSource(LocalSource("cfg"), "a")
    g = CompiledGuard([Guard("CONSTANT_MATCH", AttrSource(cfg, "b"), 2),
                       Guard("CONSTANT_MATCH", AttrSource(cfg, "c"), 3)], ("cfg",))
    assert g.source_code.splitlines()[2] == (
        "        return (type((___t1 := (___t0 := cfg.a).b)) is ___c0 and ___t1 == 2) and "
        "(type((___t2 := ___t0.c)) is ___c0 and ___t2 == 3)")
    ns = types.SimpleNamespace
    assert g(FN, ns(a=ns(b=2, c=3))) and not g(FN, ns(a=ns(b=2, c=4)))


def test_module_globals_sit_behind_a_version_tag_and_reader_values_are_star_arguments():
    spec = TensorSpec.of(torch.zeros(2))
    params = AttrSource(LocalSource("m"), "_parameters")
    guards = [Guard("TENSOR_MATCH", GetItemSource(params, k), spec) for k in "abc"]
    guards += [Guard("ID_MATCH", GlobalSource("torch"), (id(torch), "torch")),
               Guard("NOT_IN_GLOBALS", None, "len")]
    g = CompiledGuard(guards, ("m",))
    body = g.source_code.splitlines()[3]
    assert body == (
        "        return (___c0[0] == (___c0_v := ___c1(___G)) or ('len' not in ___G and "
        f"id(___G['torch']) == {id(torch)} and (___c0_v is None or ___c0.__setitem__(0, ___c0_v) is None))) "
        "and (___r0 := ___c2(m)) is not None and ___c3(*___r0)")
    m = types.SimpleNamespace(_parameters={k: torch.ones(2) for k in "abc"})
    assert g(_module_fn, m) and g(_module_fn, m)
    m._parameters["b"] = torch.ones(3)
    assert not g(_module_fn, m)


def _module_fn(m):  # its globals are this module's: torch, no len
    pass


@pytest.mark.parametrize("value, alike, unlike", [
    (0.0, 0.0, -0.0),
    (-0.0, -0.0, 0.0),
    (float("nan"), float("nan"), 0.0),
    (complex(0.0, -0.0), complex(0.0, -0.0), 0j),
    ((1, 2.5), (1, 2.5), (True, 2.5)),
    ((0.0, "a"), (0.0, "a"), (-0.0, "a")),
    (frozenset({1, "a"}), frozenset({"a", 1}), frozenset({True, "a"})),
])
def test_a_constant_matches_only_a_value_no_program_can_tell_apart(value, alike, unlike):
    """``==`` is looser than sameness for a zero's sign, a NaN, and the types inside a tuple."""
    compiled = CompiledGuard([Guard("CONSTANT_MATCH", X, value)], ("x", "y"))
    assert compiled(FN, alike, 0) is True
    assert compiled(FN, unlike, 0) is False


def test_a_float_argument_of_another_zero_sign_recompiles():
    def f(x, s):
        return x * math.copysign(1.0, s)

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, dynamic=False, fullgraph=True)
    x = torch.ones(2)
    for s in (0.0, -0.0):
        assert torch.equal(compiled(x, s), f(x, s))
    assert compiled(x, -0.0).tolist() == [-1.0, -1.0]
    assert cnt.frame_count == 2


def test_identity_checks_of_consecutive_values_are_one_tuple_comparison_that_catches_any_swap():
    layers = [object() for _ in range(6)]
    m = types.SimpleNamespace(**{f"l{i}": layer for i, layer in enumerate(layers)})
    g = CompiledGuard([Guard("ID_MATCH", AttrSource(LocalSource("m"), f"l{i}"), (id(layer), "layer"))
                       for i, layer in enumerate(layers)], ("m",))
    assert f"tuple(map(id, ___a0[0:6])) == {tuple(map(id, layers))!r}" in g.source_code
    assert g(FN, m) and g(FN, m)
    for i in (0, 3, 5):  # the first, a middle and the last of the run
        swapped = types.SimpleNamespace(**vars(m))
        setattr(swapped, f"l{i}", object())
        assert not g(FN, swapped), i


PLAIN = {"a": None, "b": True, "c": 3, "d": "zeros", "e": 0.1, "f": b"x", "g": False}


def _constants_of(m, names):
    return CompiledGuard([Guard("CONSTANT_MATCH", AttrSource(LocalSource("m"), k), getattr(m, k)) for k in names],
                         ("m",))


@pytest.mark.parametrize("name, changed", [
    ("a", False), ("b", 1), ("b", False), ("c", 3.0), ("c", True), ("c", 4), ("d", b"zeros"), ("d", "ones"),
    ("e", 0.2), ("f", "x"), ("g", 0), ("g", None),
])
def test_constant_checks_of_many_values_are_two_comparisons_that_catch_a_new_value_or_type(name, changed):
    """Flags, sizes and names read under one module: their types by identity, then their values as
    one tuple. A value equal under ``==`` but of another type (``3.0``, ``True``, ``0``) is caught."""
    m = types.SimpleNamespace(**PLAIN)
    g = _constants_of(m, PLAIN)
    assert "all(map(" in g.source_code and "== 3" not in g.source_code
    assert g(FN, m) and g(FN, m)
    other = types.SimpleNamespace(**{**PLAIN, name: changed})
    assert not g(FN, other)


TUPLES = {**PLAIN, "p": (1, 1), "s": (2, "same", None), "one": (True,)}


@pytest.mark.parametrize("name, changed", [
    ("p", (1, 2)), ("p", (1.0, 1)), ("p", (1,)), ("p", (1, 1, 1)), ("p", [1, 1]), ("p", (True, 1)),
    ("s", (2, "same", False)), ("s", (2, b"same", None)), ("one", (1,)), ("one", True), ("c", (3,)),
])
def test_tuples_of_constants_join_the_run_and_their_items_types_are_compared(name, changed):
    """A convolution's ``padding=(1, 1)``: its type, its items' types, then its value. An equal
    tuple with another item type (``(1.0, 1)``, ``(True, 1)``) or a list is caught."""
    m = types.SimpleNamespace(**TUPLES)
    g = _constants_of(m, TUPLES)
    assert "tuple(map(type, ___c" in g.source_code and "(1, 1)" not in g.source_code
    assert g(FN, m) and g(FN, m)
    assert not g(FN, types.SimpleNamespace(**{**TUPLES, name: changed}))


def test_a_tuple_item_of_a_changed_type_is_rejected_before_any_value_is_compared():
    m = types.SimpleNamespace(**TUPLES)
    g = _constants_of(m, TUPLES)
    assert not g(FN, types.SimpleNamespace(**{**TUPLES, "p": (1, _LoudEq(1))}))
    alone = CompiledGuard([Guard("CONSTANT_MATCH", X, (1, 1))], ("x", "y"))
    assert alone(FN, (1, 1), 0) and not alone(FN, (1, _LoudEq(1)), 0)


def test_a_zero_float_keeps_its_own_exact_check_beside_a_run_of_constants():
    values = {**PLAIN, "z": 0.0}
    m = types.SimpleNamespace(**values)
    g = _constants_of(m, values)
    assert g(FN, m)
    assert not g(FN, types.SimpleNamespace(**{**values, "z": -0.0}))


class _LoudEq(int):
    def __eq__(self, other):  # a guard must not ask it: the type differs first
        raise AssertionError("__eq__ of a changed value was called")

    __hash__ = int.__hash__


def test_a_run_of_constants_rejects_a_changed_type_before_comparing_values():
    m = types.SimpleNamespace(**PLAIN)
    g = _constants_of(m, PLAIN)
    assert not g(FN, types.SimpleNamespace(**{**PLAIN, "c": _LoudEq(3)}))


def test_checks_that_two_values_are_one_object_are_one_check_that_catches_any_split():
    shared = [object() for _ in range(5)]
    m = types.SimpleNamespace(**{f"{side}{i}": o for side in "ab" for i, o in enumerate(shared)})
    g = CompiledGuard([Guard("IS_SAME", AttrSource(LocalSource("m"), f"a{i}"), AttrSource(LocalSource("m"), f"b{i}"))
                       for i in range(5)], ("m",))
    assert "all(map(" in g.source_code and " is ___a" not in g.source_code
    assert g(FN, m) and g(FN, m)
    for i in (0, 2, 4):
        split = types.SimpleNamespace(**vars(m))
        setattr(split, f"b{i}", object())
        assert not g(FN, split), i


class _SaysYes(dict):
    def __contains__(self, key):
        return True


@pytest.mark.parametrize("make, passes", [
    (lambda: {"x": 1}, True),
    (lambda: {"x": 1, "c": 2}, False),   # an absent key added
    (lambda: {}, False),                 # the present key gone
    (lambda: _SaysYes(x=1), False),      # the type's __contains__ answers, as ``in`` asks it
])
def test_many_key_checks_of_one_dict_are_one_check_each_way(make, passes):
    absent = "abcde"
    keys = [Guard("DICT_CONTAINS", X, (k, False)) for k in absent] + [Guard("DICT_CONTAINS", X, ("x", True))]
    g = CompiledGuard(keys, ("x", "y"))
    assert "not any(map(" in g.source_code and "not in" not in g.source_code
    d = make()
    assert g(FN, d, 0) is passes
    assert g(FN, d, 0) is passes  # again: the dict's version tag now skips the checks, or they run again
    if passes:
        d["a"] = 0
        assert not g(FN, d, 0)


def test_a_key_check_ignores_an_instance_attribute_named_contains():
    class Attrs(dict):
        pass

    d = Attrs(x=1)
    d.__contains__ = lambda key: True
    g = CompiledGuard([Guard("DICT_CONTAINS", X, (k, False)) for k in "abcd"], ("x", "y"))
    assert g(FN, d, 0) and ("a" in d) is False
