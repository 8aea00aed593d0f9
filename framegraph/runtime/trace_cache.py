"""The persistent trace cache: traced frames kept on disk for the next process.

Opt-in: ``framegraph.config.cache_dir = "/some/dir"`` or the environment
variable ``FRAMEGRAPH_CACHE_DIR`` (read at import). Each traced frame whose
entry can travel (portable.py) is stored as one file::

    <cache_dir>/<key[:2]>/<key>/<digest of the file>.fgc

The key is a digest of the code object's content, the Python, torch and
framegraph versions (framegraph's own source files included, so a changed
compiler never reads an old entry), the compile options and the tracing
settings of ``framegraph.config``. A file holds the entry's guards (identity
guards as descriptions), their compiled check (stored_guard.py: a load binds
it instead of building it), the replacement code, the GraphModule and the
metadata of the graph's inputs.

On a cache miss in the C hook, before tracing, ``load`` reads the files of the
frame's key: each entry's guards are bound to this process and checked on the
frame's inputs; the first that passes gets its graph handed to the backend
(Inductor finds its own FX graph cache) and its code installed as a trace's
would be. No entry passes: the frame is traced, and ``store`` writes the new
entry. An entry another process cannot check (an object without a name pinned
by identity, hooks, dynamic shapes) is not stored. A frame that breaks takes
its resume functions' code along; their own frames are entries of their own.

A file that cannot be read (truncated, corrupt, another format) is removed
with a warning and the frame traced; a stale entry (an edited function, a
module not imported, another object behind a source) is only a miss. Writes
go to a temporary file renamed into place, so a concurrent reader sees a whole
file or none, and two writers of one entry write the same bytes.
"""
import functools
import hashlib
import logging
import os
import sys
import tempfile
import types
from pathlib import Path

import torch

from ..breaks.split import GraphBreak, fresh_resume_name
from ..config import config
from ..errors import CATALOGUE, BackendError
from ..guards.kinds import sources_of
from . import skip
from .cache import arg_names
from .portable import (NotPortable, Stale, code_fingerprint, describe, dumps, export_guards, frame_scope,
                       import_guards, loads)
from .stored_graph import graph_module, graph_state
from .stored_guard import export_check, import_check

log = logging.getLogger("framegraph")

ENV_VAR = "FRAMEGRAPH_CACHE_DIR"
MAGIC = b"framegraph trace cache 1\n"
SUFFIX = ".fgc"
# config settings that do not change what a trace produces
_NOT_TRACING = ("cache_dir", "strict", "recompile_limit", "debug_stack_effect", "check_meta_ops")


def enabled() -> bool:
    """Whether frames are stored and looked up on disk."""
    return bool(config.cache_dir)


@functools.lru_cache(maxsize=1)
def _environment() -> bytes:
    """What every key depends on: the Python and torch versions, and framegraph's own
    source files (its version string among them; the C extensions by their sources),
    each by size and modification time, as a ``.pyc`` checks its source."""
    h = hashlib.sha256(MAGIC)
    h.update(repr((sys.version, torch.__version__)).encode())
    package = Path(__file__).resolve().parent.parent
    stamps = []
    for folder, dirs, files in os.walk(package):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith((".py", ".c", ".h", ".cpp")):
                st = os.stat(os.path.join(folder, name))
                stamps.append((os.path.relpath(os.path.join(folder, name), package), st.st_size, st.st_mtime_ns))
    h.update(repr(sorted(stamps)).encode())
    return h.digest()


def key_of(code, options) -> str:
    """The digest files of ``code`` compiled with ``options`` are stored under.
    Raises NotPortable for options another process cannot name (a lambda backend)."""
    if options.guard_filter_fn is not None:
        raise NotPortable("a guard_filter_fn")
    backend = options.requested if options.requested is not None else options.backend
    settings = tuple((name, getattr(config, name)) for name in config._fields if name not in _NOT_TRACING)
    h = hashlib.sha256(_environment())
    h.update(code_fingerprint(code).encode())
    h.update(dumps((backend, options.backend_name, options.fullgraph, options.dynamic, options.mode,
                    sorted((options.options or {}).items()), settings, _policy())))
    return h.hexdigest()


def _policy() -> tuple:
    """What the program said about callables (allow_in_graph, disallow_in_graph,
    substitute_in_graph): it changes what a trace makes of a call."""
    from ..variables.callables.trace_time import SUBSTITUTES
    from ..variables.tensors.torch_fn import DISALLOWED, IN_GRAPH

    return (sorted(repr(_described(fn)) for fn in IN_GRAPH), sorted(repr(_described(fn)) for fn in DISALLOWED),
            sorted(repr((_described(k), _described(v[0]), v[1])) for k, v in SUBSTITUTES.items()))


def _described(fn):
    description = describe(fn)
    if description is None:
        raise NotPortable(f"{fn!r}, registered with framegraph, has no name another process finds")
    return description


def _folder(key: str) -> Path:
    return Path(config.cache_dir) / key[:2] / key


# ---- storing

def store(func, code, f_locals, compiled, options) -> None:
    """Write the entry of a trace that just finished, if it can travel (else say why, at debug)."""
    try:
        key = key_of(code, options)
        data = _entry_bytes(func, code, f_locals, compiled)
    except NotPortable as e:
        log.debug("framegraph: the trace of %s is not stored: %s", code.co_qualname, e)
        return
    folder = _folder(key)
    path = folder / (hashlib.sha256(data).hexdigest()[:32] + SUFFIX)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        log.warning("framegraph: cannot write the trace cache file %s: %s", path, e)


def _entry_bytes(func, code, f_locals, compiled) -> bytes:
    names = arg_names(code)
    slots = [f_locals.get(name) for name in names]
    guards = compiled.guards.guards
    if any(g.kind == "SHAPE_ENV" for g in guards):
        raise NotPortable("dynamic shapes")
    scope = frame_scope(func, names, slots, _identity_sources(guards))
    readers = {id(r.c): r for r in compiled.input_readers}
    gm = compiled.graph_module
    entry = {
        "files": _file_stamps(compiled.traced_files),
        "constant_results": compiled.constant_results,
        "guards": export_guards(guards, scope),
        "code": compiled.code,
        "fn_name": compiled.compiled_fn_name,
        # the resume functions the code calls: globals by name, or made in the code from its constants
        "resumes": [code for brk in compiled.breaks for code in brk.resume_codes],
        "breaks": [(brk.entry.id, brk.context, brk.frames) for brk in compiled.breaks],  # for diagnostics
        "resume_globals": _resume_globals(func, compiled.code),
        "op_count": compiled.op_count,
        "examples": None if gm is None else _example_specs(gm),
        "check": _check_bytes(compiled.guards),
    }
    body = dumps(entry, readers)
    graph = b""
    if gm is not None:
        try:
            state = graph_state(gm)
        except TypeError as e:
            raise NotPortable(str(e)) from None
        graph = dumps(state)
    return MAGIC + len(body).to_bytes(8, "little") + body + graph


def _check_bytes(guard):
    """The compiled check, for a load to skip the guard build; None where it cannot travel."""
    try:
        return export_check(guard)
    except NotPortable as e:
        log.debug("framegraph: the compiled check is not stored (a load builds it): %s", e)
        return None


def _identity_sources(guards) -> list:
    """The sources portable.py reads in the frame: those of the identity guards."""
    return [s for g in guards if g.kind == "ID_MATCH" for s in sources_of(g)]


def _resume_globals(func, code) -> dict:
    """{global name: resume code} of the resume functions ``code`` loads as globals."""
    out = {}
    for name in code.co_names:
        fn = func.__globals__.get(name) if name.startswith("__resume_") else None
        if isinstance(fn, types.FunctionType):
            out[name] = fn.__code__
    return out


def _file_stamps(files) -> tuple:
    """(path, size, mtime in ns) of each file the trace read code from, as a .pyc checks
    its source: an edited or reinstalled file makes the entry stale."""
    stamps = []
    for name in sorted(files):
        if name.startswith("<"):
            # the interpreter's frozen modules (its version is in the key), or code made by
            # exec (a dataclass's __init__): reached through a guarded function, whose
            # description holds its code's digest
            continue
        try:
            st = os.stat(name)
        except (OSError, ValueError):
            raise NotPortable(f"code from {name!r}, which is not a file") from None
        stamps.append((name, st.st_size, st.st_mtime_ns))
    return tuple(stamps)


def _check_stamps(stamps) -> None:
    for name, size, mtime in stamps:
        try:
            st = os.stat(name)
        except OSError:
            raise Stale(f"{name} is gone") from None
        if (st.st_size, st.st_mtime_ns) != (size, mtime):
            raise Stale(f"{name} changed")


def _check_answers(calls) -> None:
    """The calls a trace answered as constants (functions marked as having a constant
    result for the life of a process) answer the same in this one."""
    for fn, args, kwargs, answer in calls:
        try:
            now = fn(*args, **kwargs)
        except Exception as e:
            raise Stale(f"{fn!r} now raises {type(e).__name__}") from None
        if type(now) is not type(answer) or now != answer:
            raise Stale(f"{fn!r}{args} now answers {now!r}, not {answer!r}")


def _example_specs(gm):
    specs = []
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        value = node.meta.get("example_value")
        if not isinstance(value, torch.Tensor) or any(isinstance(n, torch.SymInt) for n in
                                                        tuple(value.size()) + tuple(value.stride())):
            raise NotPortable(f"graph input {node.name} is not a tensor of static shape")
        specs.append((tuple(value.size()), tuple(value.stride()), value.dtype, str(value.device),
                      value.requires_grad, isinstance(value, torch.nn.Parameter)))
    return specs


# ---- loading

def load(func, code, f_locals, options):
    """The CompiledFrame of a stored entry whose guards pass for this call, or None."""
    try:
        folder = _folder(key_of(code, options))
        paths = sorted(folder.glob("*" + SUFFIX))
    except (NotPortable, OSError):
        return None
    names = arg_names(code)
    slots = [f_locals.get(name) for name in names]
    for path in paths:
        try:
            frame = _try_entry(path, func, code, names, slots, options)
        except Stale as e:
            log.debug("framegraph: trace cache entry %s does not apply: %s", path.name, e)
            continue
        except BackendError as e:  # the entry may be fine: the frame is traced, as without one
            log.warning("framegraph: the backend failed on the stored graph of %s (%s); tracing it",
                        code.co_qualname, e)
            return None
        except Exception as e:  # truncated, corrupt, another format: never the program's problem
            log.warning("framegraph: ignoring unreadable trace cache file %s (%s: %s); it is removed "
                        "and the frame traced again", path, type(e).__name__, e)
            _remove(path)
            continue
        if frame is not None:
            return frame
    return None


def _remove(path):
    try:
        path.unlink()
    except OSError:
        pass


def _try_entry(path, func, code, names, slots, options):
    from ..codegen.finish import CompiledFrame
    from ..graph.dynamic import observe_unmodified_call
    from ..guards.compile import CompiledGuard

    data = path.read_bytes()
    if not data.startswith(MAGIC):
        raise ValueError("not a framegraph trace cache file of this format")
    size = int.from_bytes(data[len(MAGIC):len(MAGIC) + 8], "little")
    start = len(MAGIC) + 8
    if start + size > len(data):
        raise ValueError("truncated")
    entry = loads(data[start:start + size])
    _check_stamps(entry["files"])
    _check_answers(entry["constant_results"])
    guards = entry["guards"]
    scope = frame_scope(func, names, slots, _identity_sources(guards))
    guards = import_guards(guards, scope)
    guard = None if entry["check"] is None else import_check(entry["check"], guards, names)
    if guard is None:
        guard = CompiledGuard(guards, names)
    if not guard.fn(func, *slots):
        return None
    new_code, name, gm = entry["code"], None, None
    compiled_fn = None
    if entry["examples"] is not None:
        gm = graph_module(loads(data[start + size:]))
        compiled_fn, name = _compile_graph(gm, entry["examples"], options, func)
        new_code = _renamed(new_code, entry["fn_name"], name)
    for old, rcode in entry["resume_globals"].items():
        fresh = fresh_resume_name(rcode)
        func.__globals__[fresh] = types.FunctionType(rcode, func.__globals__, rcode.co_name)
        new_code = _renamed(new_code, old, fresh)
    for rcode in entry["resumes"]:
        skip.add_user_root(rcode)  # the rest of the frame is traced, wherever it lives
    # the sizes a trace would have recorded: a later recompile for new sizes makes them
    # dynamic, as after a trace (graph/dynamic.py)
    observe_unmodified_call(code, dict(zip(names, slots)), names)
    frame = CompiledFrame(guard.fn, guard, new_code, code, gm, name, entry["op_count"], compiled_fn)
    # the breaks as the trace saw them, for records, explain() and the graph_breaks log
    frame.breaks = [GraphBreak(CATALOGUE[entry_id], context, frames, resume_codes=list(entry["resumes"]))
                    for entry_id, context, frames in entry["breaks"]]
    for brk in frame.breaks:
        brk.log_once()
    return frame


def _compile_graph(gm, specs, options, func):
    from ..codegen.finish import fresh_compiled_name, run_untraced
    from ..graph.output_graph import call_backend
    from torch._subclasses.fake_tensor import FakeTensorMode

    examples = []
    for size, stride, dtype, device, requires_grad, is_param in specs:
        t = torch.empty_strided(size, stride, dtype=dtype, device=device)
        t = torch.nn.Parameter(t, requires_grad) if is_param else t.requires_grad_(requires_grad)
        examples.append(t)
    compiled = call_backend(options, gm, examples, FakeTensorMode())
    name = fresh_compiled_name()
    func.__globals__[name] = run_untraced(compiled)
    return compiled, name


def _renamed(code, old, new):
    return code.replace(co_names=tuple(new if n == old else n for n in code.co_names))

