"""Decompile the bytecode framegraph generates back to Python source, for people.

The replacement code of a frame is short and regular: load the compiled
graph, push its inputs, call it, rebuild values, replay side effects, maybe
run one breaking instruction and call a resume function. This turns that
into the Python a person would have written:

    def f(x):
        graph_out_0 = __compiled_fn_1(x)
        return graph_out_0[0]

It is a symbolic stack machine over expressions (strings). Conditional jumps
become `if`/`else` when both sides end in a return, which is the shape our
break-site code has. Anything it does not know is shown as a comment with the
instruction, never an error: this is a diagnostic, it must not fail.
(`depyf` does this well but imports torch._dynamo, which framegraph avoids.)
"""
import ast
import dis
import types

from .. import bytecode, pyver

_UNARY = {"UNARY_NEGATIVE": "-", "UNARY_POSITIVE": "+", "UNARY_NOT": "not ", "UNARY_INVERT": "~"}
_NULL = object()


def decompile(code: types.CodeType) -> str:
    """Python source for `code` (best effort; unknown instructions become comments)."""
    insts = bytecode.decode(code)
    names = code.co_varnames
    pos, nkw = code.co_argcount, code.co_kwonlyargcount
    args, star = list(names[:pos]), pos + nkw
    if code.co_flags & 0x04:
        args.append("*" + names[star])
    elif nkw:
        args.append("*")
    args += names[pos:pos + nkw]
    if code.co_flags & 0x08:
        args.append("**" + names[star + bool(code.co_flags & 0x04)])
    lines = [f"def {code.co_name}({', '.join(args)}):"]
    body = _Block(insts, {id(i): k for k, i in enumerate(insts)}).run(0, [], 1)
    return "\n".join(lines + (body or ["    pass"]))


class _State:
    """Where one straight-line walk is: stack of expressions, output lines, indent."""

    def __init__(self, stack, depth):
        self.stack, self.out, self.pad, self.kw = list(stack), [], "    " * depth, None

    def pop(self, n=None):
        if n is None:
            return self.stack.pop()
        items = [self.stack.pop() for _ in range(n)]
        return items[::-1]

    def push(self, value):
        self.stack.append(value)

    def line(self, text):
        self.out.append(self.pad + text)


_SKIPPED = frozenset({"RESUME", "NOP", "PRECALL", "COPY_FREE_VARS", "MAKE_CELL", "EXTENDED_ARG", "CACHE"})
_HANDLERS = {}


def _op(*names):
    def register(fn):
        for name in names:
            _HANDLERS[name] = fn
        return fn
    return register


class _Block:
    def __init__(self, insts, index):
        self.insts, self.index = insts, index

    def run(self, k, stack, depth, stop=None):
        """Lines for the instructions from index `k` until a return (or `stop`)."""
        st = _State(stack, depth)
        while k < len(self.insts) and k != stop:
            inst = self.insts[k]
            k += 1
            op = inst.opname
            if op in _SKIPPED:
                continue
            if inst.is_jump() and op.startswith(("POP_JUMP", "JUMP_IF")):
                return st.out + self._branch(inst, k, st.stack, depth, stop)
            if op == "JUMP_FORWARD":
                k = self.index[id(inst.target)]
            elif op.startswith("JUMP_BACKWARD"):  # a loop: beyond what generated code does
                st.line(f"# {op}: loop not decompiled")
                return st.out
            elif op in _HANDLERS:
                if _HANDLERS[op](st, inst) == "return":
                    return st.out
            else:
                st.line(f"# {op} {'' if inst.argval is None else repr(inst.argval)} (not decompiled)")
                st.push(f"<{op}>")
        return st.out

    def _branch(self, inst, k, stack, depth, stop):
        pad, op = "    " * depth, inst.opname
        stack = list(stack)
        cond = stack.pop()
        keep = op.startswith("JUMP_IF")  # the value stays on the stack on the jump side
        test = {"FALSE": f"not {cond}", "TRUE": f"{cond}", "NONE": f"{cond} is None",
                "NOT_NONE": f"{cond} is not None"}[op.rsplit("_IF_", 1)[1].replace("_OR_POP", "")]
        jumped = self.run(self.index[id(inst.target)], stack + ([cond] if keep else []), depth + 1, stop)
        fall = self.run(k, stack, depth + 1, stop)
        return [f"{pad}if {test}:"] + (jumped or [pad + "    pass"]) + [f"{pad}else:"] + (fall or [pad + "    pass"])


@_op("KW_NAMES")
def _kw_names(st, inst):
    st.kw = inst.argval


@_op("PUSH_NULL")
def _push_null(st, inst):
    st.push(_NULL)


@_op("LOAD_GLOBAL")
def _load_global(st, inst):
    null = pyver.load_global_push_null(inst.arg or 0)
    if null and not pyver.NULL_ABOVE_CALLABLE:
        st.push(_NULL)
    st.push(inst.argval)
    if null and pyver.NULL_ABOVE_CALLABLE:
        st.push(_NULL)


@_op("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME")
def _load_name(st, inst):
    st.push(inst.argval)


@_op("LOAD_FAST_LOAD_FAST")
def _load_pair(st, inst):
    st.stack.extend(inst.argval)


@_op("STORE_FAST_LOAD_FAST")
def _store_load(st, inst):
    first, second = inst.argval
    _store_name(st, type(inst)(opname="STORE_FAST", argval=first))
    st.push(second)


@_op("STORE_FAST_STORE_FAST")
def _store_pair(st, inst):
    for name in inst.argval:
        _store_name(st, type(inst)(opname="STORE_FAST", argval=name))


@_op("TO_BOOL")
def _to_bool(st, inst):
    pass  # the condition reads the same either way


@_op("LOAD_CONST")
def _load_const(st, inst):
    st.push(_const(inst.argval))


@_op("LOAD_ATTR", "LOAD_METHOD")
def _load_attr(st, inst):
    obj = st.pop()
    method = inst.opname == "LOAD_METHOD" or pyver.attr_is_method(inst.arg or 0)
    if method and not pyver.NULL_ABOVE_CALLABLE:
        st.push(_NULL)
    st.push(f"{obj}.{inst.argval}")
    if method and pyver.NULL_ABOVE_CALLABLE:
        st.push(_NULL)


@_op("STORE_FAST", "STORE_DEREF", "STORE_GLOBAL", "STORE_NAME")
def _store_name(st, inst):
    value = st.pop()
    st.line(f"{inst.argval} = {value}")
    # a COPY left the same expression below: it now reads the name (the call ran once)
    st.stack[:] = [inst.argval if item is value else item for item in st.stack]


@_op("STORE_ATTR")
def _store_attr(st, inst):
    obj, value = st.pop(), st.pop()
    st.line(f"{obj}.{inst.argval} = {value}")


@_op("STORE_SUBSCR")
def _store_subscr(st, inst):
    key, obj, value = st.pop(), st.pop(), st.pop()
    st.line(f"{obj}[{key}] = {value}")


@_op("DELETE_FAST", "DELETE_GLOBAL", "DELETE_DEREF")
def _delete(st, inst):
    st.line(f"del {inst.argval}")


@_op("CALL")
def _call_op(st, inst):
    st.push(_call(st.stack, inst.arg, st.kw))
    st.kw = None


@_op("CALL_KW")
def _call_kw(st, inst):
    kw = st.pop()  # 3.13: the names are a constant on the stack, as the reader writes them
    st.push(_call(st.stack, inst.arg, ast.literal_eval(kw) if isinstance(kw, str) else kw))


@_op("CALL_FUNCTION_EX")
def _call_ex(st, inst):
    kwargs = st.pop() if inst.arg & 1 else None
    posargs, fn = st.pop(), st.pop()
    if fn is _NULL:  # 3.13: [fn, NULL, args]
        fn = st.pop()
    elif st.stack and st.stack[-1] is _NULL:
        st.pop()
    st.push(f"{fn}(*{posargs}{f', **{kwargs}' if kwargs else ''})")


@_op("BINARY_SUBSCR")
def _subscr(st, inst):
    key, obj = st.pop(), st.pop()
    st.push(f"{obj}[{key}]")


@_op("BINARY_OP")
def _binary(st, inst):
    rhs, lhs = st.pop(), st.pop()
    st.push(f"({lhs} {dis._nb_ops[inst.arg][1]} {rhs})")


@_op("COMPARE_OP", "IS_OP", "CONTAINS_OP")
def _compare(st, inst):
    rhs, lhs = st.pop(), st.pop()
    sym = inst.argval if inst.opname == "COMPARE_OP" else {
        "IS_OP": ("is", "is not"), "CONTAINS_OP": ("in", "not in")}[inst.opname][inst.arg]
    st.push(f"({lhs} {sym} {rhs})")


@_op(*_UNARY)
def _unary(st, inst):
    st.push(f"({_UNARY[inst.opname]}{st.pop()})")


@_op("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_SLICE",
     "BUILD_STRING")
def _build(st, inst):
    st.push(_BUILDERS[inst.opname](st.stack, inst.arg, inst.argval))


@_op("LIST_EXTEND", "LIST_APPEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE")
def _merge(st, inst):
    item = st.pop()
    st.stack[-inst.arg] = _MERGES[inst.opname].format(st.stack[-inst.arg], item)


@_op("LIST_TO_TUPLE")
def _list_to_tuple(st, inst):
    st.push(f"tuple({st.pop()})")


# CALL_INTRINSIC_1 (3.12) opargs: 5 is +x, 6 is 3.11's LIST_TO_TUPLE.
_INTRINSICS = {5: "+{}", 6: "tuple({})"}


@_op("CALL_INTRINSIC_1")
def _intrinsic(st, inst):
    form = _INTRINSICS.get(inst.arg)
    if form is None:
        st.line(f"# CALL_INTRINSIC_1 {inst.arg} (not decompiled)")
    st.push(form.format(st.pop()) if form else f"<CALL_INTRINSIC_1 {inst.arg}>({st.pop()})")


@_op("BINARY_SLICE")
def _binary_slice(st, inst):
    container, start, end = st.pop(3)
    st.push(f"{container}[{'' if start == 'None' else start}:{'' if end == 'None' else end}]")


@_op("UNPACK_SEQUENCE")
def _unpack(st, inst):
    seq = st.pop()
    st.stack.extend(f"{seq}[{i}]" for i in reversed(range(inst.arg)))


@_op("POP_TOP")
def _pop_top(st, inst):
    value = st.pop()
    if "(" in str(value):  # a call whose result is dropped is still a statement
        st.line(str(value))


@_op("COPY")
def _copy(st, inst):
    st.push(st.stack[-inst.arg])


@_op("SWAP")
def _swap(st, inst):
    st.stack[-1], st.stack[-inst.arg] = st.stack[-inst.arg], st.stack[-1]


@_op("RETURN_VALUE")
def _return(st, inst):
    st.line(f"return {st.pop()}")
    return "return"


@_op("RETURN_CONST")
def _return_const(st, inst):
    st.line(f"return {_const(inst.argval)}")
    return "return"


@_op("MAKE_FUNCTION")
def _make_function(st, inst):
    code_expr = st.pop()
    for bit in (0x08, 0x04, 0x02, 0x01):
        if inst.arg & bit:
            st.pop()
    st.push(f"<function from {code_expr}>")


def _const(value):
    """A constant as the reader would write it: functions, classes and builtin
    methods the generated code loads as constants by their dotted names."""
    if isinstance(value, types.CodeType):
        return f"<code {value.co_name}>"
    if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
        owner = getattr(value, "__self__", None)
        if isinstance(owner, type):  # object.__new__, dict.get
            return f"{owner.__qualname__}.{value.__name__}"
        if isinstance(owner, types.ModuleType) or owner is None:
            name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
            if name:
                return name
    if isinstance(value, types.MethodDescriptorType | types.WrapperDescriptorType):
        return f"{value.__objclass__.__qualname__}.{value.__name__}"
    return repr(value)


def _call(stack, n, kw):
    args = [stack.pop() for _ in range(n)][::-1]
    upper = stack.pop()
    lower = stack.pop() if stack else _NULL
    if upper is _NULL:  # 3.13: [fn, NULL, args]
        fn = lower
    elif lower is _NULL:  # 3.11, 3.12: [NULL, fn, args]
        fn = upper
    else:  # method form: [fn, self, args]
        fn, args = lower, [upper] + args
    kw = kw or ()
    pos = args[:len(args) - len(kw)]
    named = [f"{k}={v}" for k, v in zip(kw, args[len(args) - len(kw):])]
    return f"{fn}({', '.join(list(map(str, pos)) + named)})"


def _build_seq(open_, close, single=""):
    def build(stack, n, _):
        items = [stack.pop() for _ in range(n)][::-1]
        return f"{open_}{', '.join(map(str, items))}{single if n == 1 else ''}{close}"
    return build


def _build_map(stack, n, _):
    items = [stack.pop() for _ in range(2 * n)][::-1]
    return "{" + ", ".join(f"{items[i]}: {items[i + 1]}" for i in range(0, 2 * n, 2)) + "}"


def _build_const_key_map(stack, n, _):
    keys = stack.pop()
    values = [stack.pop() for _ in range(n)][::-1]
    names = eval(keys) if isinstance(keys, str) else keys  # noqa: S307 (a repr of a tuple constant)
    return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(names, values)) + "}"


def _build_slice(stack, n, _):
    parts = [stack.pop() for _ in range(n)][::-1]
    return ":".join("" if p == "None" else str(p) for p in parts)


_BUILDERS = {
    "BUILD_TUPLE": _build_seq("(", ")", ","), "BUILD_LIST": _build_seq("[", "]"),
    "BUILD_SET": _build_seq("{", "}"), "BUILD_MAP": _build_map,
    "BUILD_CONST_KEY_MAP": _build_const_key_map, "BUILD_SLICE": _build_slice,
    "BUILD_STRING": lambda stack, n, _: "''.join(" + _build_seq("(", ")", ",")(stack, n, _) + ")",
}
_MERGES = {"LIST_EXTEND": "[*{0}, *{1}]", "LIST_APPEND": "[*{0}, {1}]", "SET_UPDATE": "{{*{0}, *{1}}}",
           "DICT_UPDATE": "{{**{0}, **{1}}}", "DICT_MERGE": "{{**{0}, **{1}}}"}
