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
import dis
import types

from . import bytecode

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


class _Block:
    def __init__(self, insts, index):
        self.insts, self.index = insts, index

    def run(self, k, stack, depth, stop=None):
        out, pad, kw = [], "    " * depth, None
        stack = list(stack)
        while k < len(self.insts) and k != stop:
            inst = self.insts[k]
            k += 1
            op, val = inst.opname, inst.argval
            if op in ("RESUME", "NOP", "PRECALL", "COPY_FREE_VARS", "MAKE_CELL", "EXTENDED_ARG", "CACHE"):
                continue
            if op == "KW_NAMES":
                kw = val
            elif op == "PUSH_NULL":
                stack.append(_NULL)
            elif op == "LOAD_GLOBAL":
                if inst.arg & 1:
                    stack.append(_NULL)
                stack.append(val)
            elif op in ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME"):
                stack.append(val)
            elif op == "LOAD_CONST":
                stack.append(_const(val))
            elif op in ("LOAD_ATTR", "LOAD_METHOD"):
                obj = stack.pop()
                if op == "LOAD_METHOD":
                    stack.append(_NULL)
                stack.append(f"{obj}.{val}")
            elif op in ("STORE_FAST", "STORE_DEREF", "STORE_GLOBAL", "STORE_NAME"):
                out.append(f"{pad}{val} = {stack.pop()}")
            elif op == "STORE_ATTR":
                obj, value = stack.pop(), stack.pop()
                out.append(f"{pad}{obj}.{val} = {value}")
            elif op == "STORE_SUBSCR":
                key, obj, value = stack.pop(), stack.pop(), stack.pop()
                out.append(f"{pad}{obj}[{key}] = {value}")
            elif op in ("DELETE_FAST", "DELETE_GLOBAL", "DELETE_DEREF"):
                out.append(f"{pad}del {val}")
            elif op == "CALL":
                stack.append(_call(stack, inst.arg, kw))
                kw = None
            elif op == "CALL_FUNCTION_EX":
                kwargs = stack.pop() if inst.arg & 1 else None
                posargs, fn = stack.pop(), stack.pop()
                if stack and stack[-1] is _NULL:
                    stack.pop()
                extra = f", **{kwargs}" if kwargs else ""
                stack.append(f"{fn}(*{posargs}{extra})")
            elif op == "BINARY_SUBSCR":
                key, obj = stack.pop(), stack.pop()
                stack.append(f"{obj}[{key}]")
            elif op == "BINARY_OP":
                rhs, lhs = stack.pop(), stack.pop()
                stack.append(f"({lhs} {dis._nb_ops[inst.arg][1]} {rhs})")
            elif op in ("COMPARE_OP", "IS_OP", "CONTAINS_OP"):
                rhs, lhs = stack.pop(), stack.pop()
                sym = val if op == "COMPARE_OP" else {
                    "IS_OP": ("is", "is not"), "CONTAINS_OP": ("in", "not in")}[op][inst.arg]
                stack.append(f"({lhs} {sym} {rhs})")
            elif op in _UNARY:
                stack.append(f"({_UNARY[op]}{stack.pop()})")
            elif op.startswith("BUILD_") and op in _BUILDERS:
                stack.append(_BUILDERS[op](stack, inst.arg, val))
            elif op in _MERGES:
                item = stack.pop()
                stack[-inst.arg] = _MERGES[op].format(stack[-inst.arg], item)
            elif op == "LIST_TO_TUPLE":
                stack.append(f"tuple({stack.pop()})")
            elif op == "UNPACK_SEQUENCE":
                seq = stack.pop()
                stack.extend(f"{seq}[{i}]" for i in reversed(range(inst.arg)))
            elif op == "POP_TOP":
                value = stack.pop()
                if "(" in str(value):
                    out.append(f"{pad}{value}")
            elif op == "COPY":
                stack.append(stack[-inst.arg])
            elif op == "SWAP":
                stack[-1], stack[-inst.arg] = stack[-inst.arg], stack[-1]
            elif op == "RETURN_VALUE":
                out.append(f"{pad}return {stack.pop()}")
                return out
            elif op == "MAKE_FUNCTION":
                code_expr = stack.pop()
                for bit in (0x08, 0x04, 0x02, 0x01):
                    if inst.arg & bit:
                        stack.pop()
                stack.append(f"<function from {code_expr}>")
            elif inst.is_jump() and op.startswith(("POP_JUMP", "JUMP_IF")):
                return out + self._branch(inst, k, stack, depth, stop)
            elif op == "JUMP_FORWARD":
                k = self.index[id(inst.target)]
            elif op.startswith("JUMP_BACKWARD"):  # a loop: beyond what generated code does
                out.append(f"{pad}# {op}: loop not decompiled")
                return out
            else:
                out.append(f"{pad}# {op} {'' if val is None else val!r} (not decompiled)")
                stack.append(f"<{op}>")
        return out

    def _branch(self, inst, k, stack, depth, stop):
        pad, op = "    " * depth, inst.opname
        cond = stack.pop()
        keep = op.startswith("JUMP_IF")  # the value stays on the stack on the jump side
        test = {"FALSE": f"not {cond}", "TRUE": f"{cond}", "NONE": f"{cond} is None",
                "NOT_NONE": f"{cond} is not None"}[op.rsplit("_IF_", 1)[1].replace("_OR_POP", "")]
        jumped = self.run(self.index[id(inst.target)], stack + ([cond] if keep else []), depth + 1, stop)
        fall = self.run(k, stack, depth + 1, stop)
        return [f"{pad}if {test}:"] + (jumped or [pad + "    pass"]) + [f"{pad}else:"] + (fall or [pad + "    pass"])


def _const(value):
    if isinstance(value, types.CodeType):
        return f"<code {value.co_name}>"
    return repr(value)


def _call(stack, n, kw):
    args = [stack.pop() for _ in range(n)][::-1]
    fn = stack.pop()
    callee = stack.pop() if stack else _NULL
    if callee is not _NULL:  # method form: [fn, self, args]
        fn, args = callee, [fn] + args
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
