"""Python module objects (``torch``, ``torch.nn.functional``, ``math``, a user's own), as
the namespaces they are: attributes read through the module (or through its ``__dict__``,
once the trace has reached it), guarded unless the module is one whose contents are
taken as they are (``STABLE_MODULES``)."""
import types

from ...errors import unsupported
from ...guards.sources import AttrSource
from ..core.base import VariableTracker, stable_module, type_lookup
from ..core.constant import ConstantVariable
from ..core.exceptions import raise_python_error


class PythonModuleVariable(VariableTracker):
    """A Python module object (``torch``, ``torch.nn.functional``, ``math``)."""

    def __init__(self, module, **kwargs):
        super().__init__(**kwargs)
        self.module = module
        self.identity = module

    def python_type(self):
        return types.ModuleType

    def as_python_constant(self):
        return self.module

    def _tracked_dict(self, tx):
        """The tracker of this module's ``__dict__`` if the trace reached it (and may
        have changed it: ``mod.__dict__.update(k=v)``); the module's attributes are
        that dict's items, so reads must see its writes before they are replayed."""
        return tx.output.aliases.tracker_of(self.module.__dict__)

    def getattr(self, tx, name):
        tracked = self._tracked_dict(tx)
        if tracked is not None and name != "__dict__":
            key = ConstantVariable(name)
            if tracked.contains(tx, key):
                return tracked.getitem(tx, key)
            unsupported("unsupported_attribute", f"module {self.module.__name__} has no {name!r}")
        try:
            value = getattr(self.module, name)
        except AttributeError as e:
            self._missing(tx, name, e)
        source = AttrSource(self.source, name) if self.source is not None else None
        stable = stable_module(self.module.__name__)
        return tx.wrap(value, source, guard=not stable)

    def _missing(self, tx, name, error):
        """No ``name``: CPython's AttributeError (the real one's message) in the trace, as
        ``hasattr`` answers False; guarded on the name staying out of the module's
        ``__dict__``, unless the module is one whose contents are taken as they are."""
        stable = stable_module(self.module.__name__)
        if not stable:
            if self.source is None or "__getattr__" in self.module.__dict__:
                unsupported("unsupported_attribute", f"module {self.module.__name__} has no {name!r}")
            tx.output.add_guard("DICT_CONTAINS", AttrSource(self.source, "__dict__"), (name, False))
        raise_python_error(error, f"module {self.module.__name__}")

    def hasattr(self, tx, name):
        if type_lookup(type(self.module), name)[0]:
            return True  # the module type's own (__class__, __dict__): not in the module's dict
        tracked = self._tracked_dict(tx)
        if tracked is not None:
            return tracked.contains(tx, ConstantVariable(name))
        return hasattr(self.module, name)

    def __repr__(self):
        return f"PythonModuleVariable({self.module.__name__})"
