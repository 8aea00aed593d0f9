"""FakeTensors made straight from meta tensors.

torch's FakeTensor constructor is Python that checks its arguments, normalises
the device and writes a dozen attributes through descriptors: about 20 us a
tensor, and a trace makes one for every parameter and buffer it reads and for
every result of a recorded op. What the constructor leaves behind is fixed:
the tensor ``Tensor._make_subclass`` makes, with the mode, the device and
Nones in its ``__dict__``. ``new_fake`` makes that object directly, with one
dict update from a template copied from a FakeTensor the constructor made.

The template is taken, and checked, once a process: a FakeTensor made by the
constructor and one made here from the same meta tensor must have the same
``__dict__`` (every entry but the mode, the device and the parameter mark
None), type and dispatch keys. Where that does not hold (another torch), and
for the calls the constructor treats specially (a device other than the CPU,
whose index it fills in; FakeTensor's debug mode; an export, which tracks the
fakes it makes), the constructor runs.
"""
from typing import Optional

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorConfig

_make_subclass = torch.Tensor._make_subclass
_OWN = ("fake_mode", "_fake_device", "_is_param")  # the entries a call sets; the rest are the template's
_CPU = torch.device("cpu")
_template: Optional[dict] = None
_checked = False


def new_fake(mode, meta: torch.Tensor, device: torch.device, is_param: bool = False) -> FakeTensor:
    """``FakeTensor(mode, meta, device, _is_param=is_param)``, made without the constructor where it may be."""
    if device != _CPU or FakeTensorConfig.debug or torch.compiler.is_exporting() or not _template_holds(mode):
        return FakeTensor(mode, meta, device, _is_param=is_param)
    return _made(mode, meta, device, is_param)


def _made(mode, meta, device, is_param):
    fake = _make_subclass(FakeTensor, meta, meta.requires_grad, dispatch_device=True,
                          device_for_backend_keys=device)
    if mode._allow_unsafe_data_ptr_access:
        torch._C._set_warn_deprecated_on_mutable_data_ptr(fake)
    else:
        torch._C._set_throw_on_mutable_data_ptr(fake)
    state = fake.__dict__
    state.update(_template)
    state["fake_mode"] = mode
    state["_fake_device"] = device
    if is_param:
        state["_is_param"] = True
    return fake


def _template_holds(mode) -> bool:
    """Take the template from the constructor's FakeTensor and check a copy made from it (once)."""
    global _template, _checked
    if _checked:
        return _template is not None
    _checked = True
    made = FakeTensor(mode, torch.empty(2, 3, device="meta", requires_grad=True), _CPU, _is_param=True)
    template = {k: v for k, v in made.__dict__.items() if k not in _OWN}
    if any(v is not None for v in template.values()) or made.__dict__.get("_fake_device") != _CPU:
        return False
    _template = template
    copy = _made(mode, torch.empty(2, 3, device="meta", requires_grad=True), _CPU, True)
    if (type(copy) is not type(made) or copy.__dict__.keys() != made.__dict__.keys()
            or torch._C._dispatch_keys(copy) != torch._C._dispatch_keys(made)
            or copy.requires_grad != made.requires_grad or copy.device != made.device
            or copy.is_leaf != made.is_leaf):
        _template = None
    return _template is not None
