/*
 * framegraph._tensor_check.TensorCheck: the TENSOR_MATCH guards of one cache
 * entry, checked in one call.
 *
 * It checks what torch's own TensorGuards checks (the exact Python type, the
 * dispatch key set under this thread's include/exclude sets, dtype, device
 * index, requires_grad, dim, and every size and stride that is not dynamic),
 * and reads those straight off the TensorImpl. TensorGuards costs about 110 ns
 * a tensor here, which on a module with 50 parameters is most of the guard;
 * this costs a few ns a tensor. guards.py falls back to TensorGuards when this
 * extension was not built.
 *
 * Only real (non-symbolic) sizes are accepted: a tensor with symbolic sizes or
 * strides fails the check, so the guard fails and the frame is retraced.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <c10/core/TensorImpl.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>
#include <vector>

namespace {

constexpr int64_t kAny = INT64_MIN;  // a dynamic size or stride

struct Spec {
  PyTypeObject* type;
  uint64_t keys;  // after the thread-local include/exclude sets, at construction
  caffe2::TypeMeta dtype;
  c10::DeviceIndex device_index;
  bool requires_grad;
  std::vector<int64_t> sizes;    // kAny where dynamic
  std::vector<int64_t> strides;  // kAny where dynamic
};

/* The keys that pick the kernels for this tensor on this thread. Python keys
 * are masked as TensorGuards masks them outside a dispatch mode that sees
 * compile internals (a tensor subclass is caught by its exact type instead). */
struct LocalKeys {
  c10::DispatchKeySet included, excluded;
  LocalKeys() {
    auto tls = c10::impl::tls_local_dispatch_key_set();
    included = tls.included_;
    excluded = tls.excluded_ | c10::DispatchKeySet({c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot,
                                                     c10::DispatchKey::PythonDispatcher});
  }
  uint64_t of(c10::DispatchKeySet ks) const { return ((ks | included) - excluded).raw_repr(); }
};

bool same_ints(c10::SymIntArrayRef have, const std::vector<int64_t>& want) {
  if (have.size() != want.size()) return false;
  for (size_t i = 0; i < want.size(); i++) {
    const c10::SymInt& v = have[i];
    if (v.is_heap_allocated()) return false;  // symbolic
    if (want[i] != kAny && v.as_int_unchecked() != want[i]) return false;
  }
  return true;
}

struct TensorCheckObject {
  PyObject_HEAD
  std::vector<Spec>* specs;
  vectorcallfunc vectorcall;
};

/* obj is borrowed. Anything that is not a defined tensor of the spec's exact
 * type (None, another type, a tensor whose data was released) fails. */
bool matches(const Spec& spec, PyObject* obj, const LocalKeys& local) {
  if (Py_TYPE(obj) != spec.type) return false;
  const at::Tensor& t = THPVariable_Unpack(obj);
  if (!t.defined()) return false;  // its sizes and strides throw
  c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if (local.of(impl->key_set()) != spec.keys) return false;
  if (impl->dtype() != spec.dtype) return false;
  if (impl->device().index() != spec.device_index) return false;
  if (impl->requires_grad() != spec.requires_grad) return false;
  return same_ints(impl->sym_sizes(), spec.sizes) && same_ints(impl->sym_strides(), spec.strides);
}

PyObject* check_vectorcall(TensorCheckObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  const std::vector<Spec>& specs = *self->specs;
  if (kwnames != nullptr || n != (Py_ssize_t)specs.size()) {
    PyErr_Format(PyExc_TypeError, "TensorCheck expects %zd tensors", (Py_ssize_t)specs.size());
    return nullptr;
  }
  // No C++ exception may leave this function: it is called from the
  // interpreter, and one escaping would abort the process. A check that
  // cannot be made fails the guard (the frame is retraced).
  try {
    LocalKeys local;
    for (Py_ssize_t i = 0; i < n; i++) {
      if (!matches(specs[i], args[i], local)) Py_RETURN_FALSE;
    }
  } catch (...) {
    Py_RETURN_FALSE;
  }
  Py_RETURN_TRUE;
}

bool int_list(PyObject* seq, std::vector<int64_t>& out) {
  PyObject* fast = PySequence_Fast(seq, "TensorCheck: sizes and strides are sequences of int or None");
  if (fast == nullptr) return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); i++) {
    PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
    if (item == Py_None) {
      out.push_back(kAny);
      continue;
    }
    long long v = PyLong_AsLongLong(item);
    if (v == -1 && PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
    out.push_back(v);
  }
  Py_DECREF(fast);
  return true;
}

void check_dealloc(TensorCheckObject* self) {
  if (self->specs != nullptr) {
    for (Spec& s : *self->specs) Py_XDECREF((PyObject*)s.type);
    delete self->specs;
  }
  Py_TYPE(self)->tp_free((PyObject*)self);
}

PyTypeObject TensorCheckType = {PyVarObject_HEAD_INIT(nullptr, 0)};

/* TensorCheck(templates, sizes, strides): templates are tensors with the
 * expected type, dtype, device, requires_grad and dispatch keys; sizes and
 * strides give, per template, each dimension's int or None (dynamic). */
PyObject* check_new(PyTypeObject* type, PyObject* args, PyObject* kw) {
  PyObject *templates, *sizes, *strides;
  static const char* names[] = {"templates", "sizes", "strides", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO:TensorCheck", (char**)names, &templates, &sizes, &strides))
    return nullptr;
  PyObject* t = PySequence_Fast(templates, "TensorCheck: templates must be a sequence");
  PyObject* sz = t ? PySequence_Fast(sizes, "TensorCheck: sizes must be a sequence") : nullptr;
  PyObject* st = sz ? PySequence_Fast(strides, "TensorCheck: strides must be a sequence") : nullptr;
  TensorCheckObject* self = nullptr;
  if (st == nullptr) goto fail;
  if (PySequence_Fast_GET_SIZE(t) != PySequence_Fast_GET_SIZE(sz) ||
      PySequence_Fast_GET_SIZE(t) != PySequence_Fast_GET_SIZE(st)) {
    PyErr_SetString(PyExc_ValueError, "TensorCheck: one size list and one stride list per template");
    goto fail;
  }
  self = (TensorCheckObject*)type->tp_alloc(type, 0);
  if (self == nullptr) goto fail;
  self->specs = new std::vector<Spec>();
  self->vectorcall = (vectorcallfunc)check_vectorcall;
  try {
    LocalKeys local;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(t); i++) {
      PyObject* obj = PySequence_Fast_GET_ITEM(t, i);
      if (!THPVariable_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "TensorCheck: templates must be tensors");
        goto fail;
      }
      const at::Tensor& tensor = THPVariable_Unpack(obj);
      if (!tensor.defined()) {
        PyErr_SetString(PyExc_TypeError, "TensorCheck: a template is an undefined tensor");
        goto fail;
      }
      c10::TensorImpl* impl = tensor.unsafeGetTensorImpl();
      Spec spec{Py_TYPE(obj), local.of(impl->key_set()), impl->dtype(),
                impl->device().index(),
                impl->requires_grad(), {}, {}};
      if (!int_list(PySequence_Fast_GET_ITEM(sz, i), spec.sizes) ||
          !int_list(PySequence_Fast_GET_ITEM(st, i), spec.strides))
        goto fail;
      if ((int64_t)spec.sizes.size() != impl->dim() || (int64_t)spec.strides.size() != impl->dim()) {
        PyErr_SetString(PyExc_ValueError, "TensorCheck: sizes and strides must match each template's dim");
        goto fail;
      }
      Py_INCREF((PyObject*)spec.type);
      self->specs->push_back(std::move(spec));
    }
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    goto fail;
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "TensorCheck: unknown C++ exception");
    goto fail;
  }
  Py_DECREF(t);
  Py_DECREF(sz);
  Py_DECREF(st);
  return (PyObject*)self;
fail:
  Py_XDECREF(t);
  Py_XDECREF(sz);
  Py_XDECREF(st);
  Py_XDECREF((PyObject*)self);
  return nullptr;
}

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "framegraph._tensor_check",
                          "TENSOR_MATCH guards checked off the TensorImpl (see tensor_check.cpp).", -1, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__tensor_check(void) {
  TensorCheckType.tp_name = "framegraph._tensor_check.TensorCheck";
  TensorCheckType.tp_basicsize = sizeof(TensorCheckObject);
  TensorCheckType.tp_dealloc = (destructor)check_dealloc;
  TensorCheckType.tp_vectorcall_offset = offsetof(TensorCheckObject, vectorcall);
  TensorCheckType.tp_call = PyVectorcall_Call;
  TensorCheckType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  TensorCheckType.tp_doc =
      "TensorCheck(templates, sizes, strides)(*tensors) -> bool: TensorGuards' checks, read off the TensorImpl.";
  TensorCheckType.tp_new = check_new;
  if (PyType_Ready(&TensorCheckType) < 0) return nullptr;
  PyObject* m = PyModule_Create(&module_def);
  if (m == nullptr) return nullptr;
  if (PyModule_AddObjectRef(m, "TensorCheck", (PyObject*)&TensorCheckType) < 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
