"""_C.dict_version: the PEP 509 version tag guards/skips.py relies on to skip item checks."""
import collections

from framegraph import _C, pyver


def test_every_change_gives_a_new_version_and_reads_keep_it():
    d = {"a": 1}
    seen = [_C.dict_version(d)]

    def changed():
        v = _C.dict_version(d)
        assert v not in seen
        seen.append(v)

    d["a"] in d and d.get("b") and list(d)  # reads
    assert _C.dict_version(d) == seen[-1]
    d["a"] = seen  # another object
    changed()
    d["b"] = 2
    changed()
    del d["b"]
    changed()
    d.setdefault("c", 3)
    changed()
    d.pop("c")
    changed()
    d.update(e=5)
    changed()
    d.popitem()
    changed()
    d.clear()
    changed()
    assert _C.dict_version({}) not in seen  # a new dict never reuses a version


def test_storing_the_same_object_changes_nothing():
    value = object()
    d = {"a": value}
    v = _C.dict_version(d)
    d["a"] = value
    assert _C.dict_version(d) == v


def test_instance_dict_attribute_stores_are_seen():
    class C:
        pass

    if pyver.VERSION >= (3, 13):  # inline values: stores skip the tag, so no tag is given
        obj = C()
        obj.x = 0
        assert _C.dict_version(obj.__dict__) is None
        return

    obj = C()
    obj.x = 0
    d = obj.__dict__
    versions = set()
    for i in range(100):  # let CPython specialise the STORE_ATTR
        obj.x = object()
        versions.add(_C.dict_version(d))
    assert len(versions) == 100


def test_module_globals_and_subclasses():
    assert isinstance(_C.dict_version(globals()), int)
    assert _C.dict_version(collections.OrderedDict()) is None
    assert _C.dict_version(collections.defaultdict(int)) is None
    assert _C.dict_version([1]) is None and _C.dict_version(None) is None
