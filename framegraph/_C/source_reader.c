/*
 * framegraph._C.SourceReader: reads many values reached from one object by a
 * chain of steps (``self._modules['0']._parameters['weight']``,
 * ``type(self).forward.__closure__[1].cell_contents``), and skips the walk
 * while nothing on the way changed.
 *
 * A guard and the replacement code of a module both read every parameter,
 * submodule and decorator closure cell through such chains, each call: about
 * 100 ns a step in bytecode, which on a real model costs more than all the
 * guard's checks together.
 *
 * A reader is a program of steps, each (parent node, kind, name or key, leaf
 * index or -1); node 0 is the root passed to the call, node i+1 is the value
 * of step i, and a parent always comes before its children. Calling it walks
 * the program and returns the tuple of leaves. Step kinds:
 *
 *   ATTR          getattr(obj, name)
 *   ITEM          obj[key] (key a str)
 *   TYPE          type(obj)
 *   INDEX         obj[i] (i an int)
 *   GENERIC_ATTR  object.__getattribute__(obj, name)
 *   DICT_ITEM     dict.__getitem__(obj, key)
 *
 * While it walks it records, for every step, the fact that makes its result
 * the same next time:
 *
 *   - a key of a dict: the dict's version tag (PEP 509: a fresh tag from a
 *     global counter on creation and on every change, so an equal tag on the
 *     same dict means the same key -> value identities);
 *   - an attribute that is provably an instance-dict item (the type's
 *     __getattribute__ is object's, no data descriptor of that name on the
 *     type): the type and its version tag, the instance dict and its tag;
 *   - an attribute of a class found on its MRO (a plain value or a function,
 *     no metaclass data descriptor): the class's and the metaclass's version
 *     tags (any change to a class or its bases renews them);
 *   - ``__closure__``, ``__globals__``, ``__defaults__``, ``__kwdefaults__``,
 *     ``__code__`` of a function, and ``cell_contents`` of a cell: the value
 *     itself, compared by identity (the reader holds it, so its address
 *     cannot be reused by another object);
 *   - ``type(obj)``: the type, compared by identity (held);
 *   - ``obj.__dict__`` (the standard descriptor): the type's tag and the
 *     dict's identity (reads from it check its version tag);
 *   - an item of a tuple: nothing (a tuple never changes, and the record
 *     that proved the tuple the same object covers its items). Every
 *     record must prove the identity of the node its children are read
 *     from: a tuple passed in as the root has no such record, so its
 *     items are dynamic (a cached item of last call's root tuple may be
 *     freed by now).
 *
 * The next call checks those records in walk order, parents first, and
 * returns the leaves of the last walk when all hold. Apart from the values
 * named above, which it holds, the reader keeps no reference to what it read
 * (it keeps no model alive): a record is only dereferenced after its
 * parent's record held, and an unchanged parent still holds its children, so
 * every pointer checked is live. The root's own records compare the object
 * passed in.
 *
 * A step that is not provably one of these (a property, __getattr__, a dict
 * subclass read with [], a list) is "dynamic": it and every step below it are
 * read the ordinary way on every call, while the rest stays cached. A
 * dynamic leaf is held, and one that is a different object than last time
 * counts as a walk (`walks`: what the guard's skipped checks key on).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#include "source_reader.h"

enum { STEP_ATTR, STEP_ITEM, STEP_TYPE, STEP_INDEX, STEP_GENERIC_ATTR, STEP_DICT_ITEM, STEP_KINDS };

/* What a record checks about its node (the object a step read from). */
enum {
    REC_DICT,     /* node is a dict: version tag */
    REC_INSTANCE, /* node's type + tag, instance dict + version */
    REC_CLASS,    /* node is a class: its tag, metaclass + tag */
    REC_FIELD,    /* node is a function: one field is `held` */
    REC_CELL,     /* node is a cell: contents is `held` */
    REC_TYPEOF,   /* type(node) is `held` */
    REC_DICTPTR,  /* node.__dict__ is `dict` */
};

typedef struct {
    int parent;     /* node index: 0 is the root */
    int kind;       /* STEP_* */
    PyObject *name; /* attribute name or key (str), index (int), or None */
    int leaf;       /* index in the result tuple, or -1 */
} Step;

typedef struct {
    int node;
    int kind;           /* REC_* */
    PyObject *obj;      /* borrowed: the node's value at the walk */
    PyTypeObject *type; /* borrowed: REC_INSTANCE/REC_CLASS type */
    unsigned int tag;
    PyTypeObject *meta; /* REC_CLASS: metaclass */
    unsigned int metatag;
    PyObject *dict;    /* borrowed: REC_DICT/REC_INSTANCE */
    uint64_t version;
    int field;         /* REC_FIELD: which function field */
    PyObject *held;    /* owned: REC_FIELD/REC_CELL/REC_TYPEOF value */
} Record;

typedef struct {
    PyObject_HEAD
    int nsteps;
    int nleaves;
    int nhot;          /* a call returns leaves [0, nhot); all() returns every leaf */
    Step *steps;
    int *leaf_step;    /* leaf -> the step that produces it */
    /* the last walk (valid != 0) */
    int valid;
    int nrecords;
    Record *records;
    PyObject **nodes;  /* borrowed node values: live while the records hold (static nodes) */
    char *dynamic;     /* per step: not provably cacheable, or below such a step: re-read every call */
    int ndynamic;
    PyObject **held;   /* per leaf: the value a dynamic step gave last time (owned) */
    char *watched;     /* per leaf: does a new object count as a walk (someone skips its checks) */
    Py_ssize_t walks;  /* how many times a returned value may have changed */
    int plain_step;    /* the first dynamic step of the last walk, or -1 */
    vectorcallfunc vectorcall;
} SourceReader;

static PyObject *object_getattribute = NULL; /* object.__getattribute__ */
static PyObject *getattribute_name = NULL;   /* "__getattribute__" */
static PyObject *cell_contents_name = NULL;  /* "cell_contents" */
static PyObject *dict_name = NULL;           /* "__dict__" */

static const char *function_fields[] = {"__closure__", "__globals__", "__defaults__", "__kwdefaults__",
                                        "__code__", NULL};
static PyObject *function_field_names[5];

_Pragma("GCC diagnostic push")
_Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
static inline uint64_t dict_tag(PyObject *d) { return ((PyDictObject *)d)->ma_version_tag; }
_Pragma("GCC diagnostic pop")

static inline int tag_valid(PyTypeObject *tp) { return (tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) != 0; }

/* Whether d's version tag changes on every change. Not on 3.13 for a dict that
 * shares an object's inline values (ma_values): the specialised STORE_ATTR
 * writes those values without touching the tag. */
static inline int dict_tag_tracks(PyObject *d) {
#if PY_VERSION_HEX >= 0x030D0000
    return ((PyDictObject *)d)->ma_values == NULL;
#else
    return 1;
#endif
}

/* The instance dict of obj (materialised if 3.11 keeps it as inline values),
 * or NULL where its tag would not prove it unchanged (then every step from it
 * is read the ordinary way). */
static PyObject *instance_dict(PyObject *obj) {
    PyObject **ptr = _PyObject_GetDictPtr(obj);
    if (ptr == NULL || *ptr == NULL || !PyDict_CheckExact(*ptr) || !dict_tag_tracks(*ptr))
        return NULL;
    return *ptr;
}

static PyObject *function_field(PyObject *fn, int field) {
    PyFunctionObject *f = (PyFunctionObject *)fn;
    PyObject *v = NULL;
    switch (field) {
    case 0: v = f->func_closure; break;
    case 1: v = f->func_globals; break;
    case 2: v = f->func_defaults; break;
    case 3: v = f->func_kwdefaults; break;
    case 4: v = f->func_code; break;
    }
    return v ? v : Py_None;
}

static int function_field_index(PyObject *name) {
    for (int i = 0; function_fields[i] != NULL; i++)
        if (PyUnicode_Compare(name, function_field_names[i]) == 0)
            return i;
    return -1;
}

/* --- one step, read the cacheable way. Each returns a new reference and
 * fills *rec (rec->kind = -1 when the step needs no record), or returns NULL
 * with no error when the step is not provably cacheable. */

/* obj.name where it is obj.__dict__[name] for as long as type(obj)'s tag holds;
 * `generic`: object.__getattribute__ was called explicitly. */
static PyObject *cached_instance_attr(PyObject *obj, PyObject *name, int generic, Record *rec) {
    PyTypeObject *tp = Py_TYPE(obj);
    if (!generic && tp->tp_getattro != PyObject_GenericGetAttr) {
        /* a class with __getattr__ (nn.Module) gets slot_tp_getattr_hook, which
         * only calls __getattr__ when __getattribute__ finds nothing */
        if (!(tp->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
            _PyType_Lookup(tp, getattribute_name) != object_getattribute)
            return NULL;
    }
    PyObject *descr = _PyType_Lookup(tp, name); /* also assigns a version tag */
    if ((descr != NULL && Py_TYPE(descr)->tp_descr_set != NULL) || !tag_valid(tp))
        return NULL;
    PyObject *dict = instance_dict(obj);
    PyObject *value = dict ? PyDict_GetItemWithError(dict, name) : NULL;
    if (value == NULL) {
        PyErr_Clear();
        return NULL;
    }
    *rec = (Record){.kind = REC_INSTANCE, .obj = obj, .type = tp, .tag = tp->tp_version_tag,
                    .dict = dict, .version = dict_tag(dict)};
    return Py_NewRef(value);
}

/* obj.__dict__ itself, when it is the standard descriptor's instance dict. */
static PyObject *cached_instance_dict(PyObject *obj, int generic, Record *rec) {
    PyTypeObject *tp = Py_TYPE(obj);
    if (PyType_Check(obj) || (!generic && tp->tp_getattro != PyObject_GenericGetAttr &&
                              (!(tp->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
                               _PyType_Lookup(tp, getattribute_name) != object_getattribute)))
        return NULL;
    PyObject *descr = _PyType_Lookup(tp, dict_name);
    if (descr == NULL || !Py_IS_TYPE(descr, &PyGetSetDescr_Type) || !tag_valid(tp))
        return NULL;
    PyObject *dict = instance_dict(obj);
    if (dict == NULL)
        return NULL;
    *rec = (Record){.kind = REC_DICTPTR, .obj = obj, .type = tp, .tag = tp->tp_version_tag, .dict = dict};
    return Py_NewRef(dict);
}

/* cls.name found on the MRO: a plain value or a function (whose __get__ on a
 * class returns itself), with no data descriptor of that name on the metaclass. */
static PyObject *cached_class_attr(PyObject *cls, PyObject *name, Record *rec) {
    PyTypeObject *meta = Py_TYPE(cls);
    if (meta->tp_getattro != PyType_Type.tp_getattro)
        return NULL;
    PyObject *metadescr = _PyType_Lookup(meta, name);
    if (metadescr != NULL && Py_TYPE(metadescr)->tp_descr_set != NULL)
        return NULL;
    PyObject *value = _PyType_Lookup((PyTypeObject *)cls, name);
    if (value == NULL || (Py_TYPE(value)->tp_descr_get != NULL && !PyFunction_Check(value)))
        return NULL;
    if (!tag_valid((PyTypeObject *)cls) || !tag_valid(meta))
        return NULL;
    *rec = (Record){.kind = REC_CLASS, .obj = cls, .type = (PyTypeObject *)cls,
                    .tag = ((PyTypeObject *)cls)->tp_version_tag, .meta = meta, .metatag = meta->tp_version_tag};
    return Py_NewRef(value);
}

static PyObject *cached_step(Step *s, PyObject *obj, Record *rec) {
    rec->kind = -1;
    switch (s->kind) {
    case STEP_ATTR:
    case STEP_GENERIC_ATTR:
        if (PyFunction_Check(obj) && Py_IS_TYPE(obj, &PyFunction_Type)) {
            int field = function_field_index(s->name);
            if (field >= 0) {
                PyObject *v = function_field(obj, field);
                *rec = (Record){.kind = REC_FIELD, .obj = obj, .field = field, .held = Py_NewRef(v)};
                return Py_NewRef(v);
            }
        }
        if (PyCell_Check(obj) && PyUnicode_Compare(s->name, cell_contents_name) == 0) {
            PyObject *v = PyCell_GET(obj);
            if (v == NULL)
                return NULL; /* empty cell: the ordinary read raises */
            *rec = (Record){.kind = REC_CELL, .obj = obj, .held = Py_NewRef(v)};
            return Py_NewRef(v);
        }
        if (s->kind == STEP_ATTR && PyType_Check(obj))
            return cached_class_attr(obj, s->name, rec);
        if (PyUnicode_Compare(s->name, dict_name) == 0)
            return cached_instance_dict(obj, s->kind == STEP_GENERIC_ATTR, rec);
        return cached_instance_attr(obj, s->name, s->kind == STEP_GENERIC_ATTR, rec);
    case STEP_ITEM:
    case STEP_DICT_ITEM:
        if ((s->kind == STEP_ITEM ? !PyDict_CheckExact(obj) : !PyDict_Check(obj)) || !dict_tag_tracks(obj))
            return NULL;
        {
            PyObject *v = PyDict_GetItemWithError(obj, s->name);
            if (v == NULL) {
                PyErr_Clear();
                return NULL; /* the ordinary read raises KeyError */
            }
            *rec = (Record){.kind = REC_DICT, .obj = obj, .dict = obj, .version = dict_tag(obj)};
            return Py_NewRef(v);
        }
    case STEP_TYPE:
        *rec = (Record){.kind = REC_TYPEOF, .obj = obj, .held = Py_NewRef((PyObject *)Py_TYPE(obj))};
        return Py_NewRef((PyObject *)Py_TYPE(obj));
    case STEP_INDEX:
        /* An item of a tuple needs no record of its own: the record that
         * proved the tuple the same object proves its items. A tuple passed
         * in as the root has no such record (the next call may pass another
         * tuple, and the last walk's items may be freed), so its items are
         * read every call. */
        if (s->parent != 0 && PyTuple_CheckExact(obj)) {
            Py_ssize_t i = PyLong_AsSsize_t(s->name);
            if (i == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                return NULL;
            }
            if (i < 0)
                i += PyTuple_GET_SIZE(obj);
            if (i < 0 || i >= PyTuple_GET_SIZE(obj))
                return NULL;
            return Py_NewRef(PyTuple_GET_ITEM(obj, i)); /* a tuple never changes */
        }
        return NULL;
    }
    return NULL;
}

/* The same step, read the ordinary way (new reference, or NULL with an error). */
static PyObject *plain_step(Step *s, PyObject *obj) {
    switch (s->kind) {
    case STEP_ATTR:
        return PyObject_GetAttr(obj, s->name);
    case STEP_GENERIC_ATTR:
        return PyObject_GenericGetAttr(obj, s->name);
    case STEP_ITEM:
    case STEP_INDEX:
        return PyObject_GetItem(obj, s->name);
    case STEP_DICT_ITEM:
        if (!PyDict_Check(obj)) {
            PyErr_Format(PyExc_TypeError, "dict.__getitem__ on a %.100s", Py_TYPE(obj)->tp_name);
            return NULL;
        }
        {
            PyObject *v = PyDict_GetItemWithError(obj, s->name);
            if (v == NULL && !PyErr_Occurred())
                PyErr_SetObject(PyExc_KeyError, s->name);
            return Py_XNewRef(v);
        }
    case STEP_TYPE:
        return Py_NewRef((PyObject *)Py_TYPE(obj));
    }
    PyErr_SetString(PyExc_SystemError, "SourceReader: unknown step");
    return NULL;
}

static void clear_records(Record *records, int n) {
    for (int i = 0; i < n; i++)
        Py_CLEAR(records[i].held);
}

/* Walk the program from root, recording what makes each step's value the
 * same next time; a step that is not provably cacheable, and everything below
 * it, is "dynamic": re-read every call. New reference to the first `count`
 * leaves, or NULL with an exception (a missing attribute or key: the guard
 * using it fails). */
static PyObject *walk(SourceReader *r, PyObject *root, int count) {
    int n = r->nsteps + 1;
    PyObject **values = PyMem_Calloc(n, sizeof(PyObject *));
    Record *records = PyMem_Calloc(n, sizeof(Record));
    unsigned char *seen = PyMem_Calloc(n, 1); /* per node: bit (1 << REC_*) recorded */
    char *dyn = PyMem_Calloc(n, 1);           /* per node */
    PyObject *result = NULL;
    int nrecords = 0, first_dynamic = -1;
    if (values == NULL || records == NULL || seen == NULL || dyn == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    values[0] = Py_NewRef(root);
    for (int i = 0; i < r->nsteps; i++) {
        Step *s = &r->steps[i];
        PyObject *parent = values[s->parent], *value = NULL;
        Record rec = {.kind = -1};
        if (!dyn[s->parent]) {
            value = cached_step(s, parent, &rec);
            if (value == NULL && PyErr_Occurred())
                goto done;
        }
        if (value == NULL) {
            if (first_dynamic < 0)
                first_dynamic = i;
            dyn[i + 1] = 1;
            value = plain_step(s, parent);
            if (value == NULL)
                goto done;
        } else if (rec.kind >= 0) {
            /* one record per (node, kind), except fields and cells, one per read */
            int bit = 1 << rec.kind;
            if (rec.kind == REC_FIELD || rec.kind == REC_CELL || !(seen[s->parent] & bit)) {
                seen[s->parent] |= bit;
                rec.node = s->parent;
                records[nrecords++] = rec;
            } else {
                Py_CLEAR(rec.held);
            }
        }
        values[i + 1] = value;
    }
    result = PyTuple_New(count);
    if (result == NULL)
        goto done;
    for (int l = 0; l < count; l++)
        PyTuple_SET_ITEM(result, l, Py_NewRef(values[r->leaf_step[l] + 1]));
    /* commit: borrowed pointers for static nodes (each is held by its parent,
     * which the next call checks first), owned ones for dynamic leaves */
    r->walks++;
    r->plain_step = first_dynamic;
    clear_records(r->records, r->nrecords);
    memcpy(r->records, records, nrecords * sizeof(Record));
    r->nrecords = nrecords;
    nrecords = 0; /* moved: their `held` references now belong to r */
    r->ndynamic = 0;
    for (int i = 0; i < r->nsteps; i++) {
        r->dynamic[i] = dyn[i + 1];
        r->ndynamic += dyn[i + 1];
        r->nodes[i + 1] = dyn[i + 1] ? NULL : values[i + 1];
    }
    for (int l = 0; l < r->nleaves; l++) {
        int step = r->leaf_step[l];
        Py_XSETREF(r->held[l], r->dynamic[step] ? Py_NewRef(values[step + 1]) : NULL);
    }
    r->valid = 1;
done:
    if (records != NULL)
        clear_records(records, nrecords);
    if (values != NULL)
        for (int i = 0; i < n; i++)
            Py_XDECREF(values[i]);
    PyMem_Free(values);
    PyMem_Free(records);
    PyMem_Free(seen);
    PyMem_Free(dyn);
    return result;
}

/* The records held: re-read only the dynamic steps. A dynamic leaf that is
 * another object than last time counts as a walk (its checks must run). */
static PyObject *reread(SourceReader *r, PyObject *root, int count) {
    int n = r->nsteps + 1;
    PyObject **fresh = NULL, *result = NULL;
    r->nodes[0] = root;
    if (r->ndynamic) {
        fresh = PyMem_Calloc(n, sizeof(PyObject *));
        if (fresh == NULL)
            return PyErr_NoMemory();
        int changed = 0;
        for (int i = 0; i < r->nsteps; i++) {
            if (!r->dynamic[i])
                continue;
            Step *s = &r->steps[i];
            PyObject *parent = s->parent > 0 && r->dynamic[s->parent - 1] ? fresh[s->parent] : r->nodes[s->parent];
            if ((fresh[i + 1] = plain_step(s, parent)) == NULL)
                goto done;
            if (s->leaf >= 0 && fresh[i + 1] != r->held[s->leaf]) {
                changed |= r->watched[s->leaf];
                Py_XSETREF(r->held[s->leaf], Py_NewRef(fresh[i + 1]));
            }
        }
        if (changed)
            r->walks++;
    }
    result = PyTuple_New(count);
    if (result == NULL)
        goto done;
    for (int l = 0; l < count; l++) {
        int step = r->leaf_step[l];
        PyTuple_SET_ITEM(result, l, Py_NewRef(r->dynamic[step] ? fresh[step + 1] : r->nodes[step + 1]));
    }
done:
    if (fresh != NULL) {
        for (int i = 0; i < n; i++)
            Py_XDECREF(fresh[i]);
        PyMem_Free(fresh);
    }
    return result;
}

/* Whether the last walk's records all hold for this root. */
static int unchanged(SourceReader *r, PyObject *root) {
    for (int i = 0; i < r->nrecords; i++) {
        Record *c = &r->records[i];
        PyObject *obj = c->node == 0 ? root : c->obj;
        switch (c->kind) {
        case REC_DICT:
            if (obj != c->dict || !PyDict_Check(obj) || dict_tag(obj) != c->version)
                return 0;
            break;
        case REC_INSTANCE: {
            PyTypeObject *tp = Py_TYPE(obj);
            if (tp != c->type || !tag_valid(tp) || tp->tp_version_tag != c->tag)
                return 0;
            PyObject **ptr = _PyObject_GetDictPtr(obj);
            if (ptr == NULL || *ptr != c->dict || dict_tag(c->dict) != c->version)
                return 0;
            break;
        }
        case REC_CLASS:
            if (obj != (PyObject *)c->type || Py_TYPE(obj) != c->meta || !tag_valid(c->type) ||
                c->type->tp_version_tag != c->tag || !tag_valid(c->meta) || c->meta->tp_version_tag != c->metatag)
                return 0;
            break;
        case REC_FIELD:
            if (obj != c->obj || function_field(obj, c->field) != c->held)
                return 0;
            break;
        case REC_CELL:
            if (obj != c->obj || PyCell_GET(obj) != c->held)
                return 0;
            break;
        case REC_TYPEOF:
            if ((PyObject *)Py_TYPE(obj) != c->held)
                return 0;
            break;
        case REC_DICTPTR: {
            PyTypeObject *tp = Py_TYPE(obj);
            if (tp != c->type || !tag_valid(tp) || tp->tp_version_tag != c->tag)
                return 0;
            PyObject **ptr = _PyObject_GetDictPtr(obj);
            if (ptr == NULL || *ptr != c->dict)
                return 0;
            break;
        }
        }
    }
    return 1;
}

/* The first `count` leaves for this root: the last walk's if nothing changed. */
static PyObject *read_leaves(SourceReader *r, PyObject *root, int count) {
    if (r->valid && unchanged(r, root))
        return reread(r, root, count);
    return walk(r, root, count);
}

static PyObject *reader_vectorcall(SourceReader *r, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "SourceReader takes one positional argument, the root");
        return NULL;
    }
    return read_leaves(r, args[0], r->nhot);
}

/* all(root): every leaf. A guard reads the few values it checks every call
 * with a call, and the many it only re-checks after a walk with all(). */
static PyObject *reader_all(SourceReader *r, PyObject *root) { return read_leaves(r, root, r->nleaves); }

static PyMethodDef reader_methods[] = {
    {"all", (PyCFunction)reader_all, METH_O, "all(root) -> every leaf (a call returns the first nhot)"},
    {NULL},
};

static int reader_traverse(SourceReader *r, visitproc visit, void *arg) {
    for (int i = 0; i < r->nrecords; i++)
        Py_VISIT(r->records[i].held);
    for (int l = 0; l < r->nleaves && r->held; l++)
        Py_VISIT(r->held[l]);
    return 0;
}

static int reader_clear(SourceReader *r) {
    r->valid = 0;
    clear_records(r->records, r->nrecords);
    r->nrecords = 0;
    for (int l = 0; l < r->nleaves && r->held; l++)
        Py_CLEAR(r->held[l]);
    return 0;
}

static void reader_dealloc(SourceReader *r) {
    PyObject_GC_UnTrack(r);
    reader_clear(r);
    for (int i = 0; i < r->nsteps; i++)
        Py_XDECREF(r->steps[i].name);
    PyMem_Free(r->steps);
    PyMem_Free(r->records);
    PyMem_Free(r->leaf_step);
    PyMem_Free(r->nodes);
    PyMem_Free(r->dynamic);
    PyMem_Free(r->held);
    PyMem_Free(r->watched);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static int valid_name(int kind, PyObject *name) {
    switch (kind) {
    case STEP_INDEX:
        return PyLong_CheckExact(name);
    case STEP_TYPE:
        return name == Py_None;
    default:
        return PyUnicode_CheckExact(name);
    }
}

/* SourceReader(steps, nleaves, nhot=nleaves, watched=None): steps is a
 * sequence of (parent, kind, name, leaf); watched, the leaves whose dynamic
 * change counts as a walk (None: all). */
static PyObject *reader_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *steps, *watched = Py_None;
    int nleaves, nhot = -1;
    static char *names[] = {"steps", "nleaves", "nhot", "watched", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Oi|iO:SourceReader", names, &steps, &nleaves, &nhot, &watched))
        return NULL;
    PyObject *seq = PySequence_Fast(steps, "SourceReader: steps must be a sequence");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    char *filled = NULL;
    SourceReader *r = (SourceReader *)type->tp_alloc(type, 0);
    if (nhot < 0)
        nhot = nleaves;
    if (r == NULL || n > INT_MAX / 4 || nleaves < 0 || nleaves > n || nhot > nleaves) {
        if (r != NULL && !PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "SourceReader: bad number of steps or leaves");
        goto fail;
    }
    r->vectorcall = (vectorcallfunc)reader_vectorcall;
    r->plain_step = -1;
    r->nleaves = nleaves;
    r->steps = PyMem_Calloc(n ? n : 1, sizeof(Step));
    r->records = PyMem_Calloc(n + 1, sizeof(Record));
    r->leaf_step = PyMem_Calloc(nleaves ? nleaves : 1, sizeof(int));
    r->nodes = PyMem_Calloc(n + 1, sizeof(PyObject *));
    r->dynamic = PyMem_Calloc(n ? n : 1, 1);
    r->held = PyMem_Calloc(nleaves ? nleaves : 1, sizeof(PyObject *));
    r->watched = PyMem_Calloc(nleaves ? nleaves : 1, 1);
    filled = PyMem_Calloc(nleaves ? nleaves : 1, 1);
    if (r->steps == NULL || r->records == NULL || r->leaf_step == NULL || r->nodes == NULL ||
        r->dynamic == NULL || r->held == NULL || r->watched == NULL || filled == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    if (watched == Py_None) {
        memset(r->watched, 1, nleaves);
    } else {
        PyObject *it = PyObject_GetIter(watched), *item;
        if (it == NULL)
            goto fail;
        while ((item = PyIter_Next(it)) != NULL) {
            long l = PyLong_AsLong(item);
            Py_DECREF(item);
            if (l < 0 || l >= nleaves) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "SourceReader: watched leaf out of range");
                break;
            }
            r->watched[l] = 1;
        }
        Py_DECREF(it);
        if (PyErr_Occurred())
            goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Step *s = &r->steps[i];
        PyObject *name;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "iiOi:SourceReader step", &s->parent,
                              &s->kind, &name, &s->leaf) ||
            s->parent < 0 || s->parent > i || s->kind < 0 || s->kind >= STEP_KINDS ||
            !valid_name(s->kind, name) || s->leaf < -1 || s->leaf >= nleaves ||
            (s->leaf >= 0 && filled[s->leaf]++)) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "SourceReader: bad step %zd", i);
            goto fail;
        }
        Py_INCREF(name);
        if (PyUnicode_CheckExact(name))
            PyUnicode_InternInPlace(&name);
        s->name = name;
        if (s->leaf >= 0)
            r->leaf_step[s->leaf] = (int)i;
        r->nsteps = (int)i + 1;
    }
    for (int i = 0; i < nleaves; i++)
        if (!filled[i]) {
            PyErr_Format(PyExc_ValueError, "SourceReader: no step gives leaf %d", i);
            goto fail;
        }
    PyMem_Free(filled);
    r->nleaves = nleaves;
    r->nhot = nhot;
    Py_DECREF(seq);
    return (PyObject *)r;
fail:
    PyMem_Free(filled);
    Py_DECREF(seq);
    Py_XDECREF(r);
    return NULL;
}

/* Short, so decompiled replacement code reads as "SourceReader[50](self)". */
static PyObject *reader_repr(SourceReader *r) { return PyUnicode_FromFormat("SourceReader[%d]", r->nhot); }

static PyObject *reader_walks(SourceReader *r, void *unused) { return PyLong_FromSsize_t(r->walks); }

static PyObject *reader_plain_step(SourceReader *r, void *unused) { return PyLong_FromLong(r->plain_step); }

static PyGetSetDef reader_getset[] = {
    {"walks", (getter)reader_walks, NULL,
     "how many calls may have returned other objects than the call before (walks, or a dynamic step's "
     "new value)", NULL},
    {"plain_step", (getter)reader_plain_step, NULL,
     "the first step the last walk could not cache (it and its subtree are read every call), or -1", NULL},
    {NULL},
};

static PyTypeObject SourceReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "framegraph._C.SourceReader",
    .tp_basicsize = sizeof(SourceReader),
    .tp_dealloc = (destructor)reader_dealloc,
    .tp_repr = (reprfunc)reader_repr,
    .tp_vectorcall_offset = offsetof(SourceReader, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "SourceReader(steps, nleaves, nhot=nleaves)(root) -> the first nhot leaves; steps: (parent, kind, name, leaf | -1), "
              "kind 0 attr, 1 str item, 2 type(), 3 int index, 4 object.__getattribute__, 5 dict.__getitem__. "
              "Skips the walk while nothing it read changed.",
    .tp_traverse = (traverseproc)reader_traverse,
    .tp_clear = (inquiry)reader_clear,
    .tp_getset = reader_getset,
    .tp_methods = reader_methods,
    .tp_new = reader_new,
};

/* ---- CachedHash: a base class whose instances are hashed once.
 *
 * Sources and guards are frozen dataclasses, hashed tens of thousands of times in
 * one trace (every dict and set they are kept in); a Python __hash__, even one that
 * returns a stored value, is a call each time. An instance of a subclass hashes
 * with ``type(self)._field_hash(self)`` the first time and keeps the value in its
 * C struct (never in __dict__, which pickling and copying would carry to another
 * process, where str hashes differ). The subclass sets ``__hash__`` to this type's
 * (``CachedHash.__hash__``) so that CPython calls the C slot directly. */
typedef struct {
    PyObject_HEAD
    Py_hash_t hash; /* -1 until the first hash */
} CachedHash;

static PyObject *field_hash_name;

static PyObject *cached_hash_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    CachedHash *self = (CachedHash *)type->tp_alloc(type, 0);
    if (self != NULL)
        self->hash = -1;
    return (PyObject *)self;
}

static Py_hash_t cached_hash_hash(CachedHash *self) {
    if (self->hash != -1)
        return self->hash;
    PyObject *fn = PyObject_GetAttr((PyObject *)Py_TYPE(self), field_hash_name);
    if (fn == NULL)
        return -1;
    PyObject *value = PyObject_CallOneArg(fn, (PyObject *)self);
    Py_DECREF(fn);
    if (value == NULL)
        return -1;
    if (!PyLong_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "_field_hash should return an integer");
        Py_DECREF(value);
        return -1;
    }
    /* the int taken as CPython's slot_tp_hash takes a __hash__'s: as it is when it fits
       (-1 is -2), else its own hash */
    Py_hash_t hash = PyLong_AsSsize_t(value);
    if (hash == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        hash = PyLong_Type.tp_hash(value);
    } else if (hash == -1) {
        hash = -2;
    }
    Py_DECREF(value);
    if (hash != -1)
        self->hash = hash;
    return hash;
}

static PyTypeObject CachedHashType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "framegraph._C.CachedHash",
    .tp_basicsize = sizeof(CachedHash),
    .tp_hash = (hashfunc)cached_hash_hash,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Base class: an instance is hashed once, by type(self)._field_hash(self); subclasses set "
              "__hash__ = CachedHash.__hash__.",
    .tp_new = cached_hash_new,
};

int fg_source_reader_init(PyObject *module) {
    getattribute_name = PyUnicode_InternFromString("__getattribute__");
    cell_contents_name = PyUnicode_InternFromString("cell_contents");
    dict_name = PyUnicode_InternFromString("__dict__");
    if (getattribute_name == NULL || cell_contents_name == NULL || dict_name == NULL)
        return -1;
    for (int i = 0; function_fields[i] != NULL; i++)
        if ((function_field_names[i] = PyUnicode_InternFromString(function_fields[i])) == NULL)
            return -1;
    /* Not tp_dict: from 3.12 a static builtin type keeps its dict per interpreter. */
    object_getattribute = _PyType_Lookup(&PyBaseObject_Type, getattribute_name);
    if (object_getattribute == NULL) {
        PyErr_SetString(PyExc_ImportError, "framegraph._C: object.__getattribute__ not found");
        return -1;
    }
    Py_INCREF(object_getattribute);
    if ((field_hash_name = PyUnicode_InternFromString("_field_hash")) == NULL)
        return -1;
    if (PyType_Ready(&SourceReaderType) < 0 || PyType_Ready(&CachedHashType) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "CachedHash", (PyObject *)&CachedHashType) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "SourceReader", (PyObject *)&SourceReaderType);
}
