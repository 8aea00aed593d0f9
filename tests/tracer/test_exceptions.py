"""Exceptions raised by traced Python operations and caught in the same trace.

Each test body is the traced function; the compiled result equals eager's,
and the graph counts say nothing broke (``check`` compiles with
``fullgraph=True``). An exception that escapes the compiled frame is raised by
CPython for real: same type, same message.
"""
import pytest
import torch

import framegraph
from helpers import CountingBackend, assert_same, check, check_breaks, run_counted


# ---- the operations that raise
def test_zero_division_on_constants_is_caught():
    def f(x):
        try:
            scale = 1 / 0
        except ZeroDivisionError as e:
            scale, why = 2, str(e)
        return x * scale, why

    check(f, torch.ones(3), ops=1)


def test_config_lookup_falls_back_to_a_default_on_key_error():
    def f(x, cfg):
        try:
            eps = cfg["eps"]
        except KeyError:
            eps = 1e-5
        return x + eps

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    for cfg in ({"hidden": 4}, {"eps": 0.5}, {"other": 1}):
        assert_same(compiled(torch.ones(2), cfg), f(torch.ones(2), cfg))
    assert cnt.frame_count == 2  # 'eps' in cfg or not: one graph each (guarded)


def test_key_error_of_a_dict_made_in_the_trace_keeps_its_key():
    def f(x):
        d = {"a": 1}
        try:
            d["b"]
        except KeyError as e:
            return x + 1, e.args, str(e), repr(e)

    check(f, torch.ones(2))


def test_index_error_and_its_message():
    def f(x, xs):
        try:
            y = xs[5]
        except IndexError as e:
            y, why = x, str(e)
        return y * 2, why, ("a", "b")[1:]

    check(f, torch.ones(2), [torch.ones(2)])


def test_eafp_attribute_access_on_an_object_from_outside():
    class Config:
        def __init__(self):
            self.hidden = 3

    def f(x, cfg):
        why = ""
        try:
            dropout = cfg.dropout
        except AttributeError as e:
            dropout, why = 0.0, str(e)
        return x * cfg.hidden + dropout, why

    cfg = Config()
    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    assert_same(compiled(torch.ones(2), cfg), f(torch.ones(2), cfg))
    cfg.dropout = 0.5  # the attribute appears: the guard on its absence fails
    assert_same(compiled(torch.ones(2), cfg), f(torch.ones(2), cfg))
    assert cnt.frame_count == 2


def test_getattr_and_hasattr_with_a_missing_attribute_of_none():
    def f(x, cache):
        compileable = getattr(cache, "is_compileable", False)
        return x + 1, compileable, hasattr(cache, "is_compileable")

    check(f, torch.ones(2), None)


def test_stop_iteration_from_next_ends_a_manual_loop():
    def f(x):
        it = iter([1, 2, 3])
        total = 0
        while True:
            try:
                total += next(it)
            except StopIteration:
                break
        return x * total

    check(f, torch.ones(2))


def test_type_and_value_errors_of_conversions():
    def f(x, values):
        parsed = []
        for v in values:
            try:
                parsed.append(int(v))
            except ValueError as e:
                parsed.append(str(e))
        try:
            "n=" + 1
        except TypeError as e:
            parsed.append(str(e))
        return x + len(parsed), parsed

    check(f, torch.ones(2), ["1", "x", "3"])


def test_min_of_an_empty_sequence_raises_value_error():
    def f(x):
        try:
            return x * min([])
        except ValueError as e:
            return x + 1, str(e)

    check(f, torch.ones(2))


# ---- raise, handlers and chaining
def test_user_raise_in_an_inlined_helper_is_caught_by_the_caller():
    def lookup(table, name):
        try:
            return table[name]
        except KeyError:
            raise LookupError(f"no layer named {name!r}")

    def f(x):
        try:
            return x + lookup({"a": 1}, "b")
        except LookupError as e:
            return x - 1, str(e), type(e.__context__).__name__

    check(f, torch.ones(2), ops=1)


def test_except_tuple_as_e_reads_args_str_and_type():
    def f(x):
        out = []
        for key in ("k", 7):
            try:
                {}[key] if key == "k" else [][key]
            except (IndexError, KeyError) as e:
                out.append((type(e).__name__, e.args, str(e), isinstance(e, LookupError)))
        return x + 1, out

    check(f, torch.ones(2))


def test_else_finally_and_nested_try_run_in_order():
    def f(x):
        log = []
        for d in ({"a": 1}, {}):
            try:
                try:
                    v = d["a"]
                except KeyError:
                    log.append("inner except")
                    raise
                else:
                    log.append("else")
                finally:
                    log.append("inner finally")
            except KeyError:
                log.append("outer except")
                v = 0
            finally:
                log.append("outer finally")
            x = x + v
        return x, log

    check(f, torch.ones(2))


def test_raise_from_sets_cause_and_context_is_the_handled_exception():
    def f(x):
        try:
            try:
                1 / 0
            except ZeroDivisionError as e:
                raise ValueError("bad scale") from e
        except ValueError as e:
            explicit = (type(e.__cause__).__name__, e.__suppress_context__, e.__context__ is e.__cause__)
        try:
            try:
                [][0]
            except IndexError:
                int("q")
        except ValueError as e:
            implicit = (str(e), type(e.__context__).__name__, e.__cause__, e.__suppress_context__)
        return x * 2, explicit, implicit

    check(f, torch.ones(2))


def test_return_inside_finally_path_keeps_the_value():
    def f(x):
        try:
            return x + 1
        finally:
            x = x * 10

    check(f, torch.ones(2))


def test_an_exception_raised_and_caught_inside_no_grad():
    def f(x):
        with torch.no_grad():
            try:
                factor = float("2.5x")
            except ValueError:
                factor = 2.5
            y = x * factor
        return y

    check(f, torch.ones(2, requires_grad=True))


# ---- what escapes the compiled frame is raised by CPython
def _raised(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 (the test compares what escapes)
        return type(e), str(e)
    raise AssertionError("expected an exception")


def test_an_escaping_key_error_is_raised_by_cpython_after_the_graph():
    def f(x, cfg):
        y = x + 1
        return y * cfg["missing"]

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    assert _raised(compiled, torch.ones(2), {"a": 1}) == _raised(f, torch.ones(2), {"a": 1})
    assert cnt.frame_count == 1  # x + 1, then the lookup runs (and raises) in CPython


def test_an_exception_no_handler_matches_escapes_from_where_it_was_raised():
    def f(x):
        y = x * 2
        try:
            v = {}["k"]
        except IndexError:
            v = 1
        return y + v

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    assert _raised(compiled, torch.ones(2)) == _raised(f, torch.ones(2))
    assert cnt.frame_count == 1


def test_a_graph_break_inside_an_except_block_replays_the_raise_in_cpython():
    def f(x, log):
        y = x + 1
        try:
            v = {}["k"]
        except KeyError:
            log.append("default")  # fine in the trace
            print("using the default")  # a graph break: CPython runs from the lookup on
            v = 2
        return y * v

    check_breaks(f, lambda: (torch.ones(2), []), graphs=1, breaks=1)


def test_fullgraph_reports_an_escaping_exception_as_a_break():
    def f(x):
        return x + {}["k"]

    with pytest.raises(framegraph.Unsupported, match="KeyError escapes"):
        framegraph.compile(f, backend=CountingBackend(), fullgraph=True)(torch.ones(2))


def test_a_generator_that_raises_is_not_run_ahead():
    def gen(n):
        yield n
        raise KeyError("late")

    def f(x, log):
        try:
            for v in gen(1):
                log.append(v)
        except KeyError:
            log.append("caught")
        return x + 1

    result, cnt, breaks, errors = run_counted(f, torch.ones(2), log := [])
    assert_same(result, f(torch.ones(2), expected := []))
    assert log == expected == [1, "caught"]
    # the body runs lazily: the KeyError comes at the second next(), after the append
    assert not breaks and not errors and cnt.frame_count == 1


def test_context_of_an_exception_raised_with_none_handled_is_the_callers():
    def f(x):
        y = x + 1
        try:
            {}["k"]
        except KeyError as e:
            return y, type(e.__context__).__name__

    def call_while_handling(fn):
        try:
            raise ValueError("outer")
        except ValueError:
            return fn(torch.ones(2))

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt)
    assert_same(call_while_handling(compiled), call_while_handling(f))  # ("ValueError")
    assert_same(compiled(torch.ones(2)), f(torch.ones(2)))  # ("NoneType")
    assert cnt.frame_count == 1  # y = x + 1; from the lookup on CPython knows the context


# ---- what raise and except refuse, and the exceptions whose constructor parses its arguments
def test_raising_what_is_not_an_exception_is_a_type_error_in_the_trace():
    def f(x):
        messages = []
        for bad in (5, "error", (IndexError, KeyError), [ValueError]):
            try:
                raise bad
            except TypeError as e:
                messages.append(str(e))
        try:
            raise IndexError from 5
        except TypeError as e:
            messages.append(str(e))
        return x + 1, messages

    check(f, torch.ones(2))


def test_an_except_clause_naming_a_non_exception_raises_type_error():
    def f(x):
        try:
            try:
                raise ValueError
            except (ValueError, 42):
                pass
        except TypeError as e:
            return x + 1, str(e), type(e.__context__).__name__

    check(f, torch.ones(2))


def test_chaining_fields_written_by_the_user():
    def f(x):
        out = []
        try:
            raise ValueError("a")
        except ValueError as e:
            e.__suppress_context__ = True
            out.append(e.__suppress_context__)
            e.__cause__ = KeyError("k")       # BaseException's setter also suppresses the context
            out += [repr(e.__cause__), e.__suppress_context__]
            e.__cause__ = None
            out.append(e.__cause__)
            try:
                e.__context__ = 3
            except TypeError as err:
                out.append(str(err))
        return x * 2, out

    check(f, torch.ones(2))


def test_a_context_cycle_made_by_the_user_does_not_hang_the_trace():
    def f(x):
        try:
            try:
                raise ValueError(1)
            except ValueError as ex:
                ex.__context__ = ex
                raise TypeError(2)
        except TypeError as e:
            return x + 1, type(e.__context__).__name__, e.__context__.__context__ is e.__context__

    check(f, torch.ones(2))


def test_os_error_picks_its_subclass_from_the_errno_as_in_cpython():
    import errno

    def f(x, name):
        try:
            raise OSError(errno.ENOENT, "no such file", name)
        except FileNotFoundError as e:
            return x + 1, type(e).__name__, e.errno, e.strerror, e.filename, e.args, str(e)

    check(f, torch.ones(2), "weights.bin")


def test_an_os_error_made_in_the_trace_is_rebuilt_with_its_fields():
    def f(x):
        return x + 1, OSError(13, "denied", "a.txt"), OSError("plain"), UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad")

    cnt = CountingBackend()
    out = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    expected = f(torch.ones(2))
    assert cnt.frame_count == 1
    for got, want in zip(out[1:], expected[1:]):
        assert type(got) is type(want) and got.args == want.args and str(got) == str(want)
    assert out[1].filename == "a.txt"


# ---- user exception classes: a Python __init__, attributes, __str__
class ConfigError(ValueError):
    """What a library raises for a bad config key: a message and fields for the handler."""

    def __init__(self, key, hint=""):
        super().__init__(f"bad key {key!r}")
        self.key, self.hint = key, hint

    def __str__(self):
        return f"{self.args[0]} ({self.hint})"


def test_a_user_exception_with_a_python_init_is_raised_and_caught_in_the_trace():
    def f(x, cfg):
        try:
            if "eps" not in cfg:
                raise ConfigError("eps", hint="add it")
            eps = cfg["eps"]
        except ConfigError as e:
            eps, why = 1e-5, (str(e), repr(e), e.key, e.hint, e.args)
        return x + eps, why

    check(f, torch.ones(2), {})


def test_user_exception_init_styles_and_attributes_written_by_the_handler():
    class Old(Exception):
        def __init__(self, a, b):
            Exception.__init__(self, a)      # the explicit base call, as older code writes it
            self.b = b

    class NoSuper(Exception):
        def __init__(self, a, b):            # never calls the base: args stay what it was called with
            self.total = a + b

    class Plain(Exception):
        code = 7

    def f(x):
        out = [Old(1, 2).args, Old(1, 2).b, NoSuper(1, 2).args, NoSuper(1, 2).total]
        try:
            raise Plain("p", 2)
        except Exception as e:
            e.extra = 5
            out += [e.args, e.code, e.extra, str(e), repr(e), hasattr(e, "extra"), hasattr(e, "nope")]
        try:
            Plain(a=1)
        except TypeError as e:
            out.append(str(e))
        return x * 2, out

    check(f, torch.ones(2))


def test_a_user_exception_made_in_the_trace_is_rebuilt_with_its_fields():
    def f(x):
        return x + 1, ConfigError("lr", "positive")

    cnt = CountingBackend()
    out, err = framegraph.compile(f, backend=cnt, fullgraph=True)(torch.ones(2))
    assert cnt.frame_count == 1
    assert type(err) is ConfigError and (err.key, err.hint, err.args) == ("lr", "positive", ("bad key 'lr'",))
    assert str(err) == "bad key 'lr' (positive)"
