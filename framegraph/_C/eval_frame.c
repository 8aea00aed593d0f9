/*
 * framegraph._C: the PEP 523 frame hook, the per-code cache and the guard loop.
 *
 * With source_reader.c, the only C in framegraph (tensor_check.cpp is the one
 * C++ file). It decides nothing: Python decides what to trace, what to skip
 * and what the guards check. This file only makes the decisions cheap and
 * safe:
 *
 *   - The eval-frame function is installed only while at least one thread has
 *     a callback (an installed hook stops 3.11 from inlining Python-to-Python
 *     calls, so it costs every call in every thread).
 *   - Each code object carries one co_extra slot: NULL (never seen), SKIP,
 *     SKIP_RECURSIVE, or an ExtraState holding the cache entries.
 *   - A cache entry is (guard, code). The guard is called with the function
 *     and the frame's argument slots, never a locals dict (a dict costs about
 *     100 ns per call). A hit runs the entry's code by *re-call*: a function
 *     object on the replacement code, with the original closure and globals,
 *     is vectorcalled with the original argument slots, so CPython builds,
 *     links and clears the new frame itself; nothing here mirrors unexported
 *     CPython internals.
 *
 * Facts and pitfalls behind every rule here: shared/hook.md.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030E0000
#error "framegraph._C supports CPython 3.11, 3.12 and 3.13 (see shared/hook.md section 6)"
#endif

#include <pthread.h>
#include <stdint.h>

#define Py_BUILD_CORE
#include <internal/pycore_frame.h>
#if PY_VERSION_HEX >= 0x030D0000
#include <internal/pycore_ceval.h> /* _PyEval_FrameClearAndPop, exported from 3.13 */
#endif
#undef Py_BUILD_CORE

#include "source_reader.h"

/* ------------------------------------------------------------------------
 * Version-specific frame access. A port to another CPython changes these
 * only (hook.md section 6).
 * ------------------------------------------------------------------------ */

#if PY_VERSION_HEX >= 0x030D0000
/* 3.13: f_executable is the code object for every frame the hook is given. */
static inline PyCodeObject *frame_code(_PyInterpreterFrame *f) { return (PyCodeObject *)f->f_executable; }
#else
static inline PyCodeObject *frame_code(_PyInterpreterFrame *f) { return f->f_code; }
#endif
#if PY_VERSION_HEX >= 0x030C0000
static inline PyFunctionObject *frame_func(_PyInterpreterFrame *f) { return (PyFunctionObject *)f->f_funcobj; }
#else
static inline PyFunctionObject *frame_func(_PyInterpreterFrame *f) { return f->f_func; }
#endif
static inline PyObject **frame_slots(_PyInterpreterFrame *f) { return f->localsplus; }
static inline int frame_is_generator(_PyInterpreterFrame *f) {
    return f->owner == FRAME_OWNED_BY_GENERATOR;
}
static inline int thread_is_tracing(PyThreadState *ts) { return ts->tracing > 0; }

#if PY_VERSION_HEX >= 0x030C0000
/* 3.12 and 3.13 charge each entry into the evaluator two units of
 * c_recursion_remaining (PY_EVAL_C_STACK_UNITS); a call CPython inlines charges
 * none, and with a hook installed it inlines none. Measured with every code
 * SKIP: recursion stopped at 747 frames on 3.12.1 (C_RECURSION_LIMIT 1500) and
 * at 4997 on 3.13.0 (10000), where eager reaches the recursion limit. */
#define NESTED_EVAL_C_UNITS 2
static inline void refund_c_units(PyThreadState *ts) { ts->c_recursion_remaining += NESTED_EVAL_C_UNITS; }
static inline void charge_c_units(PyThreadState *ts) { ts->c_recursion_remaining -= NESTED_EVAL_C_UNITS; }
/* Python frames the thread is deep in, as the recursion limit counts them. */
static inline int python_depth(PyThreadState *ts) { return ts->py_recursion_limit - ts->py_recursion_remaining; }
#else
/* 3.11 counts one recursion_remaining per Python frame, nested or inlined:
 * the hook changes nothing there (measured). */
static inline void refund_c_units(PyThreadState *ts) {}
static inline void charge_c_units(PyThreadState *ts) {}
static inline int python_depth(PyThreadState *ts) { return ts->recursion_limit - ts->recursion_remaining; }
#endif

/* 3.12 renamed the co_extra API (the old names remain as deprecated aliases). */
#if PY_VERSION_HEX >= 0x030C0000
#define code_set_extra PyUnstable_Code_SetExtra
#define request_code_extra_index PyUnstable_Eval_RequestCodeExtraIndex
#else
#define code_set_extra _PyCode_SetExtra
#define request_code_extra_index _PyEval_RequestCodeExtraIndex
#endif

/* co_extra, read in place: the holder's layout is private to codeobject.c but
 * has been {ce_size, ce_extras[]} from 3.6 through 3.13, and the exported
 * getter costs a call on every frame the hook sees. Writes go through the API. */
typedef struct {
    Py_ssize_t ce_size;
    void *ce_extras[1];
} code_extra_holder;

static inline void *read_code_extra(PyCodeObject *co, Py_ssize_t index) {
    code_extra_holder *h = (code_extra_holder *)co->co_extra;
    return (h == NULL || index < 0 || index >= h->ce_size) ? NULL : h->ce_extras[index];
}

#if PY_VERSION_HEX >= 0x030D0000
static void clear_and_pop(PyThreadState *ts, _PyInterpreterFrame *f) { _PyEval_FrameClearAndPop(ts, f); }
#elif PY_VERSION_HEX >= 0x030C0000
/* 3.12 exports neither _PyFrame_ClearExceptCode nor _PyThreadState_PopFrame.
 * For a frame that never ran they reduce to this: no frame object exists
 * (the frame was never linked, so nothing could ask for one), the stack is
 * empty (stacktop == co_nlocalsplus), and the frame is the top of the thread's
 * data stack (the re-called frame above it is gone by now). */
static void clear_and_pop(PyThreadState *ts, _PyInterpreterFrame *f) {
    for (int i = 0; i < f->stacktop; i++)
        Py_CLEAR(f->localsplus[i]);
    Py_CLEAR(f->f_locals);
    Py_CLEAR(f->f_funcobj);
    Py_CLEAR(f->f_code);
    /* Popping happens after the decrefs above: a finaliser they run pushes
     * its frames above f, and they are gone again when it returns. */
    PyObject **base = (PyObject **)f;
    _PyStackChunk *chunk = ts->datastack_chunk;
    if (base == &chunk->data[0]) {
        /* f opened this chunk: free it and go back to the previous one (the
         * root chunk is never popped, so `previous` exists). */
        _PyStackChunk *previous = chunk->previous;
        ts->datastack_top = &previous->data[previous->top];
        ts->datastack_chunk = previous;
        ts->datastack_limit = (PyObject **)(((char *)previous) + previous->size);
        PyObjectArenaAllocator arena;
        PyObject_GetArenaAllocator(&arena);
        arena.free(arena.ctx, chunk, chunk->size);
    } else {
        ts->datastack_top = base;
    }
}
#else
/* 3.11: _PyEval_Vector clears and pops the frame after the hook returns. */
static void clear_and_pop(PyThreadState *ts, _PyInterpreterFrame *f) {}
#endif

/* The frame was not given to the evaluator (a re-call ran instead, or an
 * error): from 3.12 on the hook owns its clean-up. Returns `res`. */
static PyObject *done_unrun(PyThreadState *ts, _PyInterpreterFrame *f, PyObject *res) {
    clear_and_pop(ts, f);
    return res;
}

/* The number of argument slots: positional, keyword-only, *args, **kwargs. */
static inline Py_ssize_t code_nargs(PyCodeObject *co) {
    return co->co_argcount + co->co_kwonlyargcount +
           ((co->co_flags & CO_VARARGS) ? 1 : 0) +
           ((co->co_flags & CO_VARKEYWORDS) ? 1 : 0);
}

#define NEVER_INTERCEPT (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)

/* ------------------------------------------------------------------------
 * Module state. One interpreter, loaded once (a second load is refused).
 * ------------------------------------------------------------------------ */

#define MARK_SKIP ((void *)1)
#define MARK_SKIP_RECURSIVE ((void *)2)
#define IS_STATE(p) ((uintptr_t)(p) > 2)

static Py_ssize_t extra_index = -1;
static _PyFrameEvalFunction chained_eval = NULL; /* what we chain to while installed */
static int chains_to_other = 0; /* chained_eval is not the default evaluator */
static int installed = 0;
/* set_stance("force_eager"): compiled calls set no callback, so nothing is
 * traced and no cache entry runs. Read once per compiled call, not per frame. */
static int force_eager = 0;

static Py_ssize_t threads_with_callback = 0;
static Py_ssize_t cache_limit = 8;
static PyObject *limit_hook = NULL;     /* called once with a code that hits the limit */
static PyObject *skip_sentinel = NULL;
static PyObject *skip_recursive_sentinel = NULL;
static PyObject *memo_key = NULL; /* "__framegraph_memo__" */
static int module_loaded = 0;

/* Thread-local, in one struct so that a function finds it with one lookup. */
static _Thread_local struct {
    PyObject *callback;           /* a strong reference, or NULL */
    int busy;                     /* guards or the callback run: the hook stands aside */
    _PyInterpreterFrame *handed;  /* the frame last handed to a chained evaluator (not the default) */
    uintptr_t stack_floor;        /* see stack_is_low */
} tl = {NULL, 0, NULL, UINTPTR_MAX};

/* Hand-over. A vectorcall borrows its arguments: the caller keeps them until
 * the callee returns, where CPython's own inlined calls move them into the new
 * frame. So an object the callee drops (`x = None`, `del x`, a value it never
 * reads again) would outlive it. Where framegraph itself makes the call (the
 * re-call of a compiled frame, the call of a resume function), the caller's
 * array is set here just before the call; the callee's frame has taken its own
 * references by the time it reaches the hook, which drops the caller's then. A
 * call that never reaches the hook leaves the array alone (the caller resets it).
 * Not thread-local: set and consumed under the GIL with no Python code, and so
 * no switch of thread, in between (building a frame runs none), and a global
 * costs no TLS lookup on every hit. */
static PyObject **handover = NULL; /* references the next frame to start holds too */
static Py_ssize_t handover_n = 0;

static Py_NO_INLINE void release_handover(void) {
    PyObject **refs = handover;
    Py_ssize_t n = handover_n;
    handover = NULL; /* first: a finaliser run below starts frames (and hand-overs) of its own */
    for (Py_ssize_t i = 0; i < n; i++)
        Py_CLEAR(refs[i]);
}

/* The default evaluator, nested in C as every call through a hook is. The C
 * units it charges are refunded, so that recursion under the hook reaches the
 * recursion limit as eager's inlined calls do; the C stack itself is watched
 * by fg_eval_frame instead (stack_is_low). */
static inline PyObject *eval_default(PyThreadState *ts, _PyInterpreterFrame *f, int throwflag) {
    refund_c_units(ts);
    PyObject *res = _PyEval_EvalFrameDefault(ts, f, throwflag);
    charge_c_units(ts);
    return res;
}

/* Run `f` with the evaluator we chain to. Another evaluator installed before us
 * can chain back to us: torch 2.13 leaves its shim installed after a failed
 * compile (we chain to it), and its next torch.compile installs it again over
 * us with us as *its* previous one. Handing the frame on would then send it
 * round the two hooks forever. Where that evaluator owns the slot it has had
 * the frame already; otherwise a frame that comes back to us (`tl.handed`,
 * checked in fg_eval_frame) has been round once. Either way the default
 * evaluator runs it. */
static Py_NO_INLINE PyObject *hand_on(PyThreadState *ts, _PyInterpreterFrame *f, int throwflag) {
    _PyFrameEvalFunction next = chained_eval;
    if (next == _PyInterpreterState_GetEvalFrameFunc(ts->interp))
        return eval_default(ts, f, throwflag);
    _PyInterpreterFrame *outer = tl.handed;
    tl.handed = f;
    PyObject *res = next(ts, f, throwflag);
    tl.handed = outer;
    return res;
}

static inline PyObject *prev_eval(PyThreadState *ts, _PyInterpreterFrame *f, int throwflag) {
    return chains_to_other ? hand_on(ts, f, throwflag) : eval_default(ts, f, throwflag);
}

/* ------------------------------------------------------------------------
 * CacheEntry: (guard, code) plus the memoised function used for re-call.
 * ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *guard;        /* guard(func, *slots) -> bool */
    PyObject *code;         /* all-positional replacement code, marked SKIP */
    PyObject *owner;        /* the callback that made this entry */
    Py_ssize_t hits;
} CacheEntry;

static void entry_dealloc(CacheEntry *e) {
    Py_XDECREF(e->guard);
    Py_XDECREF(e->code);
    Py_XDECREF(e->owner);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

static PyTypeObject CacheEntryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "framegraph._C.CacheEntry",
    .tp_basicsize = sizeof(CacheEntry),
    .tp_dealloc = (destructor)entry_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One cached (guard, code) pair of a code object.",
};

/* ExtraState lives in co_extra, which holds one reference to it. It is an
 * object so that the hook and add_entry() can hold it across Python calls: a
 * guard, the callback, a finaliser run by the garbage collector, or freeing an
 * old entries tuple may reset() the code and drop co_extra's reference, and a
 * held state is then merely detached (what is written to it is lost, nothing
 * is freed under us). `entries` is an immutable tuple replaced copy-on-write,
 * so a loop over a snapshot never sees it change. */
typedef struct {
    PyObject_HEAD
    PyObject *entries; /* owned: tuple of CacheEntry, newest or last hit first */
    int ncompiled;
    int run_only;
} ExtraState;

static void state_dealloc(ExtraState *s) {
    Py_CLEAR(s->entries); /* NULL first: freeing entries runs arbitrary code */
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyTypeObject ExtraStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "framegraph._C.ExtraState",
    .tp_basicsize = sizeof(ExtraState),
    .tp_dealloc = (destructor)state_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The cache of one code object (lives in its co_extra slot).",
};

/* co_extra's freefunc: drops the slot's reference (code dealloc, or a
 * _PyCode_SetExtra over it). Called with the GIL held. */
static void free_extra(void *p) {
    if (IS_STATE(p))
        Py_DECREF((PyObject *)p);
}

/* Borrowed: the slot's value (a mark, NULL, or a state co_extra owns). Hold a
 * state (Py_INCREF) before calling anything that can run Python code. */
static inline void *get_extra(PyCodeObject *co) { return read_code_extra(co, extra_index); }

/* Store `p` (a mark or NULL; a state's reference is stolen) in co's slot. */
static int set_extra(PyCodeObject *co, void *p) {
    /* _PyCode_SetExtra frees the old value through free_extra, which may
     * drop the last reference to objects whose finalisers touch `co`. */
    Py_INCREF(co);
    int r = code_set_extra((PyObject *)co, extra_index, p);
    Py_DECREF(co);
    return r;
}

/* New reference to co's state, made (empty) if the slot holds none. */
static ExtraState *get_or_make_state(PyCodeObject *co) {
    void *p = get_extra(co);
    if (IS_STATE(p))
        return (ExtraState *)Py_NewRef((PyObject *)p);
    ExtraState *s = PyObject_New(ExtraState, &ExtraStateType);
    if (s == NULL)
        return NULL;
    s->entries = PyTuple_New(0); /* the empty tuple: no allocation, no GC */
    s->ncompiled = 0;
    s->run_only = 0;
    if (s->entries == NULL) {
        Py_DECREF(s);
        return NULL;
    }
    Py_INCREF(s); /* one for the slot (stolen by set_extra), one returned */
    if (set_extra(co, s) < 0) {
        Py_DECREF(s);
        Py_DECREF(s);
        return NULL;
    }
    return s;
}

/* Install `t` (stolen) as s's entries. The old tuple is released only after
 * the state is consistent again: its entries' guards may have finalisers. */
static void replace_entries(ExtraState *s, PyObject *t) {
    PyObject *old = s->entries;
    s->entries = t;
    Py_XDECREF(old);
}

/* ------------------------------------------------------------------------
 * Running code.
 * ------------------------------------------------------------------------ */

/* The function object that runs `e->code` for `func`: built once per (function,
 * entry) and memoised in func.__dict__, keyed by the entry (saves about 90 ns
 * a hit; the entry hashes by address, a code object would hash its contents). Not in the
 * cache entry: the memo references func's globals, and a reference from the
 * entry (reachable only through the code object, which the GC does not
 * track) back to func would form a cycle that is never collected. In
 * func.__dict__ the cycle is visible to the GC and dies with the function. */
/* Returns a new reference; e and func are borrowed (the caller holds both). */
static PyObject *memo_function(CacheEntry *e, PyFunctionObject *func) {
    if (func->func_dict == NULL && (func->func_dict = PyDict_New()) == NULL)
        return NULL;
    /* Keys are strs and CacheEntry objects (hashed by address): no lookup here
     * runs Python code, so borrowed results stay valid until we allocate. */
    PyObject *memo = PyDict_GetItemWithError(func->func_dict, memo_key);
    if (memo != NULL) {
        PyObject *fn = PyDict_GetItemWithError(memo, (PyObject *)e);
        if (fn != NULL || PyErr_Occurred())
            return Py_XNewRef(fn);
        Py_INCREF(memo); /* held: allocating below may run finalisers */
    } else {
        if (PyErr_Occurred() || (memo = PyDict_New()) == NULL)
            return NULL;
        if (PyDict_SetItem(func->func_dict, memo_key, memo) < 0) {
            Py_DECREF(memo);
            return NULL;
        }
    }
    PyObject *fn = PyFunction_NewWithQualName(e->code, func->func_globals, func->func_qualname);
    if (fn != NULL && ((func->func_closure && PyFunction_SetClosure(fn, func->func_closure) < 0) ||
                       PyDict_SetItem(memo, (PyObject *)e, fn) < 0))
        Py_CLEAR(fn);
    Py_DECREF(memo);
    return fn;
}

/* Re-call: run `e->code` with the frame's argument slots (hook.md section 3),
 * then clean up the original frame, which never runs. The slots are borrowed
 * (the frame owns them; the callee's frame takes its own references). New
 * reference, or NULL with an error. */
static PyObject *run_entry(PyThreadState *ts, CacheEntry *e, _PyInterpreterFrame *f) {
    PyObject *fn = memo_function(e, frame_func(f));
    if (fn == NULL)
        return done_unrun(ts, f, NULL);
    /* The original frame never runs: its slots go once the new frame holds them
     * (hand-over), and its clean-up below finds them NULL. */
    PyObject **slots = frame_slots(f);
    Py_ssize_t nargs = code_nargs(frame_code(f));
    handover = slots;
    handover_n = nargs;
    PyObject *res = PyObject_Vectorcall(fn, slots, nargs, NULL);
    if (handover == slots)
        handover = NULL;
    Py_DECREF(fn);
    return done_unrun(ts, f, res);
}

/* Run a call tree with this thread's callback off (SKIP_RECURSIVE). The
 * callback's reference moves to a local for the call and back after it. */
static PyObject *run_without_callback(PyThreadState *ts, _PyInterpreterFrame *f, int throwflag) {
    PyObject *cb = tl.callback;
    tl.callback = NULL;
    PyObject *res = prev_eval(ts, f, throwflag);
    PyObject *now = tl.callback;
    tl.callback = cb;
    if (now != NULL) {
        /* A callback left set inside the tree: drop it but keep the count. */
        threads_with_callback--;
        Py_DECREF(now);
    }
    return res;
}

/* Call every guard of the entries owned by `cb` (borrowed; the caller holds
 * it and `s`) with the function and the frame's argument slots (borrowed from
 * the frame, which owns them for the whole call). Returns a new reference to
 * the first entry whose guard passes, NULL with no error on a miss, NULL with
 * an error if a guard raised. */
static CacheEntry *guard_loop(ExtraState *s, PyObject *cb, _PyInterpreterFrame *f) {
    PyObject *snapshot = Py_NewRef(s->entries);
    Py_ssize_t n = PyTuple_GET_SIZE(snapshot);
    Py_ssize_t nargs = code_nargs(frame_code(f));
    PyObject *small[16];
    PyObject **args = small;
    CacheEntry *hit = NULL;
    if (n == 0)
        goto done;
    if (nargs + 2 > 16) {
        args = PyMem_Malloc((nargs + 2) * sizeof(PyObject *));
        if (args == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    /* args[0] is scratch space so vectorcall may use the offset trick. */
    args[1] = (PyObject *)frame_func(f);
    memcpy(args + 2, frame_slots(f), nargs * sizeof(PyObject *));
    for (Py_ssize_t i = 0; i < n; i++) {
        CacheEntry *e = (CacheEntry *)PyTuple_GET_ITEM(snapshot, i);
        if (e->owner != cb)
            continue;
        PyObject *r = PyObject_Vectorcall(e->guard, args + 1,
                                          (nargs + 1) | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        if (r == NULL)
            goto done;
        int ok = r == Py_True ? 1 : r == Py_False ? 0 : PyObject_IsTrue(r); /* guards return bools */
        Py_DECREF(r);
        if (ok < 0)
            goto done;
        if (ok) {
            hit = (CacheEntry *)Py_NewRef(e);
            break;
        }
    }
done:
    if (args != small)
        PyMem_Free(args);
    Py_DECREF(snapshot);
    return hit;
}

/* Move a hit entry (borrowed; the caller holds it) to the front so the
 * common case checks one guard. Re-reads co_extra: a guard may have reset it. */
static void move_to_front(PyCodeObject *co, CacheEntry *e) {
    void *p = get_extra(co);
    if (!IS_STATE(p))
        return;
    ExtraState *s = (ExtraState *)Py_NewRef((PyObject *)p);
    PyObject *old = Py_NewRef(s->entries);
    Py_ssize_t n = PyTuple_GET_SIZE(old);
    PyObject *t = NULL;
    if (n < 2 || PyTuple_GET_ITEM(old, 0) == (PyObject *)e)
        goto done;
    if ((t = PyTuple_New(n)) == NULL) { /* may collect garbage, and run Python */
        PyErr_Clear();
        goto done;
    }
    PyTuple_SET_ITEM(t, 0, Py_NewRef(e));
    Py_ssize_t j = 1;
    for (Py_ssize_t i = 0; i < n && j < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(old, i);
        if (x != (PyObject *)e)
            PyTuple_SET_ITEM(t, j++, Py_NewRef(x));
    }
    /* Only if nothing changed the entries meanwhile, and e was among them. */
    if (j == n && s->entries == old) {
        replace_entries(s, t);
        t = NULL;
    }
done:
    Py_XDECREF(t);
    Py_DECREF(old);
    Py_DECREF(s);
}

/* Build the callback's view of the frame: bound arguments and free variables
 * by name (a new dict; it takes its own references to the borrowed slots and
 * cell contents). Never FastToLocals the real frame (hook.md pitfall 1). */
static PyObject *frame_locals_dict(_PyInterpreterFrame *f) {
    PyCodeObject *co = frame_code(f);
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    Py_ssize_t nargs = code_nargs(co);
    PyObject **slots = frame_slots(f);
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *name = PyTuple_GET_ITEM(co->co_localsplusnames, i);
        if (slots[i] && PyDict_SetItem(d, name, slots[i]) < 0)
            goto fail;
    }
    PyObject *closure = frame_func(f)->func_closure;
    if (closure != NULL) {
        Py_ssize_t nfree = co->co_nfreevars;
        Py_ssize_t base = co->co_nlocalsplus - nfree;
        for (Py_ssize_t j = 0; j < nfree && j < PyTuple_GET_SIZE(closure); j++) {
            PyObject *value = PyCell_GET(PyTuple_GET_ITEM(closure, j));
            PyObject *name = PyTuple_GET_ITEM(co->co_localsplusnames, base + j);
            if (value && PyDict_SetItem(d, name, value) < 0)
                goto fail;
        }
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

/* Check what Python handed back before C trusts it (hook.md section 3). */
static int check_replacement(PyCodeObject *orig, PyObject *code) {
    if (!PyCode_Check(code)) {
        PyErr_Format(PyExc_TypeError, "framegraph: callback returned a %.100s, not a code object",
                     Py_TYPE(code)->tp_name);
        return -1;
    }
    PyCodeObject *c = (PyCodeObject *)code;
    if (c->co_argcount != code_nargs(orig) || c->co_kwonlyargcount != 0 ||
        (c->co_flags & (CO_VARARGS | CO_VARKEYWORDS | NEVER_INTERCEPT)) ||
        c->co_nfreevars != orig->co_nfreevars) {
        PyErr_SetString(PyExc_ValueError,
                        "framegraph: replacement code must be all-positional with the original's "
                        "argument count and free variables, and not a generator");
        return -1;
    }
    return 0;
}

/* Append (guard, code) as the newest entry, at the front; guard, code and
 * owner are borrowed. Returns a new reference to the entry, or NULL with an
 * error. */
static CacheEntry *add_entry(PyCodeObject *co, PyObject *guard, PyObject *code, PyObject *owner) {
    if (!PyCallable_Check(guard)) {
        PyErr_SetString(PyExc_TypeError, "framegraph: guard must be callable");
        return NULL;
    }
    if (check_replacement(co, code) < 0)
        return NULL;
    /* First, while nothing is held: replacing code's slot may run Python. */
    if (set_extra((PyCodeObject *)code, MARK_SKIP) < 0)
        return NULL;
    CacheEntry *e = PyObject_New(CacheEntry, &CacheEntryType);
    if (e == NULL)
        return NULL;
    e->guard = Py_NewRef(guard);
    e->code = Py_NewRef(code);
    e->owner = Py_NewRef(owner);
    e->hits = 0;
    ExtraState *s = get_or_make_state(co);
    if (s == NULL) {
        Py_DECREF(e);
        return NULL;
    }
    PyObject *old = Py_NewRef(s->entries);
    Py_ssize_t n = PyTuple_GET_SIZE(old);
    PyObject *t = PyTuple_New(n + 1); /* may collect garbage, and run Python */
    if (t == NULL) {
        Py_DECREF(old);
        Py_DECREF(s);
        Py_DECREF(e);
        return NULL;
    }
    PyTuple_SET_ITEM(t, 0, Py_NewRef(e));
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i + 1, Py_NewRef(PyTuple_GET_ITEM(old, i)));
    /* If `s` was reset meanwhile it is detached: the entry still runs this
     * once and is cached nowhere, which is what a reset asks for. */
    s->ncompiled++;
    replace_entries(s, t);
    Py_DECREF(old);
    Py_DECREF(s);
    return e;
}

/* ------------------------------------------------------------------------
 * The hook.
 * ------------------------------------------------------------------------ */

/* A miss: ask Python. Called with busy set. New reference to what the
 * callback returned, or NULL with an error. */
static PyObject *call_callback(PyObject *cb, _PyInterpreterFrame *f) {
    PyObject *locals = frame_locals_dict(f);
    if (locals == NULL)
        return NULL;
    PyObject *args[3] = {(PyObject *)frame_func(f), (PyObject *)frame_code(f), locals};
    PyObject *r = PyObject_Vectorcall(cb, args, 3, NULL);
    Py_DECREF(locals);
    return r;
}

static void notify_limit(PyCodeObject *co) {
    if (limit_hook == NULL)
        return;
    PyObject *hook = Py_NewRef(limit_hook);
    PyObject *r = PyObject_CallOneArg(hook, (PyObject *)co);
    Py_DECREF(hook);
    if (r == NULL)
        PyErr_WriteUnraisable((PyObject *)co);
    Py_XDECREF(r);
}

static void hand_slot_back(PyInterpreterState *interp);
static void take_slot_again(PyInterpreterState *interp);

/* No entry passed: run unmodified at the limit, else ask the callback (cb
 * borrowed; the caller holds it) and do what it says. */
static PyObject *on_miss(PyThreadState *ts, _PyInterpreterFrame *f, int throwflag, PyObject *cb) {
    PyCodeObject *co = frame_code(f);
    void *p = get_extra(co); /* re-read: the guards may have reset it */
    if (IS_STATE(p)) {
        ExtraState *s = (ExtraState *)p; /* borrowed: not used past a Python call */
        if (s->run_only)
            return prev_eval(ts, f, throwflag);
        if (s->ncompiled >= cache_limit) {
            s->run_only = 1;
            tl.busy = 1;
            notify_limit(co);
            tl.busy = 0;
            return prev_eval(ts, f, throwflag);
        }
    }
    tl.busy = 1;
    /* Nothing the callback runs on this thread is intercepted (busy). While no other
     * thread is in a compiled call, the slot goes back to the default evaluator for
     * the trace, so that CPython inlines the tracer's own calls again (a hooked slot
     * makes every Python call a C call: a trivial one half again as slow). A thread
     * starting a compiled call meanwhile takes the slot again (swap_callback). */
    int unhooked = !chains_to_other && threads_with_callback == 1;
    if (unhooked)
        hand_slot_back(ts->interp);
    PyObject *r = call_callback(cb, f); /* new reference */
    if (unhooked)
        take_slot_again(ts->interp);
    CacheEntry *e = NULL;               /* new reference */
    if (r != NULL && r != Py_None) {
        if (r == skip_sentinel || r == skip_recursive_sentinel) {
            if (set_extra(co, r == skip_sentinel ? MARK_SKIP : MARK_SKIP_RECURSIVE) < 0)
                Py_CLEAR(r);
        } else if (PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
            e = add_entry(co, PyTuple_GET_ITEM(r, 0), PyTuple_GET_ITEM(r, 1), cb);
            if (e == NULL)
                Py_CLEAR(r);
        } else {
            PyErr_SetString(PyExc_TypeError,
                            "framegraph: callback must return None, SKIP, SKIP_RECURSIVE or (guard, code)");
            Py_CLEAR(r);
        }
    }
    tl.busy = 0;
    if (r == NULL)
        return done_unrun(ts, f, NULL);
    PyObject *res;
    if (e != NULL) {
        res = run_entry(ts, e, f);
        Py_DECREF(e);
    } else if (r == skip_recursive_sentinel) {
        res = run_without_callback(ts, f, throwflag);
    } else {
        res = prev_eval(ts, f, throwflag);
    }
    Py_DECREF(r);
    return res;
}

static PyObject *fg_eval_frame(PyThreadState *ts, _PyInterpreterFrame *f, int throwflag);

/* Another frame evaluator took the interpreter's slot after us and calls us as the
 * one it chains to (torch._dynamo's shim does while torch.compile runs, a debugger's
 * may): while it owns the slot, the frames are its own. Intercepting them would
 * trace that compiler's internals with ours, and the two would fight over imports. */
static inline int foreign_evaluator_owns(PyThreadState *ts) {
    return _PyInterpreterState_GetEvalFrameFunc(ts->interp) != fg_eval_frame;
}

/* ------------------------------------------------------------------------
 * The C stack. Under a hook every Python call nests the evaluator in C (about
 * 600 bytes on 3.11), so recursion that eager runs on the data stack alone
 * would overflow the C stack (hook.md pitfall 9). When a frame arrives with
 * less than half of its thread's stack left, the hook leaves the slot until
 * that frame returns: CPython inlines the calls under it again, and they run
 * unmodified, in this thread and (meanwhile) in others.
 * ------------------------------------------------------------------------ */

/* tl.stack_floor: nesting stops at this address (the stack grows down);
 * UINTPTR_MAX until measured for the thread, 0 where it cannot be measured. */
static Py_ssize_t frames_run_unhooked = 0; /* frames, all threads, run with the slot handed back */
static int slot_handed_back = 0;          /* the slot is chained_eval because of them */

static void hand_slot_back(PyInterpreterState *interp) {
    if (_PyInterpreterState_GetEvalFrameFunc(interp) == fg_eval_frame) {
        _PyInterpreterState_SetEvalFrameFunc(interp, chained_eval);
        slot_handed_back = 1;
    }
    frames_run_unhooked++;
}

/* Take the slot back from the hand-back. install() and uninstall() may have run
 * meanwhile: only where it is still what we handed it to and we still want it.
 * Also what a thread starting a compiled call while the slot is handed back does:
 * its frames are the hook's (those handed back go on unhooked). */
static void reclaim_slot(PyInterpreterState *interp) {
    slot_handed_back = 0;
    if (installed && _PyInterpreterState_GetEvalFrameFunc(interp) == chained_eval && chained_eval != fg_eval_frame)
        _PyInterpreterState_SetEvalFrameFunc(interp, fg_eval_frame);
}

static void take_slot_again(PyInterpreterState *interp) {
    if (--frames_run_unhooked == 0 && slot_handed_back)
        reclaim_slot(interp);
}

static uintptr_t measure_stack_floor(void) {
#ifdef __GLIBC__
    pthread_attr_t attr;
    void *low;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return 0;
    int err = pthread_attr_getstack(&attr, &low, &size);
    pthread_attr_destroy(&attr);
    /* The lower half stays for what eager itself may nest under the deepest
     * frame: CPython's C recursion limits assume a whole stack. */
    return err ? 0 : (uintptr_t)low + size / 2;
#else
    return 0;
#endif
}

/* Up to this many Python frames the stack is not measured, which keeps a
 * thread-local read off the common path: 48 nested calls take under 32 KiB, the
 * smallest stack `threading.stack_size()` gives a thread. */
#define UNMEASURED_DEPTH 48

static inline int stack_is_low(PyThreadState *ts) {
    return python_depth(ts) > UNMEASURED_DEPTH && (uintptr_t)__builtin_frame_address(0) <= tl.stack_floor;
}

static Py_NO_INLINE PyObject *run_unhooked(PyThreadState *ts, _PyInterpreterFrame *f, int throwflag) {
    if (tl.stack_floor == UINTPTR_MAX) { /* first frame of this thread */
        tl.stack_floor = measure_stack_floor();
        return fg_eval_frame(ts, f, throwflag);
    }
    hand_slot_back(ts->interp);
    PyObject *res = prev_eval(ts, f, throwflag);
    take_slot_again(ts->interp);
    return res;
}

/* A frame the callback may take: run its cache entry or ask the callback. Out
 * of line, so that fg_eval_frame's path for a frame it lets pass stays short. */
static Py_NO_INLINE PyObject *intercept(PyThreadState *ts, _PyInterpreterFrame *f, int throwflag,
                                        PyObject *cb, void *p) {
    PyCodeObject *co = frame_code(f);
    if (p == MARK_SKIP_RECURSIVE)
        return run_without_callback(ts, f, throwflag);
    if (p == NULL && ((co->co_flags & NEVER_INTERCEPT) ||
                      (co->co_flags & (CO_OPTIMIZED | CO_NEWLOCALS)) != (CO_OPTIMIZED | CO_NEWLOCALS))) {
        /* Generators, coroutines, module and class bodies: never. */
        if (set_extra(co, MARK_SKIP) < 0)
            PyErr_Clear();
        return prev_eval(ts, f, throwflag);
    }
    /* The callback may replace itself while we use it. */
    Py_INCREF(cb);
    PyObject *res;
    if (IS_STATE(p)) {
        /* Held: a guard may reset() this code and drop co_extra's reference. */
        PyObject *state = Py_NewRef((PyObject *)p);
        tl.busy = 1;
        CacheEntry *hit = guard_loop((ExtraState *)state, cb, f);
        tl.busy = 0;
        Py_DECREF(state);
        if (hit != NULL) {
            hit->hits++;
            move_to_front(co, hit); /* re-reads co_extra: a guard may have reset it */
            res = run_entry(ts, hit, f);
            Py_DECREF(hit);
            Py_DECREF(cb);
            return res;
        }
        if (PyErr_Occurred()) {
            Py_DECREF(cb);
            return done_unrun(ts, f, NULL);
        }
    }
    /* Only a miss asks: a hit runs code we compiled already, whoever owns the slot. */
    res = foreign_evaluator_owns(ts) ? prev_eval(ts, f, throwflag) : on_miss(ts, f, throwflag, cb);
    Py_DECREF(cb);
    return res;
}

static PyObject *fg_eval_frame(PyThreadState *ts, _PyInterpreterFrame *f, int throwflag) {
    if (handover != NULL)
        release_handover();
    if (stack_is_low(ts))
        return run_unhooked(ts, f, throwflag);
    if (chains_to_other && tl.handed == f) /* back from the chain: see prev_eval */
        return eval_default(ts, f, throwflag);
    PyObject *cb = tl.callback;
    if (cb == NULL || tl.busy || throwflag || frame_is_generator(f) || thread_is_tracing(ts))
        return prev_eval(ts, f, throwflag);
    void *p = get_extra(frame_code(f));
    if (p == MARK_SKIP)
        return prev_eval(ts, f, throwflag);
    return intercept(ts, f, throwflag, cb, p);
}

/* ------------------------------------------------------------------------
 * Installing and the thread-local callback.
 * ------------------------------------------------------------------------ */

static void install(void) {
    PyInterpreterState *interp = PyThreadState_GET()->interp;
    _PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(interp);
    if (cur == fg_eval_frame)
        return;
    chained_eval = cur; /* never NULL: Get returns the default for an empty slot */
    chains_to_other = cur != _PyEval_EvalFrameDefault;
    _PyInterpreterState_SetEvalFrameFunc(interp, fg_eval_frame);
    installed = 1;
}

static void uninstall(void) {
    PyInterpreterState *interp = PyThreadState_GET()->interp;
    /* Someone (a debugger) took the slot after us: leave theirs in place and
     * keep chaining through chained_eval from our hook if it is still called. */
    if (_PyInterpreterState_GetEvalFrameFunc(interp) == fg_eval_frame)
        _PyInterpreterState_SetEvalFrameFunc(interp, chained_eval);
    installed = 0;
}

/* Make `new` (owned, or NULL) this thread's callback; return the old one (owned). */
static PyObject *swap_callback(PyObject *new) {
    PyObject *old = tl.callback;
    if (old == NULL && new != NULL && threads_with_callback++ == 0)
        install();
    else if (old == NULL && new != NULL && slot_handed_back)
        reclaim_slot(PyThreadState_GET()->interp);
    if (old != NULL && new == NULL && --threads_with_callback == 0)
        uninstall();
    tl.callback = new;
    return old;
}

/* The callback a compiled call sets: none while the stance is force_eager. */
static inline PyObject *entering(PyObject *cb) {
    return force_eager ? NULL : Py_XNewRef(cb);
}

static PyObject *py_set_callback(PyObject *self, PyObject *cb) {
    if (cb != Py_None && !PyCallable_Check(cb)) {
        PyErr_SetString(PyExc_TypeError, "set_callback() takes a callable or None");
        return NULL;
    }
    PyObject *old = swap_callback(cb == Py_None ? NULL : entering(cb));
    return old ? old : Py_NewRef(Py_None);
}

/* ------------------------------------------------------------------------
 * Wrapper: what compile() and disable() return for a function. Calling it
 * sets this thread's callback (None for disable), calls the function and
 * restores the previous callback, in C: a Python wrapper doing the same
 * costs about 300 ns per call more.
 * ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *fn;
    PyObject *callback; /* NULL: run with the callback off */
    PyObject *dict;
    PyObject *weaklist;
    vectorcallfunc vectorcall;
} Wrapper;

static PyObject *wrapper_vectorcall(Wrapper *w, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    PyObject *old = swap_callback(entering(w->callback));
    PyObject *res = PyObject_Vectorcall(w->fn, args, nargsf, kwnames);
    Py_XDECREF(swap_callback(old));
    return res;
}

static PyObject *wrapper_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *fn, *cb;
    if (!PyArg_ParseTuple(args, "OO:Wrapper", &fn, &cb))
        return NULL;
    if (!PyCallable_Check(fn) || (cb != Py_None && !PyCallable_Check(cb))) {
        PyErr_SetString(PyExc_TypeError, "Wrapper(fn, callback | None) takes callables");
        return NULL;
    }
    Wrapper *w = (Wrapper *)type->tp_alloc(type, 0);
    if (w == NULL)
        return NULL;
    w->fn = Py_NewRef(fn);
    w->callback = cb == Py_None ? NULL : Py_NewRef(cb);
    w->vectorcall = (vectorcallfunc)wrapper_vectorcall;
    return (PyObject *)w;
}

static int wrapper_traverse(Wrapper *w, visitproc visit, void *arg) {
    Py_VISIT(w->fn);
    Py_VISIT(w->callback);
    Py_VISIT(w->dict);
    return 0;
}

static int wrapper_clear(Wrapper *w) {
    Py_CLEAR(w->fn);
    Py_CLEAR(w->callback);
    Py_CLEAR(w->dict);
    return 0;
}

static void wrapper_dealloc(Wrapper *w) {
    PyObject_GC_UnTrack(w);
    if (w->weaklist)
        PyObject_ClearWeakRefs((PyObject *)w);
    wrapper_clear(w);
    Py_TYPE(w)->tp_free((PyObject *)w);
}

/* Bind like a function, so a compiled method works as a method. */
static PyObject *wrapper_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyObject *wrapper_callback(Wrapper *w, void *unused) {
    return Py_NewRef(w->callback ? w->callback : Py_None);
}

static PyObject *wrapper_fn(Wrapper *w, void *unused) { return Py_NewRef(w->fn); }

static PyGetSetDef wrapper_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"_framegraph_callback", (getter)wrapper_callback, NULL, "the callback set during calls", NULL},
    {"_framegraph_fn", (getter)wrapper_fn, NULL, "the wrapped callable", NULL},
    {NULL},
};

static PyTypeObject WrapperType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "framegraph._C.Wrapper",
    .tp_basicsize = sizeof(Wrapper),
    .tp_dealloc = (destructor)wrapper_dealloc,
    .tp_vectorcall_offset = offsetof(Wrapper, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_BASETYPE,
    .tp_doc = "Wrapper(fn, callback | None): calls fn with this thread's frame callback set.",
    .tp_traverse = (traverseproc)wrapper_traverse,
    .tp_clear = (inquiry)wrapper_clear,
    .tp_weaklistoffset = offsetof(Wrapper, weaklist),
    .tp_descr_get = wrapper_get,
    .tp_getset = wrapper_getset,
    .tp_dictoffset = offsetof(Wrapper, dict),
    .tp_new = wrapper_new,
};

/* ------------------------------------------------------------------------
 * ModuleCall: OptimizedModule.__call__. compile(module) returns a wrapper
 * module; nn.Module's call machinery, run twice (the wrapper, then the
 * module), costs more than the guard of a module with 50 parameters. When it
 * would only call forward -- every (object, attribute) pair in the
 * instance's `_framegraph_plain` is absent, None or an empty dict (no hooks
 * on either module or globally), `type(mod).forward` is still the function
 * compiled for, and `precheck()` (torch's JIT tracing state) is falsy -- this
 * calls `forward(mod, *args)` with the callback set, else `slow(self, *args)`
 * (nn.Module.__call__). The instance dict carries `_framegraph_mod`,
 * `_framegraph_fn`, `_framegraph_callback` and `_framegraph_plain`.
 * ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *slow;
    PyObject *precheck;
    vectorcallfunc vectorcall;
} ModuleCall;

static PyObject *s_mod, *s_fn, *s_callback, *s_plain, *s_forward;

static int all_empty(PyObject *pairs); /* below, with py_all_empty */

/* Borrowed forward function to call, or NULL (take the slow path; no error set). */
static PyObject *plain_forward(ModuleCall *mc, PyObject *self, PyObject **mod, PyObject **cb) {
    PyObject **dictptr = _PyObject_GetDictPtr(self);
    if (dictptr == NULL || *dictptr == NULL)
        return NULL;
    PyObject *d = *dictptr;
    PyObject *fn = PyDict_GetItemWithError(d, s_fn), *plain = PyDict_GetItemWithError(d, s_plain);
    *mod = PyDict_GetItemWithError(d, s_mod);
    *cb = PyDict_GetItemWithError(d, s_callback);
    if (fn == NULL || plain == NULL || *mod == NULL || *cb == NULL || !PyTuple_Check(plain)) {
        PyErr_Clear();
        return NULL;
    }
    int empty = all_empty(plain);
    if (empty <= 0 || _PyType_Lookup(Py_TYPE(*mod), s_forward) != fn) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *pre = PyObject_CallNoArgs(mc->precheck);
    int busy = pre == NULL ? -1 : PyObject_IsTrue(pre);
    Py_XDECREF(pre);
    if (busy != 0) {
        PyErr_Clear();
        return NULL;
    }
    return fn;
}

static PyObject *module_call_vectorcall(ModuleCall *mc, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "ModuleCall needs the module as its first argument");
        return NULL;
    }
    PyObject *mod, *cb;
    PyObject *fn = plain_forward(mc, args[0], &mod, &cb);
    if (fn == NULL)
        return PyObject_Vectorcall(mc->slow, args, nargsf, kwnames);
    /* forward(mod, *args[1:], **kw): reuse the argument array, mod in the module's place */
    Py_INCREF(fn);
    Py_INCREF(mod);
    size_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *small[8], **call_args = total <= 8 ? small : PyMem_Malloc(total * sizeof(PyObject *));
    if (call_args == NULL) {
        Py_DECREF(fn);
        Py_DECREF(mod);
        return PyErr_NoMemory();
    }
    call_args[0] = mod;
    for (size_t i = 1; i < total; i++)
        call_args[i] = args[i];
    PyObject *old = swap_callback(cb == Py_None ? NULL : entering(cb));
    PyObject *res = PyObject_Vectorcall(fn, call_args, nargs, kwnames);
    Py_XDECREF(swap_callback(old));
    if (call_args != small)
        PyMem_Free(call_args);
    Py_DECREF(fn);
    Py_DECREF(mod);
    return res;
}

static PyObject *module_call_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *slow, *precheck;
    if (!PyArg_ParseTuple(args, "OO:ModuleCall", &slow, &precheck))
        return NULL;
    if (!PyCallable_Check(slow) || !PyCallable_Check(precheck)) {
        PyErr_SetString(PyExc_TypeError, "ModuleCall(slow, precheck) takes callables");
        return NULL;
    }
    ModuleCall *mc = (ModuleCall *)type->tp_alloc(type, 0);
    if (mc == NULL)
        return NULL;
    mc->slow = Py_NewRef(slow);
    mc->precheck = Py_NewRef(precheck);
    mc->vectorcall = (vectorcallfunc)module_call_vectorcall;
    return (PyObject *)mc;
}

static int module_call_traverse(ModuleCall *mc, visitproc visit, void *arg) {
    Py_VISIT(mc->slow);
    Py_VISIT(mc->precheck);
    return 0;
}

static int module_call_clear(ModuleCall *mc) {
    Py_CLEAR(mc->slow);
    Py_CLEAR(mc->precheck);
    return 0;
}

static void module_call_dealloc(ModuleCall *mc) {
    PyObject_GC_UnTrack(mc);
    module_call_clear(mc);
    Py_TYPE(mc)->tp_free((PyObject *)mc);
}

/* Py_TPFLAGS_METHOD_DESCRIPTOR: as a class's __call__, CPython calls it with the
 * instance prepended instead of building a bound method. */
static PyObject *module_call_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyTypeObject ModuleCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "framegraph._C.ModuleCall",
    .tp_basicsize = sizeof(ModuleCall),
    .tp_dealloc = (destructor)module_call_dealloc,
    .tp_vectorcall_offset = offsetof(ModuleCall, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "ModuleCall(slow, precheck): OptimizedModule.__call__, calling forward directly "
              "when nn.Module's call machinery would do nothing else.",
    .tp_traverse = (traverseproc)module_call_traverse,
    .tp_clear = (inquiry)module_call_clear,
    .tp_descr_get = module_call_get,
    .tp_new = module_call_new,
};

/* hand_over([fn, *args]): fn(*args), where the list's references are handed to
 * fn's frame (see release_handover): the generated code builds the list from
 * its stack (BUILD_LIST moves the references) and calls this, so neither its
 * stack nor this function keeps the arguments while fn runs. */
static PyObject *py_hand_over(PyObject *self, PyObject *list) {
    if (!PyList_CheckExact(list) || PyList_GET_SIZE(list) < 1) {
        PyErr_SetString(PyExc_TypeError, "hand_over() takes a list [function, *arguments]");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(list);
    PyObject *small[16];
    PyObject **refs = n <= 16 ? small : PyMem_Malloc(n * sizeof(PyObject *));
    if (refs == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++)
        refs[i] = Py_NewRef(PyList_GET_ITEM(list, i));
    /* Emptied: `refs` alone holds the arguments. No item dies here (refs holds each). */
    if (PyList_SetSlice(list, 0, n, NULL) < 0) {
        for (Py_ssize_t i = 0; i < n; i++)
            Py_DECREF(refs[i]);
        if (refs != small)
            PyMem_Free(refs);
        return NULL;
    }
    int handing = PyFunction_Check(refs[0]) && handover == NULL;
    if (handing) {
        handover = refs + 1;
        handover_n = n - 1;
    }
    PyObject *res = PyObject_Vectorcall(refs[0], refs + 1, n - 1, NULL);
    if (handing && handover == refs + 1)
        handover = NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XDECREF(refs[i]);
    if (refs != small)
        PyMem_Free(refs);
    return res;
}

static PyObject *py_get_callback(PyObject *self, PyObject *unused) {
    return Py_NewRef(tl.callback ? tl.callback : Py_None);
}

static PyObject *py_is_installed(PyObject *self, PyObject *unused) {
    PyInterpreterState *interp = PyThreadState_GET()->interp;
    return PyBool_FromLong(_PyInterpreterState_GetEvalFrameFunc(interp) == fg_eval_frame);
}

/* ------------------------------------------------------------------------
 * The cache, from Python.
 * ------------------------------------------------------------------------ */

static int code_arg(PyObject *o) {
    if (!PyCode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "expected a code object, got %.100s", Py_TYPE(o)->tp_name);
        return 0;
    }
    return 1;
}

static PyObject *py_mark_skip(PyObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"code", "recursive", NULL};
    PyObject *code;
    int recursive = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|p:mark_skip", names, &code, &recursive) ||
        !code_arg(code))
        return NULL;
    if (set_extra((PyCodeObject *)code, recursive ? MARK_SKIP_RECURSIVE : MARK_SKIP) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_reset(PyObject *self, PyObject *code) {
    if (!code_arg(code) || set_extra((PyCodeObject *)code, NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_cache_entries(PyObject *self, PyObject *code) {
    if (!code_arg(code))
        return NULL;
    void *p = get_extra((PyCodeObject *)code);
    if (!IS_STATE(p))
        return PyList_New(0);
    PyObject *entries = Py_NewRef(((ExtraState *)p)->entries);
    Py_ssize_t n = PyTuple_GET_SIZE(entries);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        CacheEntry *e = (CacheEntry *)PyTuple_GET_ITEM(entries, i);
        PyObject *t = Py_BuildValue("(OOn)", e->guard, e->code, e->hits);
        if (t == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, t);
    }
    Py_DECREF(entries);
    return out;
}

static PyObject *py_cache_state(PyObject *self, PyObject *code) {
    if (!code_arg(code))
        return NULL;
    void *p = get_extra((PyCodeObject *)code);
    if (p == MARK_SKIP)
        return PyUnicode_FromString("skip");
    if (p == MARK_SKIP_RECURSIVE)
        return PyUnicode_FromString("skip_recursive");
    if (IS_STATE(p) && ((ExtraState *)p)->run_only)
        return PyUnicode_FromString("run_only");
    Py_RETURN_NONE;
}

static PyObject *py_set_cache_limit(PyObject *self, PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "the cache limit must be at least 1");
        return NULL;
    }
    cache_limit = n;
    Py_RETURN_NONE;
}

static PyObject *py_set_limit_hook(PyObject *self, PyObject *fn) {
    if (fn != Py_None && !PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "set_limit_hook() takes a callable or None");
        return NULL;
    }
    Py_XSETREF(limit_hook, fn == Py_None ? NULL : Py_NewRef(fn));
    Py_RETURN_NONE;
}

/* dict_version(d): CPython 3.11's version tag of an exact dict (PEP 509), else None.
 * Every dict gets a tag from one global counter when created and a new one on
 * every change (insert, delete, clear, replacing a value by another object), so
 * an equal tag means the same dict holding the same key -> value identities.
 * guards.py uses it to skip re-checking the items of an unchanged dict (module
 * globals, nn.Module._modules). None for subclasses, whose __getitem__ may
 * compute. 3.12 and 3.13 keep watcher bits in the low bits of the tag: a dict
 * that becomes watched gets a new tag, which only costs a re-check. */
static PyObject *py_dict_version(PyObject *self, PyObject *d) {
    if (!PyDict_CheckExact(d))
        Py_RETURN_NONE;
#if PY_VERSION_HEX >= 0x030D0000
    /* 3.13: a dict sharing an object's inline values is written by the
     * specialised STORE_ATTR without a new tag. */
    if (((PyDictObject *)d)->ma_values != NULL)
        Py_RETURN_NONE;
#endif
_Pragma("GCC diagnostic push")
_Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
    return PyLong_FromUnsignedLongLong(((PyDictObject *)d)->ma_version_tag);
_Pragma("GCC diagnostic pop")
}

/* all_empty(((obj, name), ...)): whether each obj.__dict__[name] is absent, None
 * or an empty dict. OptimizedModule asks it whether nn.Module's call machinery
 * would only call forward (no hooks anywhere): one C call instead of a dozen
 * attribute reads. Only instance dicts are read, never properties or
 * __getattr__; an object without a __dict__ is an error. */
/* 1 if all empty, 0 if not, -1 with an exception. */
static int all_empty(PyObject *pairs) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pairs); i++) {
        PyObject *pair = PyTuple_GET_ITEM(pairs, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(pair, 1))) {
            PyErr_SetString(PyExc_TypeError, "all_empty() takes a tuple of (object, name) pairs");
            return -1;
        }
        PyObject **dictptr = _PyObject_GetDictPtr(PyTuple_GET_ITEM(pair, 0));
        if (dictptr == NULL || *dictptr == NULL) {
            PyErr_SetString(PyExc_TypeError, "all_empty(): an object without a __dict__");
            return -1;
        }
        PyObject *value = PyDict_GetItemWithError(*dictptr, PyTuple_GET_ITEM(pair, 1));
        if (value == NULL) {
            if (PyErr_Occurred())
                return -1;
            continue;
        }
        if (value == Py_None || (PyDict_Check(value) && PyDict_GET_SIZE(value) == 0))
            continue;
        return 0;
    }
    return 1;
}

static PyObject *py_all_empty(PyObject *self, PyObject *pairs) {
    if (!PyTuple_Check(pairs)) {
        PyErr_SetString(PyExc_TypeError, "all_empty() takes a tuple of (object, name) pairs");
        return NULL;
    }
    int empty = all_empty(pairs);
    return empty < 0 ? NULL : PyBool_FromLong(empty);
}

static PyObject *py_set_force_eager(PyObject *self, PyObject *flag) {
    int on = PyObject_IsTrue(flag);
    if (on < 0)
        return NULL;
    PyObject *old = PyBool_FromLong(force_eager);
    force_eager = on;
    return old;
}

/* How many more Python frames the recursion limit allows this thread: a cache miss
 * with too few left runs unmodified (convert_frame.py), since tracing it takes frames. */
static PyObject *py_recursion_headroom(PyObject *self, PyObject *unused) {
    return PyLong_FromLong((long)Py_GetRecursionLimit() - python_depth(PyThreadState_GET()));
}

static PyMethodDef methods[] = {
    {"recursion_headroom", py_recursion_headroom, METH_NOARGS,
     "recursion_headroom() -> int: the recursion limit minus this thread's Python depth."},
    {"set_force_eager", py_set_force_eager, METH_O,
     "set_force_eager(flag) -> previous. While set, compiled calls run with no callback "
     "(set_stance(\"force_eager\")); process-wide."},
    {"all_empty", py_all_empty, METH_O,
     "all_empty(((obj, name), ...)) -> whether every obj.__dict__[name] is absent, None or an empty dict."},
    {"set_callback", py_set_callback, METH_O,
     "set_callback(cb | None) -> previous. Thread-local. cb(func, code, f_locals) returns None "
     "(run unmodified once), SKIP, SKIP_RECURSIVE or (guard, code)."},
    {"get_callback", py_get_callback, METH_NOARGS, "This thread's callback, or None."},
    {"hand_over", py_hand_over, METH_O,
     "hand_over([fn, *args]): fn(*args), the list's references handed to fn's frame (the list is emptied)."},
    {"is_installed", py_is_installed, METH_NOARGS, "Whether the frame hook is in the interpreter now."},
    {"mark_skip", (PyCFunction)(void (*)(void))py_mark_skip, METH_VARARGS | METH_KEYWORDS,
     "mark_skip(code, recursive=False): never intercept this code (recursive: nor what it calls)."},
    {"reset", py_reset, METH_O, "reset(code): drop the cache entries and marks of a code object."},
    {"cache_entries", py_cache_entries, METH_O,
     "cache_entries(code) -> [(guard, code, hits)], newest hit first."},
    {"cache_state", py_cache_state, METH_O,
     "cache_state(code) -> None | 'skip' | 'skip_recursive' | 'run_only'."},
    {"set_cache_limit", py_set_cache_limit, METH_O,
     "set_cache_limit(n): entries per code before the code only runs unmodified."},
    {"set_limit_hook", py_set_limit_hook, METH_O,
     "set_limit_hook(fn | None): fn(code) is called once when a code reaches the cache limit."},
    {"dict_version", py_dict_version, METH_O,
     "dict_version(d) -> the version tag of an exact dict (changes on every change), else None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "framegraph._C",
    "The PEP 523 frame hook, per-code cache and guard loop of framegraph.", -1, methods,
};

/* SKIP and SKIP_RECURSIVE: unique objects compared by identity. */
typedef struct {
    PyObject_HEAD
    const char *name;
} Sentinel;

static PyObject *sentinel_repr(Sentinel *s) { return PyUnicode_FromFormat("framegraph._C.%s", s->name); }

static PyTypeObject SentinelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "framegraph._C.Sentinel",
    .tp_basicsize = sizeof(Sentinel),
    .tp_repr = (reprfunc)sentinel_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
};

static PyObject *new_sentinel(const char *name) {
    Sentinel *s = PyObject_New(Sentinel, &SentinelType);
    if (s != NULL)
        s->name = name;
    return (PyObject *)s;
}

PyMODINIT_FUNC PyInit__C(void) {
    if (module_loaded) {
        PyErr_SetString(PyExc_ImportError, "framegraph._C cannot be loaded twice in one process");
        return NULL;
    }
    if (PyType_Ready(&CacheEntryType) < 0 || PyType_Ready(&ExtraStateType) < 0 ||
        PyType_Ready(&SentinelType) < 0 ||
        PyType_Ready(&WrapperType) < 0 || PyType_Ready(&ModuleCallType) < 0)
        return NULL;
    s_mod = PyUnicode_InternFromString("_framegraph_mod");
    s_fn = PyUnicode_InternFromString("_framegraph_fn");
    s_callback = PyUnicode_InternFromString("_framegraph_callback");
    s_plain = PyUnicode_InternFromString("_framegraph_plain");
    s_forward = PyUnicode_InternFromString("forward");
    if (!s_mod || !s_fn || !s_callback || !s_plain || !s_forward)
        return NULL;
    extra_index = request_code_extra_index(free_extra);
    if (extra_index < 0) {
        PyErr_SetString(PyExc_ImportError, "framegraph._C: no co_extra index left in this interpreter");
        return NULL;
    }
    memo_key = PyUnicode_InternFromString("__framegraph_memo__");
    PyObject *m = memo_key ? PyModule_Create(&module) : NULL;
    if (m == NULL)
        return NULL;
    skip_sentinel = new_sentinel("SKIP");
    skip_recursive_sentinel = new_sentinel("SKIP_RECURSIVE");
    if (skip_sentinel == NULL || skip_recursive_sentinel == NULL ||
        PyModule_AddObjectRef(m, "SKIP", skip_sentinel) < 0 ||
        PyModule_AddObjectRef(m, "SKIP_RECURSIVE", skip_recursive_sentinel) < 0 ||
        PyModule_AddObjectRef(m, "CacheEntry", (PyObject *)&CacheEntryType) < 0 ||
        PyModule_AddObjectRef(m, "Wrapper", (PyObject *)&WrapperType) < 0 ||
        PyModule_AddObjectRef(m, "ModuleCall", (PyObject *)&ModuleCallType) < 0 ||
        fg_source_reader_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    module_loaded = 1;
    return m;
}
