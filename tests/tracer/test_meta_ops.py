"""Shape propagation on the meta kernels (framegraph/meta_ops.py) agrees with FakeTensorMode.

The suite runs with ``config.check_meta_ops`` on (tests/conftest.py), so every
op traced anywhere in the tests is also checked against FakeTensorMode. Here
each allowed op is run directly, first on a cache miss and then on a hit.
"""
import operator

import pytest
import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

import framegraph
from framegraph.graph import meta_ops, meta_rules
from helpers import CountingBackend, check


@pytest.fixture
def mode():
    return FakeTensorMode(shape_env=ShapeEnv())


def fake(mode, *shape, dtype=torch.float32, **kw):
    return mode.from_tensor(torch.randn(*shape, **kw).to(dtype), static_shapes=True)


def mode_channels_last(mode, *shape):
    return mode.from_tensor(torch.randn(*shape).to(memory_format=torch.channels_last), static_shapes=True)


def slow(mode, kind, target, args, kwargs):
    with mode:
        return getattr(args[0], target)(*args[1:], **kwargs) if kind == "call_method" else target(*args, **kwargs)


CASES = [
    ("call_function", F.linear, lambda m: (fake(m, 2, 5, 8), fake(m, 4, 8), fake(m, 4)), {}),
    ("call_function", F.layer_norm, lambda m: (fake(m, 2, 5, 8), (8,), fake(m, 8), fake(m, 8)), {}),
    ("call_function", F.gelu, lambda m: (fake(m, 3, 4),), {"approximate": "tanh"}),
    ("call_function", F.softmax, lambda m: (fake(m, 3, 4),), {"dim": -1}),
    ("call_function", F.dropout, lambda m: (fake(m, 3, 4),), {"p": 0.1, "training": False}),
    ("call_function", F.embedding, lambda m: (m.from_tensor(torch.tensor([[1, 2]]), static_shapes=True),
                                              fake(m, 5, 3)), {}),
    ("call_function", torch.cat, lambda m: ([fake(m, 2, 3), fake(m, 4, 3)],), {"dim": 0}),
    ("call_function", torch.split, lambda m: (fake(m, 6, 2), [2, 4]), {}),
    ("call_function", torch.where, lambda m: (fake(m, 3, dtype=torch.bool), fake(m, 3), fake(m, 1)), {}),
    ("call_function", operator.add, lambda m: (fake(m, 3, dtype=torch.int64), 1.5), {}),
    ("call_function", operator.add, lambda m: (fake(m, 3, dtype=torch.int64), 1), {}),
    ("call_function", operator.mul, lambda m: (fake(m, 4, 1), fake(m, 1, 3, dtype=torch.float64)), {}),
    ("call_function", operator.getitem, lambda m: (fake(m, 4, 5, 6), (slice(1, None, 2), None, ..., 0)), {}),
    ("call_function", operator.matmul, lambda m: (fake(m, 2, 3, 4), fake(m, 4, 5)), {}),
    ("call_method", "view", lambda m: (fake(m, 4, 6), 2, -1, 3), {}),
    ("call_method", "transpose", lambda m: (fake(m, 4, 6, 2), 0, 2), {}),
    ("call_method", "contiguous", lambda m: (fake(m, 4, 6).t(),), {}),
    ("call_method", "contiguous", lambda m: (fake(m, 4, 6),), {}),
    ("call_method", "expand", lambda m: (fake(m, 1, 6), 3, 6), {}),
    ("call_method", "chunk", lambda m: (fake(m, 5, 6), 2, -1), {}),
    ("call_method", "float", lambda m: (fake(m, 3, dtype=torch.float16),), {}),
    ("call_method", "masked_fill", lambda m: (fake(m, 3, 3), fake(m, 3, 3, dtype=torch.bool), -1e9), {}),
    ("call_method", "sum", lambda m: (fake(m, 3, 4),), {"dim": 1, "keepdim": True}),
    # what a decoder's attention mask is built from
    ("call_function", operator.le, lambda m: (fake(m, 2, 1, 1, 16), fake(m, 2, 1, 16, 1)), {}),
    ("call_function", operator.and_, lambda m: (fake(m, 2, 1, dtype=torch.bool),
                                                fake(m, 2, 16, dtype=torch.bool)), {}),
    ("call_function", operator.invert, lambda m: (fake(m, 4, dtype=torch.bool),), {}),
    ("call_function", torch.cumsum, lambda m: (fake(m, 2, 16, dtype=torch.int64), -1), {}),
    ("call_function", torch.diff, lambda m: (fake(m, 2, 16, dtype=torch.int64),),
     {"dim": -1}),
    ("call_method", "ne", lambda m: (fake(m, 2, 16, dtype=torch.int64), 1), {}),
    ("call_method", "new_ones", lambda m: (fake(m, 2, 3), (1, 4)), {"dtype": torch.bool}),
    ("call_method", "long", lambda m: (fake(m, 3, dtype=torch.bool),), {}),
    ("call_method", "to", lambda m: (fake(m, 3, 2), torch.float16), {}),
    ("call_method", "to", lambda m: (fake(m, 3, 2),), {"dtype": torch.float32}),  # already: the same tensor
    ("call_function", torch.full_like, lambda m: (fake(m, 3, 4).t(), 2.0), {}),
    ("call_function", torch.zeros_like, lambda m: (fake(m, 3, 4),), {"dtype": torch.int64}),
    ("call_function", F.max_pool2d, lambda m: (fake(m, 2, 8, 16, 16), 2), {}),
    ("call_function", F.adaptive_avg_pool2d,
     lambda m: (mode_channels_last(m, 2, 8, 16, 16), (1, 1)), {}),
    ("call_function", operator.getitem,  # integer tensors index: the result's shape is their broadcast
     lambda m: (fake(m, 2, 16), (fake(m, 2, 1, 1, 1, dtype=torch.int64), fake(m, 1, 1, 16, 1, dtype=torch.int64))),
     {}),
    # what vision models are built of
    ("call_function", F.batch_norm, lambda m: (fake(m, 2, 8, 5, 5), fake(m, 8), fake(m, 8), fake(m, 8), fake(m, 8),
                                               False, 0.1, 1e-5), {}),
    ("call_function", F.batch_norm, lambda m: (mode_channels_last(m, 2, 8, 5, 5), fake(m, 8), fake(m, 8)), {}),
    ("call_function", F.batch_norm, lambda m: (fake(m, 4, 8), None, None), {"training": True}),  # no running stats
    ("call_function", F.group_norm, lambda m: (fake(m, 2, 8, 5, 5), 4, fake(m, 8), fake(m, 8)), {}),
    ("call_function", F.instance_norm, lambda m: (fake(m, 2, 8, 5, 5),), {}),
    ("call_function", F.interpolate, lambda m: (fake(m, 1, 4, 6, 6),), {"scale_factor": 2.0, "mode": "nearest"}),
    ("call_function", F.interpolate, lambda m: (mode_channels_last(m, 1, 4, 6, 6),),
     {"size": (9, 7), "mode": "bilinear", "align_corners": False}),
    ("call_function", F.interpolate, lambda m: (fake(m, 1, 4, 6, 6),), {"scale_factor": 1.5, "mode": "bicubic"}),
    ("call_function", F.interpolate, lambda m: (mode_channels_last(m, 2, 3, 5, 7),),
     {"size": (4, 9), "mode": "nearest-exact"}),
    ("call_function", F.interpolate, lambda m: (fake(m, 2, 3, 5),), {"scale_factor": 3, "mode": "linear"}),
    ("call_function", F.interpolate, lambda m: (fake(m, 1, 2, 3, 4, 5),), {"size": (6, 5, 4), "mode": "trilinear"}),
    ("call_function", F.interpolate, lambda m: (fake(m, 1, 1, 6, 6),), {"size": 3, "mode": "bilinear"}),
    ("call_function", F.interpolate,  # strided like channels last, not dense: a sliced, transposed embedding
     lambda m: (m.from_tensor(torch.randn(3, 21, 8), static_shapes=True)[:, 1:17].transpose(1, 2).view(3, 8, 4, 4),),
     {"size": (6, 6), "mode": "bicubic"}),
    ("call_function", F.interpolate,
     lambda m: (m.from_tensor(torch.randn(2, 3, 8, 8), static_shapes=True)[..., ::2],), {"size": (3, 3)}),
    ("call_function", torch.einsum, lambda m: ("bhqd,bhkd->bhqk", fake(m, 2, 2, 5, 8), fake(m, 2, 2, 7, 8)), {}),
    ("call_function", torch.linalg.vector_norm, lambda m: (fake(m, 3, 4),), {"dim": -1, "keepdim": True}),
    ("call_function", F.hardswish, lambda m: (fake(m, 2, 8, 5, 5),), {}),
    ("call_function", F.hardtanh, lambda m: (mode_channels_last(m, 2, 8, 5, 5), 0.0, 6.0), {}),
    ("call_function", F.relu6, lambda m: (fake(m, 3, 4),), {"inplace": True}),
    ("call_function", F.leaky_relu, lambda m: (fake(m, 3, 4), 0.2), {}),
    ("call_function", F.elu, lambda m: (fake(m, 3, 4, dtype=torch.float64),), {}),
    ("call_function", F.mish, lambda m: (fake(m, 3, 4),), {}),
    ("call_function", F.softplus, lambda m: (fake(m, 3, 4),), {"beta": 2.0}),
    ("call_function", F.glu, lambda m: (fake(m, 3, 8),), {"dim": -1}),
]


@pytest.mark.parametrize("kind,target,make_args,kwargs", CASES,
                         ids=[f"{getattr(c[1], '__name__', c[1])}-{i}" for i, c in enumerate(CASES)])
def test_meta_result_matches_fake_tensor_mode_on_miss_and_hit(mode, kind, target, make_args, kwargs):
    for _ in range(2):  # the first call runs the kernels, the second is rebuilt from the cached spec
        args = make_args(mode)
        with torch.no_grad():
            fast = meta_ops.run_meta(mode, kind, target, args, kwargs)
            assert fast is not meta_ops.NOT_ENGAGED
            assert meta_ops.same_meta(fast, slow(mode, kind, target, args, kwargs))
        for out in fast if isinstance(fast, (tuple, list)) else (fast,):
            assert type(out) is FakeTensor and out.fake_mode is mode and out.device.type == "cpu"


def test_views_alias_their_input_on_a_cache_hit(mode):
    for _ in range(2):
        x = fake(mode, 4, 6)
        y = meta_ops.run_meta(mode, "call_method", "view", (x, 24), {})
        assert torch._C._is_alias_of(y, x) and y._is_view()


def test_not_engaged_where_fake_tensor_mode_must_decide(mode):
    x = fake(mode, 3, 4)
    sym = mode.from_tensor(torch.randn(3, 4))  # dynamic sizes
    const = mode.from_tensor(torch.tensor([1.0, 2.0]))  # FakeTensorMode may fold it
    const.constant = torch.tensor([1.0, 2.0])
    grad = fake(mode, 3, 4, requires_grad=True)
    not_engaged = [
        ("call_function", torch.nonzero, (x,)),  # not on the list: its size depends on data
        ("call_function", operator.add, (sym, 1)),
        ("call_function", operator.add, (const, 1)),
        ("call_function", operator.getitem, (x, fake(mode, 3, dtype=torch.bool))),  # data-dependent size
        ("call_method", "to", (x, "cpu")),
        ("call_function", operator.add, (x, torch.randn(3, 4))),  # a real tensor
        # training mode writes the running statistics: FakeTensorMode's run bumps their versions
        ("call_function", F.batch_norm, (x, fake(mode, 4), fake(mode, 4), None, None, True)),
        ("call_function", F.instance_norm, (fake(mode, 2, 4, 3), fake(mode, 4), fake(mode, 4))),
    ]
    for kind, target, args in not_engaged:
        assert meta_ops.run_meta(mode, kind, target, args, {}) is meta_ops.NOT_ENGAGED, target
    with torch.enable_grad():
        assert meta_ops.run_meta(mode, "call_function", operator.mul, (grad, 2), {}) is meta_ops.NOT_ENGAGED
    with torch.no_grad():
        assert meta_ops.run_meta(mode, "call_function", operator.mul, (grad, 2), {}) is not meta_ops.NOT_ENGAGED


def test_an_op_that_fails_falls_back_and_reports_the_operator_error(framegraph_trace):
    def f(x, w):
        return F.linear(x, w)  # shapes do not match: eager raises too

    fn = framegraph.compile(f, backend="eager")
    with pytest.raises(RuntimeError):
        fn(torch.randn(2, 3), torch.randn(4, 5))
    assert (framegraph_trace.frames, framegraph_trace.graphs) == (1, 0)  # a break at the op: it raises in CPython


def test_default_dtype_is_part_of_the_cache_key():
    def f(x):
        return x + 1.5

    x = torch.arange(3)
    old = torch.get_default_dtype()
    try:
        for dtype in (torch.float32, torch.float64):
            torch.set_default_dtype(dtype)
            check(f, x)
    finally:
        torch.set_default_dtype(old)


@pytest.mark.parametrize("kind, target", [("call_function", operator.iadd), ("call_function", operator.imul),
                                          ("call_method", "add_"), ("call_method", "div_")])
def test_an_in_place_op_returns_its_argument_and_bumps_its_version_on_every_call(mode, kind, target):
    """A residual's ``x += shortcut``, every time the same shapes: never a remembered answer,
    which would skip the write."""
    x = fake(mode, 2, 4, 3, 3)
    for _ in range(3):
        before = x._version
        with torch.no_grad():
            out = meta_ops.run_meta(mode, kind, target, (x, fake(mode, 2, 4, 3, 3)), {})
        assert out is x and x._version == before + 1


def test_an_in_place_write_of_a_shape_or_dtype_the_argument_cannot_take_is_left_to_fake_tensor_mode(mode):
    x = fake(mode, 3, 1)
    with torch.no_grad():
        assert meta_ops.run_meta(mode, "call_function", operator.iadd, (x, fake(mode, 3, 4)), {}) \
            is meta_ops.NOT_ENGAGED  # the result would be 3x4: x cannot hold it
        ints = fake(mode, 3, dtype=torch.int64)
        assert meta_ops.run_meta(mode, "call_function", operator.iadd, (ints, fake(mode, 3)), {}) \
            is meta_ops.NOT_ENGAGED  # float into int
    assert x._version == 0


def test_a_residual_added_in_place_is_one_graph_like_eager():
    def f(x, w):
        out = torch.relu(x * w)
        out += x
        out *= 0.5
        return out

    x, w = torch.randn(2, 4, 3, 3), torch.randn(4, 1, 1)
    with torch.no_grad():
        check(f, x, w, ops=4)  # each op also run by FakeTensorMode and compared (conftest.py)


def test_in_place_on_a_traced_view_changes_the_input_like_eager(framegraph_trace):
    def f(x):
        y = x.view(-1)[1:3]
        y.mul_(10)
        return x.transpose(0, 1).contiguous() + 1

    a, b = torch.randn(2, 3), None
    b = a.clone()
    fn = framegraph.compile(f, backend="eager")
    torch.testing.assert_close(fn(a), f(b))
    torch.testing.assert_close(a, b)
    assert framegraph_trace.graphs == 1


def test_strides_of_size_one_dimensions_do_not_count(mode):
    # reshape of a transposed (1, 2, 6, 32): eager and the meta kernel give the
    # size-1 dimension a fresh stride, FakeTensorMode keeps the input's; no
    # element is addressed through it (a Llama decode step hit this check).
    x = mode.from_tensor(torch.randn(1, 6, 2, 32).transpose(1, 2), static_shapes=True)
    fast = meta_ops.run_meta(mode, "call_method", "reshape", (x, 1, -1, 6, 32), {})
    with mode:
        slow = x.reshape(1, -1, 6, 32)
    assert fast.stride() == torch.randn(1, 6, 2, 32).transpose(1, 2).reshape(1, -1, 6, 32).stride()
    assert meta_ops.same_meta(fast, slow)
    assert not meta_ops.same_meta(fast, slow.transpose(2, 3).contiguous().transpose(2, 3))


def _described(fake):
    return (type(fake), fake.shape, fake.stride(), fake.storage_offset(), fake.dtype, fake.device,
            fake.requires_grad, fake.is_leaf, isinstance(fake, torch.nn.Parameter),
            fake.untyped_storage().nbytes(), torch._C._dispatch_keys(fake))


PLAIN_INPUTS = {
    "parameter": lambda: torch.nn.Parameter(torch.randn(4, 5)),
    "frozen parameter": lambda: torch.nn.Parameter(torch.randn(4, 5), requires_grad=False),
    "buffer": lambda: torch.randn(3, dtype=torch.bfloat16),
    "leaf that requires grad": lambda: torch.randn(2, 3, requires_grad=True),
    "column-major, owning its storage": lambda: torch.empty_strided((3, 4), (1, 3)),
    "scalar": lambda: torch.tensor(2.0),
}


@pytest.mark.parametrize("make", PLAIN_INPUTS.values(), ids=PLAIN_INPUTS.keys())
def test_a_plain_input_is_faked_directly_as_the_converter_would(mode, make):
    from framegraph.graph.dynamic import plain_fake

    t = make()
    direct = plain_fake(mode, t)
    assert direct is not None
    assert _described(direct) == _described(FakeTensorMode().from_tensor(t, static_shapes=True))
    assert mode.from_tensor(t, static_shapes=True) is direct  # memoised as the converter's own


def test_an_input_whose_storage_others_share_goes_through_the_converter(mode):
    from framegraph.graph.dynamic import plain_fake

    base = torch.randn(4, 4)
    shared = torch.randn(6)
    alias = shared.view(2, 3)  # noqa: F841 -- keeps the storage shared
    with_grad = torch.randn(3, requires_grad=True)
    with_grad.grad = torch.ones(3)
    with torch.inference_mode():
        inference = torch.randn(3)
    for t in (base.t(), base[1:], shared, with_grad, torch.randn(3, requires_grad=True) * 2, inference,
              torch.randn(4).expand(3, 4), torch.randn(2, 2).to_sparse()):
        assert plain_fake(mode, t) is None
    # and the converter keeps the aliasing: the fakes share their storage as the tensors do
    fake_alias, fake_shared = mode.from_tensor(alias, static_shapes=True), mode.from_tensor(shared, static_shapes=True)
    assert fake_alias.untyped_storage()._cdata == fake_shared.untyped_storage()._cdata


def test_tied_weights_stay_one_input_and_share_their_fake():
    lin = torch.nn.Linear(4, 4, bias=False)
    emb = torch.nn.Embedding(4, 4)
    emb.weight = lin.weight  # tied, as language models tie their embeddings

    def f(ids):
        return lin(emb(ids))

    backend = CountingBackend()
    ids = torch.tensor([[0, 1, 3]])
    with torch.no_grad():
        out = framegraph.compile(f, backend=backend)(ids)
        assert torch.equal(out, f(ids))
    assert backend.frame_count == 1
    assert len(backend.example_inputs[0]) == 2  # ids and the one weight


LAYOUTS = {
    "contiguous": lambda m, dtype: fake(m, 2, 8, 5, 3, dtype=dtype),
    "channels last": lambda m, dtype: m.from_tensor(
        torch.randn(2, 8, 5, 3).to(dtype).to(memory_format=torch.channels_last), static_shapes=True),
    "transposed": lambda m, dtype: m.from_tensor(torch.randn(2, 8, 3, 5).to(dtype).transpose(2, 3),
                                                 static_shapes=True),
    "sliced": lambda m, dtype: m.from_tensor(torch.randn(2, 8, 5, 6).to(dtype)[..., ::2], static_shapes=True),
    "size-one dims": lambda m, dtype: fake(m, 1, 8, 1, 3, dtype=dtype),
}


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int64])
def test_ops_whose_result_is_like_their_input_agree_with_fake_tensor_mode(mode, layout, dtype):
    for target in meta_rules.LIKE_INPUT:
        x = layout(mode, dtype)
        if target is F.batch_norm:
            args = (x, *(fake(mode, 8, dtype=dtype) for _ in range(4)), False)
        else:
            args = (x,)
        with torch.no_grad():
            try:
                expected = slow(mode, "call_function", target, args, {})
            except (RuntimeError, ValueError):
                continue  # not defined for this dtype (integer activations)
            fast = meta_ops.run_meta(mode, "call_function", target, args, {})
            assert meta_ops.same_meta(fast, expected), (target, fast.stride(), expected.stride())


LAYOUTS_2D = {
    "contiguous": lambda m, dtype: fake(m, 6, 4, dtype=dtype),
    "transposed": lambda m, dtype: fake(m, 4, 6, dtype=dtype).t(),
    "sliced": lambda m, dtype: fake(m, 6, 8, dtype=dtype)[:, ::2],
    "expanded": lambda m, dtype: fake(m, 1, 4, dtype=dtype).expand(6, 4),
}


def _rule_calls(m, x, dtype):
    """Calls of each op with a rule, around ``x`` (last dimension 3 or 4)."""
    n = x.shape[-1]
    w, b = fake(m, n, dtype=dtype), fake(m, n, dtype=dtype)
    yield F.layer_norm, (x, (n,), w, b)
    yield F.layer_norm, (x, (n,), None, None)
    yield torch.layer_norm, (x, x.shape[-2:], fake(m, *x.shape[-2:], dtype=dtype), None)
    yield F.linear, (x, fake(m, 7, n, dtype=dtype), fake(m, 7, dtype=dtype))
    yield F.linear, (x, fake(m, 7, n, dtype=dtype))
    yield F.linear, (x[0, 0, 0], fake(m, 7, n, dtype=dtype))  # a vector in


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int64])
def test_layer_norm_and_linear_by_rule_agree_with_fake_tensor_mode(mode, layout, dtype):
    engaged = 0
    for target, args in _rule_calls(mode, layout(mode, dtype), dtype):
        with torch.no_grad():
            try:
                expected = slow(mode, "call_function", target, args, {})
            except (RuntimeError, ValueError):
                expected = None  # not defined for this dtype: the rule leaves it to the kernels
            spec = meta_rules.RULES[target](target, args, {}, [a for a in args if isinstance(a, torch.Tensor)])
            fast = meta_ops.run_meta(mode, "call_function", target, args, {})
            if expected is None:
                assert spec is None
                continue
            assert meta_ops.same_meta(fast, expected), (target, fast.stride(), expected.stride())
            engaged += spec is not None
    assert engaged == (6 if dtype.is_floating_point else 0)


@pytest.mark.parametrize("first", LAYOUTS_2D.values(), ids=LAYOUTS_2D.keys())
@pytest.mark.parametrize("second", LAYOUTS_2D.values(), ids=LAYOUTS_2D.keys())
def test_addmm_by_rule_agrees_with_fake_tensor_mode_for_any_layout_and_bias(mode, first, second):
    m1, m2 = first(mode, torch.float32), second(mode, torch.float32).t()  # 6x4 @ 4x6
    for bias in (fake(mode, 6), fake(mode, 6, 6).t(), fake(mode, 1, 6), fake(mode, 6, 1), mode.from_tensor(torch.tensor(1.0), static_shapes=True)):
        with torch.no_grad():
            expected = slow(mode, "call_function", torch.addmm, (bias, m1, m2), {"beta": 0.5})
            assert meta_rules.addmm(torch.addmm, (bias, m1, m2), {"beta": 0.5}, [bias, m1, m2]) is not None
            fast = meta_ops.run_meta(mode, "call_function", torch.addmm, (bias, m1, m2), {"beta": 0.5})
        assert meta_ops.same_meta(fast, expected), (fast.stride(), expected.stride())


def test_a_rule_leaves_a_wrong_call_to_the_kernels(mode):
    def wrong(t):  # ``t(*shape, dtype=)`` makes a tensor: each call is an error in eager
        x = t(2, 5)
        return [
            (F.linear, (x, t(3, 4))),  # features do not match
            (F.linear, (x, t(3, 5, dtype=torch.float64))),  # dtypes differ
            (F.layer_norm, (x, (4,))),  # normalized shape is not x's last
            (F.layer_norm, (x, (5,), t(4))),  # weight of another shape
            (torch.addmm, (t(3), x.t(), t(5, 3))),  # 5x2 @ 5x3
            (torch.addmm, (t(4), x, t(5, 3))),  # bias does not broadcast
        ]

    for target, args in wrong(lambda *shape, dtype=torch.float32: fake(mode, *shape, dtype=dtype)):
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        assert meta_rules.RULES[target](target, args, {}, tensors) is None, target
    for target, args in wrong(lambda *shape, dtype=torch.float32: torch.randn(*shape, dtype=dtype)):
        with pytest.raises(RuntimeError):
            target(*args)


CONVOLUTIONS = [  # (in channels, out channels, groups, stride, padding, dilation)
    (4, 8, 1, 1, 0, 1), (8, 8, 8, 1, 3, 1), (6, 9, 3, 2, 1, 1), (4, 4, 1, (2, 1), (1, 0), (1, 2)),
]


@pytest.mark.parametrize("input_format", [torch.contiguous_format, torch.channels_last])
@pytest.mark.parametrize("weight_format", [torch.contiguous_format, torch.channels_last])
@pytest.mark.parametrize("mkldnn", [True, False])
def test_conv2d_by_rule_agrees_with_fake_tensor_mode_in_every_memory_format(mode, input_format, weight_format,
                                                                              mkldnn):
    # the backend's choice reads torch.backends flags (cuDNN's, on CUDA): the rule asks it on
    # each call, and agrees with FakeTensorMode under either oneDNN setting
    with torch.backends.mkldnn.flags(enabled=mkldnn):
        for cin, cout, groups, stride, padding, dilation in CONVOLUTIONS:
            x = mode.from_tensor(torch.randn(2, cin, 9, 7).to(memory_format=input_format), static_shapes=True)
            w = mode.from_tensor(torch.randn(cout, cin // groups, 3, 3).to(memory_format=weight_format),
                                 static_shapes=True)
            for args in ((x, w, fake(mode, cout), stride, padding, dilation, groups), (x, w, None, stride)):
                if len(args) == 4 and groups != 1:
                    continue
                with torch.no_grad():
                    expected = slow(mode, "call_function", F.conv2d, args, {})
                    assert meta_rules.conv2d(F.conv2d, args, {}, [a for a in args[:3] if a is not None])
                    fast = meta_ops.run_meta(mode, "call_function", F.conv2d, args, {})
                assert meta_ops.same_meta(fast, expected), (args[3:], fast.stride(), expected.stride())


def test_conv2d_the_rule_does_not_take_is_left_to_fake_tensor_mode(mode):
    x, w = fake(mode, 2, 4, 9, 7), fake(mode, 8, 4, 3, 3)
    for args, kwargs in [((x, w, None, 1, "same"), {}), ((x, w), {"stride": 2}), ((x[0], w), {}),
                         ((x, fake(mode, 8, 2, 3, 3)), {}), ((x, w, None, 1, 0, 1, 3), {})]:
        assert meta_ops.run_meta(mode, "call_function", F.conv2d, args, kwargs) is meta_ops.NOT_ENGAGED


def test_an_empty_constant_beside_a_tensor_takes_the_kernels_and_agrees(mode):
    # a cache's first update: torch.cat([torch.tensor([]), keys]), the empty one a constant
    with mode:
        empty = torch.tensor([], dtype=torch.float32)
    assert empty.constant is not None
    keys = fake(mode, 2, 2, 16, 8)
    with torch.no_grad():
        fast = meta_ops.run_meta(mode, "call_function", torch.cat, ([empty, keys],), {"dim": -2})
        expected = slow(mode, "call_function", torch.cat, ([empty, keys],), {"dim": -2})
        assert meta_ops.same_meta(fast, expected) and fast.constant is None
        # only constants: FakeTensorMode folds them into a constant result
        assert meta_ops.run_meta(mode, "call_function", torch.cat, ([empty, empty],), {}) is meta_ops.NOT_ENGAGED


@pytest.mark.parametrize("layout", ["heads first", "heads second"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_attention_agrees_with_fake_tensor_mode_under_each_backend_choice(mode, layout, dtype):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def qkv(heads, length):
        if layout == "heads first":
            return fake(mode, 2, heads, length, 8, dtype=dtype)
        return mode.from_tensor(torch.randn(2, length, heads, 8, dtype=dtype).transpose(1, 2), static_shapes=True)

    q, k, v = qkv(4, 5), qkv(2, 7), qkv(2, 7)
    mask = mode.from_tensor(torch.ones(5, 7, dtype=torch.bool), static_shapes=True)
    calls = [((q, q, q), {"is_causal": True}), ((q, k, v), {"attn_mask": mask, "enable_gqa": True}),
             ((q, k, v), {"scale": 0.5, "enable_gqa": True})]
    both, math = [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], [SDPBackend.MATH]
    # each choice twice (the kernels, then the remembered answer), and back: the flags are in the key
    for backends in (both, both, math, math, both):
        with sdpa_kernel(backends), torch.no_grad():
            for args, kwargs in calls:
                fast = meta_ops.run_meta(mode, "call_function", F.scaled_dot_product_attention, args, kwargs)
                expected = slow(mode, "call_function", F.scaled_dot_product_attention, args, kwargs)
                assert meta_ops.same_meta(fast, expected), (backends, kwargs, fast.stride(), expected.stride())
