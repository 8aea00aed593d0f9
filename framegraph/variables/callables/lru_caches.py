"""A ``functools.lru_cache`` wrapper made in the trace (``_lru_cache_wrapper``, the C type).

``functools.lru_cache(maxsize)(fn)`` inside the frame makes a wrapper whose
cache starts empty, so the trace knows its whole content: each call is a hit
or a miss exactly as in ``_functoolsmodule.c``. A key is built from constant
arguments as ``lru_cache_make_key`` builds it (``functools._make_key``, the
same tuple of arguments, keyword names and, with ``typed``, types). A miss
traces the wrapped function and keeps the result's tracker; a hit hands that
same tracker back, so ``scale(2) is scale(2)`` holds as in eager, and
``cache_info()`` counts as the C counters do. A bounded cache evicts its least
recently used entry when a miss finds it full, and does not store a key that
the call itself stored meanwhile (a recursive call).

After the graph the wrapper is rebuilt only while its cache is still empty
and uncounted (``_lru_cache_wrapper(fn, maxsize, typed, _CacheInfo)`` and its
``__dict__``): a cache with entries cannot be filled from outside without
calling the function again, so a wrapper that outlives the trace with entries
is a graph break.
"""
import collections
import functools

from ...errors import unsupported
from ..containers.dicts import ConstDictVariable
from ..core.base import VariableTracker
from ..core.constant import ConstantVariable
from ..core.exceptions import raise_in_trace


class LruCacheMadeVariable(VariableTracker):
    """The wrapper: the function's tracker, the cache parameters, entries in LRU order."""

    def __init__(self, fn, maxsize, typed, cache_info_type, **kwargs):
        super().__init__(**kwargs)
        self.fn, self.maxsize, self.typed, self.cache_info_type = fn, maxsize, typed, cache_info_type
        self.entries = collections.OrderedDict()  # key -> result tracker, least recent first
        self.hits = self.misses = 0
        self.dict_var = ConstDictVariable([])  # its __dict__: what update_wrapper copies in

    def python_type(self):
        return functools._lru_cache_wrapper

    def call(self, tx, args, kwargs):
        key = self._key(list(args), dict(kwargs))
        if self.maxsize != 0 and key in self.entries:
            self.hits += 1
            self.entries.move_to_end(key)
            return self.entries[key]
        self.misses += 1
        result = self.fn.call(tx, args, kwargs)
        if self.maxsize == 0 or key in self.entries:  # the call stored the key itself: kept as it is
            return result
        if self.maxsize is not None and len(self.entries) >= self.maxsize:
            self.entries.popitem(last=False)
        self.entries[key] = result
        return result

    def _key(self, args, kwargs):
        values = args + list(kwargs.values())
        if not all(v.is_python_constant() for v in values):
            unsupported("unsupported_call", "an lru_cache wrapper made in the trace, called with "
                                            "arguments that are not constants")
        consts = [v.as_python_constant() for v in args]
        kw = {k: v.as_python_constant() for k, v in kwargs.items()}
        try:
            return functools._make_key(tuple(consts), kw, self.typed)
        except TypeError as e:  # an unhashable argument: the wrapper's own TypeError
            raise_in_trace(TypeError, str(e))

    def getattr(self, tx, name):
        if name == "cache_info":
            return _Method(self, name, lambda: ConstantVariable(self.cache_info_type(
                self.hits, self.misses, self.maxsize, len(self.entries))))
        if name == "cache_clear":
            return _Method(self, name, self._clear)
        if name == "__dict__":
            return self.dict_var
        key = ConstantVariable(name)
        if self.dict_var.contains(tx, key):
            return self.dict_var.getitem(tx, key)
        unsupported("unsupported_attribute", f"{name} of an lru_cache wrapper made in the trace")

    def _clear(self):
        self.entries.clear()
        self.hits = self.misses = 0
        return ConstantVariable(None)

    def setattr(self, tx, name, value):
        self.dict_var.setitem(tx, ConstantVariable(name), value)

    def reconstruct(self, cg):
        if self.entries or self.hits or self.misses:
            unsupported("graph_output", "an lru_cache wrapper made in the trace, outliving it with "
                                        "calls counted in its cache")
        names = [k.as_python_constant() for k in self.dict_var.keys_vars()]
        values = [v for _, v in self.dict_var.items.values()]
        cg.call_const(rebuild_lru_wrapper, [self.fn, ConstantVariable(self.maxsize), ConstantVariable(self.typed),
                                            ConstantVariable(self.cache_info_type), ConstantVariable(tuple(names))]
                      + values)

    def __repr__(self):
        return f"LruCacheMadeVariable({self.fn!r}, maxsize={self.maxsize})"


class _Method(VariableTracker):
    """``wrapper.cache_info`` / ``wrapper.cache_clear``: bound, taking no arguments."""

    def __init__(self, wrapper, name, run, **kwargs):
        super().__init__(**kwargs)
        self.wrapper, self.name, self.run = wrapper, name, run

    def call(self, tx, args, kwargs):
        if args or kwargs:
            raise_in_trace(TypeError, f"_lru_cache_wrapper.{self.name}() takes no arguments")
        return self.run()

    def reconstruct(self, cg):
        unsupported("graph_output", f"the bound {self.name} of an lru_cache wrapper made in the trace")


def rebuild_lru_wrapper(fn, maxsize, typed, cache_info_type, names, *values):
    """The real wrapper of one made in the trace whose cache is still empty."""
    wrapper = functools._lru_cache_wrapper(fn, maxsize, typed, cache_info_type)
    wrapper.__dict__.update(zip(names, values))
    return wrapper


def make_lru_wrapper(tx, user_function, maxsize, typed, cache_info_type, **kwargs):
    """``_lru_cache_wrapper(user_function, maxsize, typed, cache_info_type)``, as
    ``functools.lru_cache``'s decorating function calls it (lru_cache_new's checks)."""
    if kwargs:
        raise_in_trace(TypeError, "_lru_cache_wrapper() takes no keyword arguments")
    if not all(v.is_python_constant() for v in (maxsize, typed, cache_info_type)):
        unsupported("unsupported_call", "an lru_cache wrapper whose parameters are not constants")
    size = maxsize.as_python_constant()
    if size is not None and not isinstance(size, int):
        raise_in_trace(TypeError, "maxsize should be integer or None")
    return LruCacheMadeVariable(user_function, None if size is None else max(size, 0),
                                bool(typed.as_python_constant()), cache_info_type.as_python_constant())


MODELS = {functools._lru_cache_wrapper: make_lru_wrapper}
