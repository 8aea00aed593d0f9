/*
 * framegraph._C.SourceReader: reads many values reached from one object by
 * attribute and str-key steps (``self._modules['0']._parameters['weight']``),
 * and skips the walk while nothing on the way changed.
 *
 * A guard and the replacement code of a module both read every parameter
 * through such chains, each call: about 100 ns a step in bytecode, which on a
 * model with hundreds of parameters costs more than the guard's checks.
 *
 * A reader is a program of steps, each (parent node, ATTR | ITEM, name, leaf
 * index or -1); node 0 is the root passed to the call, node i+1 is the value
 * of step i, and a parent always comes before its children. Calling it walks
 * the program and returns the tuple of leaves. While it walks it records, for
 * every container it read from:
 *
 *   - an exact dict read by key: the dict and its version tag (PEP 509; every
 *     dict gets a fresh tag from a global counter when created and on every
 *     change, so an equal tag on the same dict means the same key -> value
 *     identities);
 *   - an object read by attribute: its type and the type's version tag, and
 *     its instance dict with that dict's tag. Only recorded when the attribute
 *     is provably the instance dict's item: the type's __getattribute__ is
 *     object's and no data descriptor of that name is on the type; both facts
 *     hold while the type's version tag is unchanged.
 *
 * The next call first checks those records in walk order, parents first, and
 * returns the leaves of the last walk when all hold. The reader keeps no
 * reference to any of these objects (so it keeps no model alive): a record is
 * only dereferenced after its parent's record held, and a parent that is
 * unchanged still holds its children, so every pointer checked is live. The
 * root's own record compares the instance dict (or dict) the root has now.
 *
 * A step that is not provably a dict read (a property, __getattr__, a dict
 * subclass, a list) makes the walk uncacheable: such a reader walks every
 * call, with PyObject_GetAttr / PyObject_GetItem, and is still exact.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#include "source_reader.h"

enum { STEP_ATTR = 0, STEP_ITEM = 1 };

typedef struct {
    int parent;     /* node index: 0 is the root */
    int kind;       /* STEP_ATTR or STEP_ITEM */
    PyObject *name; /* attribute name (str) or key (str) */
    int leaf;       /* index in the result tuple, or -1 */
} Step;

typedef struct {
    int node;            /* whose container this is (0: the root) */
    int kind;            /* STEP_ATTR: obj/type/dict; STEP_ITEM: dict */
    PyObject *obj;       /* borrowed: the object read by attribute */
    PyTypeObject *type;  /* borrowed */
    unsigned int tag;    /* type's version tag */
    PyObject *dict;      /* borrowed: the instance dict or the dict read by key */
    uint64_t version;    /* its version tag */
} Record;

typedef struct {
    PyObject_HEAD
    int nsteps;
    int nleaves;
    Step *steps;
    /* the last cacheable walk (valid != 0) */
    int valid;
    int nrecords;
    Record *records;
    PyObject **leaves; /* borrowed: live while the records hold */
    Py_ssize_t walks;  /* how many times the program was walked */
    vectorcallfunc vectorcall;
} SourceReader;

static PyObject *object_getattribute = NULL; /* object.__getattribute__ */
static PyObject *getattribute_name = NULL;   /* "__getattribute__" */

_Pragma("GCC diagnostic push")
_Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
static inline uint64_t dict_tag(PyObject *d) { return ((PyDictObject *)d)->ma_version_tag; }
_Pragma("GCC diagnostic pop")

/* The instance dict of obj (materialised if 3.11 keeps it as inline values). */
static PyObject *instance_dict(PyObject *obj) {
    PyObject **ptr = _PyObject_GetDictPtr(obj);
    if (ptr == NULL || *ptr == NULL || !PyDict_CheckExact(*ptr))
        return NULL;
    return *ptr;
}

/* Whether obj.name is obj.__dict__[name] for as long as type(obj)'s version
 * tag is unchanged. */
static int plain_attribute(PyObject *obj, PyObject *name, PyObject **dict_out) {
    PyTypeObject *tp = Py_TYPE(obj);
    if (tp->tp_getattro != PyObject_GenericGetAttr) {
        /* a class with __getattr__ (nn.Module) gets slot_tp_getattr_hook, which
         * only calls __getattr__ when __getattribute__ finds nothing */
        if (!(tp->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
            _PyType_Lookup(tp, getattribute_name) != object_getattribute)
            return 0;
    }
    PyObject *descr = _PyType_Lookup(tp, name); /* also assigns a version tag */
    if (descr != NULL && Py_TYPE(descr)->tp_descr_set != NULL)
        return 0;
    if (!(tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG))
        return 0;
    PyObject *dict = instance_dict(obj);
    if (dict == NULL || PyDict_GetItemWithError(dict, name) == NULL) {
        PyErr_Clear();
        return 0;
    }
    *dict_out = dict;
    return 1;
}

/* Walk the program from root. New reference to the leaves tuple, or NULL with
 * an exception (a missing attribute or key: the guard using it fails). */
static PyObject *walk(SourceReader *r, PyObject *root) {
    int n = r->nsteps + 1;
    PyObject **values = PyMem_Calloc(n, sizeof(PyObject *));
    Record *records = PyMem_Calloc(n, sizeof(Record));
    char *seen = PyMem_Calloc(n, 2);
    PyObject *result = NULL;
    int nrecords = 0, cacheable = 1;
    if (values == NULL || records == NULL || seen == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    values[0] = Py_NewRef(root);
    for (int i = 0; i < r->nsteps; i++) {
        Step *s = &r->steps[i];
        PyObject *parent = values[s->parent], *value = NULL, *dict = NULL;
        if (s->kind == STEP_ATTR) {
            if (cacheable && plain_attribute(parent, s->name, &dict)) {
                value = Py_XNewRef(PyDict_GetItemWithError(dict, s->name));
                if (!seen[2 * s->parent]) {
                    seen[2 * s->parent] = 1;
                    PyTypeObject *tp = Py_TYPE(parent);
                    records[nrecords++] = (Record){s->parent, STEP_ATTR, parent, tp, tp->tp_version_tag,
                                                   dict, dict_tag(dict)};
                }
            } else {
                cacheable = 0;
                value = PyObject_GetAttr(parent, s->name);
            }
        } else if (PyDict_CheckExact(parent)) {
            value = Py_XNewRef(PyDict_GetItemWithError(parent, s->name));
            if (value == NULL && !PyErr_Occurred())
                PyErr_SetObject(PyExc_KeyError, s->name);
            if (cacheable && !seen[2 * s->parent + 1]) {
                seen[2 * s->parent + 1] = 1;
                records[nrecords++] = (Record){s->parent, STEP_ITEM, NULL, NULL, 0, parent, dict_tag(parent)};
            }
        } else {
            cacheable = 0;
            value = PyObject_GetItem(parent, s->name);
        }
        if (value == NULL)
            goto done;
        values[i + 1] = value;
    }
    result = PyTuple_New(r->nleaves);
    if (result == NULL)
        goto done;
    for (int i = 0; i < r->nsteps; i++)
        if (r->steps[i].leaf >= 0)
            PyTuple_SET_ITEM(result, r->steps[i].leaf, Py_NewRef(values[i + 1]));
    r->walks++;
    r->valid = 0;
    if (cacheable) {
        /* borrowed pointers: each is held by its parent, which the next call checks first */
        memcpy(r->records, records, nrecords * sizeof(Record));
        r->nrecords = nrecords;
        for (int i = 0; i < r->nsteps; i++)
            if (r->steps[i].leaf >= 0)
                r->leaves[r->steps[i].leaf] = values[i + 1];
        r->valid = 1;
    }
done:
    if (values != NULL)
        for (int i = 0; i < n; i++)
            Py_XDECREF(values[i]);
    PyMem_Free(values);
    PyMem_Free(records);
    PyMem_Free(seen);
    return result;
}

/* Whether the last walk's records all hold for this root. */
static int unchanged(SourceReader *r, PyObject *root) {
    for (int i = 0; i < r->nrecords; i++) {
        Record *c = &r->records[i];
        PyObject *obj = c->node == 0 ? root : (c->kind == STEP_ATTR ? c->obj : c->dict);
        if (c->kind == STEP_ITEM) {
            if (obj != c->dict || !PyDict_CheckExact(obj) || dict_tag(obj) != c->version)
                return 0;
            continue;
        }
        PyTypeObject *tp = Py_TYPE(obj);
        if (tp != c->type || !(tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) || tp->tp_version_tag != c->tag)
            return 0;
        PyObject **ptr = _PyObject_GetDictPtr(obj);
        if (ptr == NULL || *ptr != c->dict || dict_tag(c->dict) != c->version)
            return 0;
    }
    return 1;
}

static PyObject *reader_vectorcall(SourceReader *r, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "SourceReader takes one positional argument, the root");
        return NULL;
    }
    PyObject *root = args[0];
    if (r->valid && unchanged(r, root)) {
        PyObject *result = PyTuple_New(r->nleaves);
        if (result == NULL)
            return NULL;
        for (int i = 0; i < r->nleaves; i++)
            PyTuple_SET_ITEM(result, i, Py_NewRef(r->leaves[i]));
        return result;
    }
    return walk(r, root);
}

static void reader_dealloc(SourceReader *r) {
    for (int i = 0; i < r->nsteps; i++)
        Py_XDECREF(r->steps[i].name);
    PyMem_Free(r->steps);
    PyMem_Free(r->records);
    PyMem_Free(r->leaves);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

/* SourceReader(steps, nleaves): steps is a sequence of (parent, kind, name, leaf). */
static PyObject *reader_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *steps;
    int nleaves;
    if (!PyArg_ParseTuple(args, "Oi:SourceReader", &steps, &nleaves))
        return NULL;
    PyObject *seq = PySequence_Fast(steps, "SourceReader: steps must be a sequence");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    SourceReader *r = (SourceReader *)type->tp_alloc(type, 0);
    if (r == NULL || n > INT_MAX / 4 || nleaves < 0 || nleaves > n) {
        if (r != NULL && !PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "SourceReader: bad number of steps or leaves");
        goto fail;
    }
    r->steps = PyMem_Calloc(n ? n : 1, sizeof(Step));
    r->records = PyMem_Calloc(n + 1, sizeof(Record));
    r->leaves = PyMem_Calloc(nleaves ? nleaves : 1, sizeof(PyObject *));
    if (r->steps == NULL || r->records == NULL || r->leaves == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    char *filled = PyMem_Calloc(nleaves ? nleaves : 1, 1);
    if (filled == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Step *s = &r->steps[i];
        PyObject *name;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "iiUi:SourceReader step", &s->parent,
                              &s->kind, &name, &s->leaf) ||
            s->parent < 0 || s->parent > i || (s->kind != STEP_ATTR && s->kind != STEP_ITEM) ||
            s->leaf < -1 || s->leaf >= nleaves || (s->leaf >= 0 && filled[s->leaf]++)) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "SourceReader: bad step %zd", i);
            PyMem_Free(filled);
            goto fail;
        }
        Py_INCREF(name);
        PyUnicode_InternInPlace(&name);
        s->name = name;
        r->nsteps = (int)i + 1;
    }
    for (int i = 0; i < nleaves; i++)
        if (!filled[i]) {
            PyErr_Format(PyExc_ValueError, "SourceReader: no step gives leaf %d", i);
            PyMem_Free(filled);
            goto fail;
        }
    PyMem_Free(filled);
    r->nleaves = nleaves;
    r->vectorcall = (vectorcallfunc)reader_vectorcall;
    Py_DECREF(seq);
    return (PyObject *)r;
fail:
    Py_DECREF(seq);
    Py_XDECREF(r);
    return NULL;
}

/* Short, so decompiled replacement code reads as "SourceReader[50](self)". */
static PyObject *reader_repr(SourceReader *r) { return PyUnicode_FromFormat("SourceReader[%d]", r->nleaves); }

static PyObject *reader_walks(SourceReader *r, void *unused) { return PyLong_FromSsize_t(r->walks); }

static PyGetSetDef reader_getset[] = {
    {"walks", (getter)reader_walks, NULL,
     "how many calls walked the steps (the others found nothing changed)", NULL},
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
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "SourceReader(steps, nleaves)(root) -> tuple of leaves; steps: (parent, 0=attr|1=item, "
              "name, leaf | -1). Skips the walk while every dict it read is unchanged.",
    .tp_getset = reader_getset,
    .tp_new = reader_new,
};

int fg_source_reader_init(PyObject *module) {
    getattribute_name = PyUnicode_InternFromString("__getattribute__");
    if (getattribute_name == NULL)
        return -1;
    object_getattribute = PyDict_GetItemString(PyBaseObject_Type.tp_dict, "__getattribute__");
    if (object_getattribute == NULL) {
        PyErr_SetString(PyExc_ImportError, "framegraph._C: object.__getattribute__ not found");
        return -1;
    }
    Py_INCREF(object_getattribute);
    if (PyType_Ready(&SourceReaderType) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "SourceReader", (PyObject *)&SourceReaderType);
}
