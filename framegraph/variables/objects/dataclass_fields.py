"""``dataclasses.fields(obj)`` over trackers, without tracing its generator.

Every transformers ``ModelOutput`` calls ``fields(self)`` in each
``__setattr__`` and in ``__post_init__``: a model's outputs call it dozens of
times, and traced it is a call, a generator expression resumed once per field
and a ``tuple()`` that drains it (a fifth of the instructions of a CLIP
trace). The model does what the function's three lines do (the same in 3.11
to 3.13), through the same tracker operations, so the guards are the ones a
traced call installs:

    fields = getattr(class_or_instance, '__dataclass_fields__')
    (AttributeError: TypeError('must be called with a dataclass type or instance') from None)
    tuple(f for f in fields.values() if f._field_type is _FIELD)

Only a plain ``dict`` of fields is walked here (what ``@dataclass`` stores);
anything else in that attribute is a graph break.
"""
import dataclasses

from ...errors import unsupported
from ..containers.dicts import ConstDictVariable
from ..containers.lists import TupleVariable
from ..core.exceptions import ExceptionVariable, TracedException
from ..core.constant import ConstantVariable
from ..core.ops import is_op

_FIELDS = "__dataclass_fields__"


def _fields(tx, *args, **kwargs):
    """``dataclasses.fields(class_or_instance)``."""
    if len(args) != 1 or kwargs:
        unsupported("unsupported_call", "dataclasses.fields() takes one argument, class_or_instance")
    try:
        table = args[0].getattr(tx, _FIELDS)
    except TracedException as error:
        if not issubclass(error.value.cls, AttributeError):
            raise
        converted = ExceptionVariable(TypeError, [ConstantVariable("must be called with a dataclass type or instance")])
        converted.context, converted.suppress_context = error.value, True  # `from None`
        leaked = TracedException(converted)
        leaked.chained = True  # its __context__ is the AttributeError, not what the caller handles
        raise leaked from None
    if not (isinstance(table, ConstDictVariable) and table.python_type() is dict):
        unsupported("unsupported_value", f"dataclasses.fields(): {_FIELDS} is a {table.python_type().__name__}")
    field_marker = tx.wrap(dataclasses._FIELD)  # a global of a stable module, as the traced call reads it
    return TupleVariable([field for _, field in table.items.values()
                          if is_op(tx, field.getattr(tx, "_field_type"), field_marker)])


DATACLASS_MODELS = {dataclasses.fields: _fields}
