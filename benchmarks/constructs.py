"""PyTorch's own constructs for what a plain trace cannot do: framegraph and torch._dynamo side by side.

    .venv/bin/python benchmarks/constructs.py --json benchmarks/constructs_results.json
    .venv/bin/python benchmarks/constructs.py --only brief_g_cond,scan_reverse
    .venv/bin/python benchmarks/constructs.py --one brief_g_cond --compiler framegraph

Each construct is a small self-contained program after an example of
PyTorch's documentation or tutorials, in one of these groups: control flow
operators (``torch.cond``, ``while_loop``, ``scan``, ``map``,
``associative_scan``), torch.func transforms, flex attention, module hooks,
NumPy, recurrent modules, tensor metadata writes, data-dependent values (also
with both compilers' ``capture_scalar_outputs`` and
``capture_dynamic_output_shape_ops`` on: ``*_captured``),
custom ops and autograd Functions, and nested compilers (``torch.compile``
inside, activation checkpointing, ``torch.compiler.disable``).

Every (construct, compiler) pair runs in its own fresh process
(``--one NAME --compiler framegraph|dynamo``), two at a time, under a
timeout (``--timeout``, 120 s): one that runs past it is recorded as "hang",
one that exits non-zero or dies of a signal as "crash", and the run goes on.
The process seeds torch, runs the program eagerly for the reference, builds
it again from the same seed and runs it compiled with a pass-through backend
that counts the graphs it is given (``fullgraph=False`` for both). It prints
one JSON line:

* ``graphs``: graphs the backend was given over every compiled call;
* ``match``: ``exact`` (``torch.equal`` on every output leaf), ``close``
  (``allclose`` with rtol 1e-5, atol 1e-6) or ``mismatch: ...``. The leaves
  are the outputs of every call (some programs call twice, changing a hook in
  between), the ``requires_grad`` of the output tensors, state the program
  observes (hook logs, a mutated input) and, where the program does a
  backward, the gradients;
* ``error``: what the compiled call raised, if it did;
* ``first_s``: seconds of the first compiled call (trace, backend, run),
  after the compiler has compiled an unrelated function once, so that
  one-time costs (imports; torch.cond, scan and the like run torch._dynamo
  even in eager) land on neither;
* ``breaks``: a few graph-break or fallback reasons of the compiler.

Without ``--one`` it prints a markdown table and a summary: the constructs
where framegraph gives eager's answer without hang, crash or error, in no
more graphs than torch._dynamo (where torch._dynamo hangs or crashes there is
no count to compare, and eager's answer is enough; where it captured no graph
and ran the program eagerly, framegraph's one graph with no break counts as no
more). The summary also says how
many of those framegraph passes with no graph at all (the frame ran
unmodified) where torch._dynamo captured one, and the notes give the first
break or fallback reason there. ``--only NAME[,NAME]`` runs a subset,
``--json PATH`` writes every result, ``--list`` names the constructs,
``--jobs`` sets how many processes run at a time (2). Nothing here is
asserted in tests.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

RTOL, ATOL = 1e-5, 1e-6
CONSTRUCTS = {}  # name -> (group, build function), in the table's order


def construct(group):
    def register(build):
        CONSTRUCTS[build.__name__] = (group, build)
        return build
    return register


class Case:
    """One program: ``fn(*args)`` is what gets compiled.

    grads: tensors whose ``.grad`` is compared after a backward of the first
    call's output; then: callables run before each further call (a hook
    removed, say); observe: state compared after the last call; cleanup:
    undoes what outlives the program (a global hook)."""

    def __init__(self, fn, *args, grads=(), then=(), observe=None, cleanup=None):
        self.fn, self.args = fn, args
        self.grads, self.then, self.observe, self.cleanup = list(grads), list(then), observe, cleanup
        self.capture = False  # both compilers' capture_scalar_outputs and capture_dynamic_output_shape_ops


def captured(build):
    """Register ``build``'s program again as ``<name>_captured``, compiled with both
    compilers' ``capture_scalar_outputs`` and ``capture_dynamic_output_shape_ops`` on."""
    def variant():
        case = build()
        case.capture = True
        return case
    variant.__name__ = build.__name__ + "_captured"
    CONSTRUCTS[variant.__name__] = ("data-dependent, captured", variant)
    return build


def params(*modules):
    return [p for m in modules for p in m.parameters()]


# --- control flow operators ------------------------------------------------------------------

@construct("control flow")
def brief_g_cond():
    import torch

    def g(x):
        return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))
    return Case(g, torch.randn(8))


@construct("control flow")
def cond_two_operands():
    import torch

    def f(x, y):
        return torch.cond(x.max() > y.max(), lambda a, b: a + b, lambda a, b: a - b, (x, y))
    return Case(f, torch.randn(4, 3), torch.randn(4, 3))


@construct("control flow")
def cond_closure():
    import torch

    w = torch.randn(4)

    def f(x):
        return torch.cond(x.mean() > 0, lambda x: x + w, lambda x: x * w, (x,))
    return Case(f, torch.randn(3, 4))


@construct("control flow")
def cond_module_params():
    import torch
    from torch import nn

    class CondModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)

        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda x: self.a(x).relu(), lambda x: self.b(x).tanh(), (x,))
    return Case(CondModel(), torch.randn(2, 4))


@construct("control flow")
def cond_nested():
    import torch

    def f(x, y):
        def outer_true(x):
            return torch.cond(x.mean() > 0, lambda x: x * 2, lambda x: x / 2, (x,))

        def outer_false(x):
            return x - 1
        return torch.cond(y.sum() > 0, outer_true, outer_false, (x,))
    return Case(f, torch.randn(5), torch.randn(3).abs())


@construct("control flow")
def cond_tuple_out():
    import torch

    def f(x):
        return torch.cond(x.sum() < 0, lambda x: (x.sin(), x.cos() * 2), lambda x: (x.cos(), x.sin() * 2), (x,))
    return Case(f, torch.randn(6))


@construct("control flow")
def cond_shape_pred():
    import torch
    from torch import nn

    class DynamicShapeCondPredicate(nn.Module):
        def forward(self, x):
            def true_fn(x):
                return x.cos()

            def false_fn(x):
                return x.sin()
            return torch.cond(x.shape[0] > 4, true_fn, false_fn, (x,))
    return Case(DynamicShapeCondPredicate(), torch.randn(6, 3))


@construct("control flow")
def cond_python_bool():
    import torch

    def f(x, flag):
        return torch.cond(flag, lambda x: x * 3, lambda x: x + 3, (x,))
    return Case(f, torch.randn(4), True)


@construct("control flow")
def cond_backward():
    import torch
    from torch import nn

    lin = nn.Linear(4, 4)
    x = torch.randn(3, 4, requires_grad=True)

    def f(x):
        return torch.cond(x.sum() > 0, lambda x: lin(x).sin(), lambda x: lin(x).cos(), (x,))
    return Case(f, x, grads=[x, *params(lin)])


@construct("control flow")
def while_loop_counter():
    import torch
    from torch._higher_order_ops import while_loop

    def f(it, x):
        def cond_fn(it, x):
            return it.sum() < 10

        def body_fn(it, x):
            return it + 1, x.sin()
        return while_loop(cond_fn, body_fn, (it, x))
    return Case(f, torch.zeros(1), torch.randn(3, 4))


@construct("control flow")
def while_loop_closure():
    import torch
    from torch._higher_order_ops import while_loop

    w = torch.randn(4, 4) * 0.5

    def f(x):
        def cond_fn(i, x):
            return (i < 6) & (x.abs().sum() < 100)

        def body_fn(i, x):
            return i + 1, torch.tanh(x @ w) + x
        return while_loop(cond_fn, body_fn, (torch.tensor(0), x))
    return Case(f, torch.randn(2, 4))


@construct("control flow")
def scan_cumsum():
    import torch
    from torch._higher_order_ops import scan

    def add(x, y):
        next_carry = y = x + y
        return next_carry, y.clone()

    def f(init, xs):
        return scan(add, init=init, xs=xs)
    return Case(f, torch.zeros(3), torch.randn(5, 3))


@construct("control flow")
def scan_dim():
    import torch
    from torch._higher_order_ops import scan

    def step(c, x):
        c = c * 0.5 + x
        return c, c.sum(-1)

    def f(init, xs):
        return scan(step, init, xs, dim=1)
    return Case(f, torch.zeros(3, 4), torch.randn(3, 5, 4))


@construct("control flow")
def scan_reverse():
    import torch
    from torch._higher_order_ops import scan

    def step(c, x):
        c = torch.maximum(c, x) + 0.1
        return c, c * x

    def f(init, xs):
        return scan(step, init, xs, reverse=True)
    return Case(f, torch.zeros(4), torch.randn(6, 4))


@construct("control flow")
def scan_pytree_init():
    import torch
    from torch._higher_order_ops import scan

    def step(carry, xs):
        a, b = xs
        new = {"sum": carry["sum"] + a, "prod": carry["prod"] * b.sigmoid()}
        return new, (new["sum"] - new["prod"], a * b)

    def f(s, p, a, b):
        return scan(step, {"sum": s, "prod": p}, (a, b))
    return Case(f, torch.zeros(3), torch.ones(3), torch.randn(4, 3), torch.randn(4, 3))


@construct("control flow")
def scan_backward():
    import torch
    from torch._higher_order_ops import scan

    w = torch.randn(3, 3, requires_grad=True)
    xs = torch.randn(5, 3, requires_grad=True)

    def step(c, x):
        c = torch.tanh(c @ w + x)
        return c, c.sum()

    def f(init, xs):
        return scan(step, init, xs)
    return Case(f, torch.zeros(3), xs, grads=[xs, w])


@construct("control flow")
def map_hop():
    import torch
    from torch._higher_order_ops import map

    def f(xs, y):
        return map(lambda x, y: x.sin() * y + x, xs, y)
    return Case(f, torch.randn(4, 3), torch.randn(3))


@construct("control flow")
def associative_scan_add():
    import torch
    from torch._higher_order_ops import associative_scan

    def f(xs):
        return associative_scan(lambda a, b: a + b, xs, dim=0, combine_mode="generic")
    return Case(f, torch.randn(8, 3))


@construct("control flow")
def associative_scan_max():
    import torch
    from torch._higher_order_ops import associative_scan

    def f(xs):
        return associative_scan(torch.maximum, xs, dim=1, reverse=True, combine_mode="generic")
    return Case(f, torch.randn(2, 7))


# --- torch.func ------------------------------------------------------------------------------

@construct("torch.func")
def vmap_dot():
    import torch

    def f(x, y):
        return torch.vmap(torch.dot)(x, y)
    return Case(f, torch.randn(2, 5), torch.randn(2, 5))


@construct("torch.func")
def func_vmap_in_dims():
    import torch
    from torch.func import vmap

    def f(x, w):
        return vmap(lambda x, w: (x @ w).relu(), in_dims=(1, None), out_dims=1)(x, w)
    return Case(f, torch.randn(5, 3, 4), torch.randn(4, 2))


@construct("torch.func")
def vmap_module():
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))

    def f(x):
        return torch.vmap(model)(x)
    return Case(f, torch.randn(3, 2, 4))


@construct("torch.func")
def func_grad():
    import torch
    from torch.func import grad

    def f(x):
        return grad(lambda x: (x.sin() * x).sum())(x)
    return Case(f, torch.randn(5))


@construct("torch.func")
def func_grad_and_value():
    import torch
    from torch.func import grad_and_value

    w = torch.randn(4)

    def f(x):
        return grad_and_value(lambda x: torch.sin(x @ w))(x)
    return Case(f, torch.randn(4))


@construct("torch.func")
def func_vjp():
    import torch
    from torch.func import vjp

    def f(x, v):
        out, vjp_fn = vjp(torch.sin, x)
        return out, vjp_fn(v)
    return Case(f, torch.randn(5), torch.randn(5))


@construct("torch.func")
def func_jvp():
    import torch
    from torch.func import jvp

    def f(x, t):
        return jvp(lambda x: x.sin() * x.cos(), (x,), (t,))
    return Case(f, torch.randn(5), torch.ones(5))


@construct("torch.func")
def func_jacrev():
    import torch
    from torch.func import jacrev

    w = torch.randn(3, 3)

    def f(x):
        return jacrev(lambda x: torch.tanh(w @ x))(x)
    return Case(f, torch.randn(3))


@construct("torch.func")
def func_jacfwd():
    import torch
    from torch.func import jacfwd

    def f(x):
        return jacfwd(lambda x: x.sin() * x.sum())(x)
    return Case(f, torch.randn(4))


@construct("torch.func")
def func_hessian():
    import torch
    from torch.func import hessian

    def f(x):
        return hessian(lambda x: x.sin().sum() + (x ** 3).sum())(x)
    return Case(f, torch.randn(3))


@construct("torch.func")
def func_functional_call():
    import torch
    from torch import nn
    from torch.func import functional_call

    model = nn.Linear(3, 3)
    new = {"weight": torch.ones(3, 3), "bias": torch.zeros(3)}

    def f(x):
        return functional_call(model, new, (x,)), model(x)
    return Case(f, torch.randn(2, 3))


@construct("torch.func")
def per_sample_grads():
    import torch
    import torch.nn.functional as F
    from torch import nn
    from torch.func import functional_call, grad, vmap

    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    ps = {k: v.detach() for k, v in model.named_parameters()}

    def loss(ps, x, t):
        out = functional_call(model, ps, (x.unsqueeze(0),))
        return F.cross_entropy(out, t.unsqueeze(0))

    def f(ps, x, t):
        return vmap(grad(loss), in_dims=(None, 0, 0))(ps, x, t)
    return Case(f, ps, torch.randn(4, 6), torch.tensor([0, 2, 1, 0]))


# --- flex attention --------------------------------------------------------------------------

def _qkv():
    import torch

    # flex attention has no backward on CPU, so these run forward only
    return [torch.randn(1, 2, 128, 16) for _ in range(3)]


@construct("flex attention")
def flex_relative_bias():
    from torch.nn.attention.flex_attention import flex_attention

    def relative_positional(score, b, h, q_idx, kv_idx):
        return score + (q_idx - kv_idx)

    def f(q, k, v):
        return flex_attention(q, k, v, score_mod=relative_positional)
    return Case(f, *_qkv())


@construct("flex attention")
def flex_closure_bias():
    import torch
    from torch.nn.attention.flex_attention import flex_attention

    slopes = torch.tensor([0.5, 0.25])

    def alibi(score, b, h, q_idx, kv_idx):
        return score - slopes[h] * (q_idx - kv_idx).abs()

    def f(q, k, v):
        return flex_attention(q, k, v, score_mod=alibi)
    return Case(f, *_qkv())


@construct("flex attention")
def flex_block_mask():
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx
    mask = create_block_mask(causal, B=None, H=None, Q_LEN=128, KV_LEN=128, device="cpu")

    def f(q, k, v):
        return flex_attention(q, k, v, block_mask=mask)
    return Case(f, *_qkv())


@construct("flex attention")
def flex_block_mask_inside():
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def f(q, k, v):
        mask = create_block_mask(causal, B=None, H=None, Q_LEN=128, KV_LEN=128, device="cpu")
        return flex_attention(q, k, v, block_mask=mask)
    return Case(f, *_qkv())


# --- module hooks ----------------------------------------------------------------------------

@construct("module hooks")
def hook_pre_and_forward():
    import torch
    from torch import nn

    lin = nn.Linear(4, 3)
    log = []

    def pre(module, args):
        log.append("pre")
        return (args[0] * 2,)

    def post(module, args, out):
        log.append("post")
        return out + 1
    lin.register_forward_pre_hook(pre)
    lin.register_forward_hook(post)
    return Case(lin, torch.randn(2, 4), observe=lambda: list(log))


@construct("module hooks")
def hook_with_kwargs():
    import torch
    from torch import nn

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x, scale=1.0):
            return self.lin(x) * scale
    m = Scaled()

    def pre(module, args, kwargs):
        return args, {**kwargs, "scale": kwargs.get("scale", 1.0) * 3}

    def post(module, args, kwargs, out):
        return out + kwargs["scale"]
    m.register_forward_pre_hook(pre, with_kwargs=True)
    m.register_forward_hook(post, with_kwargs=True)

    def f(x):
        return m(x, scale=0.5)
    return Case(f, torch.randn(2, 4))


@construct("module hooks")
def hook_always_call():
    import torch
    from torch import nn

    lin = nn.Linear(4, 4)
    log = []

    def post(module, args, out):
        log.append(out.shape[0])
        return out.relu()
    lin.register_forward_hook(post, always_call=True)

    def f(x):
        return lin(x) * 2
    return Case(f, torch.randn(3, 4), observe=lambda: list(log))


@construct("module hooks")
def hook_global_forward():
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))

    def hook(module, args, out):
        if isinstance(module, nn.Linear):
            return out * 2
    handle = torch.nn.modules.module.register_module_forward_hook(hook)

    def f(x):
        return model(x)
    return Case(f, torch.randn(3, 4), cleanup=handle.remove)


@construct("module hooks")
def hook_full_backward():
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2))
    log = []

    def hook(module, grad_input, grad_output):
        log.append(grad_output[0].clone())
        return (grad_input[0] * 2,)
    model[1].register_full_backward_hook(hook)
    x = torch.randn(3, 4, requires_grad=True)

    def f(x):
        return model(x)
    return Case(f, x, grads=[x, *params(model)], observe=lambda: list(log))


@construct("module hooks")
def hook_removed_between_calls():
    import torch
    from torch import nn

    lin = nn.Linear(4, 4)
    handle = lin.register_forward_hook(lambda m, args, out: out + 10)

    def f(x):
        return lin(x).sum(-1)
    return Case(f, torch.randn(2, 4), then=[handle.remove])


@construct("module hooks")
def hook_added_between_calls():
    import torch
    from torch import nn

    lin = nn.Linear(4, 4)

    def f(x):
        return lin(x).sum(-1)
    return Case(f, torch.randn(2, 4), then=[lambda: lin.register_forward_pre_hook(lambda m, a: (a[0] * -1,))])


# --- NumPy -----------------------------------------------------------------------------------

@construct("numpy")
def numpy_roundtrip():
    import numpy as np
    import torch

    def f(x):
        a = x.numpy()
        b = np.sin(a) * 2 + np.sum(a, axis=0)
        return torch.from_numpy(b)
    return Case(f, torch.randn(3, 4))


@construct("numpy")
def numpy_ndarray_fn():
    import numpy as np
    import torch

    def f(a, b):
        return np.dot(a, b.T) + np.exp(a).mean(axis=1, keepdims=True)
    return Case(f, torch.randn(3, 4).numpy(), torch.randn(5, 4).numpy())


@construct("numpy")
def numpy_methods():
    import torch

    def f(a):
        b = a.reshape(2, -1).T.clip(-0.5, 0.5)
        return b.sum(axis=0), b.argmax(axis=1), a.max(axis=0), b.astype("float64").cumsum(axis=0)
    return Case(f, torch.randn(4, 3).numpy())


@construct("numpy")
def numpy_mixed():
    import numpy as np
    import torch

    def f(x):
        y = torch.relu(x) + 0.1
        a = y.numpy()
        a = np.where(a > 0.5, np.log(a), a ** 2)
        return torch.from_numpy(a) * x
    return Case(f, torch.randn(4, 4))


# --- recurrent modules -----------------------------------------------------------------------

@construct("recurrent")
def lstm_model():
    import torch
    from torch import nn

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(8, 16, batch_first=True)
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return self.head(out[:, -1]), h, c
    return Case(Tagger(), torch.randn(2, 5, 8))


@construct("recurrent")
def gru_model():
    import torch
    from torch import nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(8, 16, num_layers=2)
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            out, h = self.gru(x)
            return self.head(out).log_softmax(-1), h
    return Case(Encoder(), torch.randn(5, 2, 8))


@construct("recurrent")
def rnn_model():
    import torch
    from torch import nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(8, 12, nonlinearity="tanh", bidirectional=True, batch_first=True)
            self.head = nn.Linear(24, 2)

        def forward(self, x, h0):
            out, h = self.rnn(x, h0)
            return self.head(out.mean(1)), h
    return Case(Classifier(), torch.randn(3, 6, 8), torch.zeros(2, 3, 12))


@construct("recurrent")
def lstm_backward():
    import torch
    from torch import nn

    lstm, head = nn.LSTM(6, 10), nn.Linear(10, 1)
    x = torch.randn(4, 2, 6, requires_grad=True)

    def f(x):
        out, _ = lstm(x)
        return head(out).squeeze(-1)
    return Case(f, x, grads=[x, *params(lstm, head)])


@construct("recurrent")
def lstm_image_rows_columns():
    # a ReNet-style image model: a conv stem, then an LSTM swept along every row and one
    # along every column of the feature map, then a classifier
    import torch
    from torch import nn

    class ReNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, padding=1)
            self.rows = nn.LSTM(8, 6, batch_first=True, bidirectional=True)
            self.cols = nn.LSTM(12, 6, batch_first=True, bidirectional=True)
            self.head = nn.Linear(12, 5)

        def forward(self, x):
            f = self.stem(x).relu()                       # (B, C, H, W)
            b, c, h, w = f.shape
            r, _ = self.rows(f.permute(0, 2, 3, 1).reshape(b * h, w, c))
            r = r.reshape(b, h, w, -1).permute(0, 2, 1, 3).reshape(b * w, h, -1)
            col, _ = self.cols(r)
            return self.head(col.reshape(b, w, h, -1).mean((1, 2)))
    return Case(ReNet(), torch.randn(2, 3, 6, 5))


# --- tensor metadata writes ------------------------------------------------------------------

@construct("metadata writes")
def set_data():
    import torch

    x = torch.randn(3)

    def f(x, y):
        x.data = y * 2
        return x + 1
    return Case(f, x, torch.randn(4), observe=lambda: x)


@construct("metadata writes")
def parameter_in_fn():
    import torch
    from torch import nn

    def f(x):
        p = nn.Parameter(torch.ones(3) * 2)
        return x * p, type(p).__name__, p.requires_grad
    return Case(f, torch.randn(3))


@construct("metadata writes")
def requires_grad_inplace():
    import torch

    def f(x):
        y = x.detach().clone().requires_grad_()
        z = (y * y).sum()
        return z, z.requires_grad, y.is_leaf
    return Case(f, torch.randn(4))


@construct("metadata writes")
def requires_grad_input():
    import torch

    x = torch.randn(4)

    def f(x):
        x.requires_grad_()
        return x * 2
    return Case(f, x, observe=lambda: x.requires_grad)


@construct("metadata writes")
def requires_grad_attr():
    import torch

    def f(x):
        w = torch.ones(4)
        w.requires_grad = True
        y = (x * w).sum()
        return y, y.requires_grad
    return Case(f, torch.randn(4))


# --- data-dependent values -------------------------------------------------------------------

@captured
@construct("data-dependent")
def item_arith():
    import torch

    def f(x):
        s = x.sum().item()
        return x * s + s ** 2
    return Case(f, torch.randn(5))


@captured
@construct("data-dependent")
def item_shape():
    import torch

    def f(x):
        n = int((x > 0).sum().item())
        return torch.arange(n) * x.max()
    return Case(f, torch.randn(9))


@captured
@construct("data-dependent")
def nonzero_index():
    import torch

    def f(x):
        idx = torch.nonzero(x > 0)
        return idx, x[idx[:, 0], idx[:, 1]] * 2
    return Case(f, torch.randn(4, 3))


@captured
@construct("data-dependent")
def bool_mask_index():
    import torch

    def f(x):
        y = x[x > 0]
        return y * 2, y.sum()
    return Case(f, torch.randn(10))


@captured
@construct("data-dependent")
def unique_counts():
    import torch

    def f(x):
        values, counts = torch.unique(x, sorted=True, return_counts=True)
        return values * 10, counts
    return Case(f, torch.randint(0, 5, (12,)))


@captured
@construct("data-dependent")
def item_branch():
    import torch

    def f(x):
        if x.mean().item() > 0:
            return x.sin()
        return x.cos()
    return Case(f, torch.randn(6))


# --- custom ops ------------------------------------------------------------------------------

_OPS = {}


def _custom_ops():
    """The custom ops, registered once per process (both builds of a program use them)."""
    if _OPS:
        return _OPS
    import numpy as np
    import torch

    @torch.library.custom_op("fgbench::numpy_sin", mutates_args=())
    def numpy_sin(x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.sin(x.cpu().numpy())).to(device=x.device)

    @numpy_sin.register_fake
    def _(x):
        return torch.empty_like(x)

    @torch.library.custom_op("fgbench::mysin", mutates_args=())
    def mysin(x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.sin(x.detach().cpu().numpy())).to(x.device)

    @mysin.register_fake
    def _(x):
        return torch.empty_like(x)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()
    mysin.register_autograd(backward, setup_context=setup_context)
    _OPS.update(numpy_sin=numpy_sin, mysin=mysin)
    return _OPS


@construct("custom ops")
def custom_op_fake():
    import torch

    numpy_sin = _custom_ops()["numpy_sin"]

    def f(x):
        return numpy_sin(x) * 2 + 1
    return Case(f, torch.randn(5))


@construct("custom ops")
def custom_op_autograd():
    import torch

    mysin = _custom_ops()["mysin"]
    x = torch.randn(5, requires_grad=True)

    def f(x):
        return mysin(x * 2) + x
    return Case(f, x, grads=[x])


@construct("custom ops")
def autograd_function():
    import torch

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result
    x = torch.randn(4, requires_grad=True)

    def f(x):
        return Exp.apply(x * 0.5) + 1
    return Case(f, x, grads=[x])


@construct("custom ops")
def autograd_function_setup_context():
    import torch

    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return 0.5 * (5 * x ** 3 - 3 * x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * x ** 2 - 1)
    x = torch.randn(6, requires_grad=True)
    w = torch.randn(6, requires_grad=True)

    def f(x):
        return LegendrePolynomial3.apply(x) * w
    return Case(f, x, grads=[x, w])


# --- nested compilers ------------------------------------------------------------------------

@construct("nested compilers")
def nested_torch_compile():
    import torch

    @torch.compile(backend="eager")
    def inner(x):
        return x.sin() * 2

    def f(x):
        return inner(x + 1) - 1
    return Case(f, torch.randn(5))


@construct("nested compilers")
def checkpoint_fn():
    import torch
    from torch.utils.checkpoint import checkpoint

    w = torch.randn(4, 4, requires_grad=True)
    x = torch.randn(3, 4, requires_grad=True)

    def block(x):
        return torch.sin(x @ w).relu()

    def f(x):
        return checkpoint(block, x, use_reentrant=False) + 1
    return Case(f, x, grads=[x, w])


@construct("nested compilers")
def checkpoint_module():
    import torch
    from torch import nn
    from torch.utils.checkpoint import checkpoint

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 4))
            self.head = nn.Linear(4, 1)

        def forward(self, x):
            return self.head(checkpoint(self.block, x, use_reentrant=False))
    net = Net()
    x = torch.randn(2, 4, requires_grad=True)
    return Case(net, x, grads=[x, *params(net)])


@construct("nested compilers")
def checkpoint_between_ops():
    # after the activation-checkpointing tutorial: work before and after each checkpointed
    # block, a block with constant arguments
    import torch
    from torch import nn
    from torch.utils.checkpoint import checkpoint

    blocks = nn.ModuleList(nn.Sequential(nn.Linear(6, 6), nn.Tanh()) for _ in range(2))
    x = torch.randn(3, 6, requires_grad=True)

    def block(h, i, scale=1.0):
        return blocks[i](h) * scale

    def f(x):
        h = x.relu()
        for i in range(len(blocks)):
            h = checkpoint(block, h, i, scale=0.5, use_reentrant=False) + h
        return h.sum(-1)
    return Case(f, x, grads=[x, *params(blocks)])


@construct("nested compilers")
def compiler_disable():
    import torch

    @torch.compiler.disable
    def eager_only(x):
        return x.cos() + 1

    def f(x):
        return eager_only(x.sin()) * 2
    return Case(f, torch.randn(5))


# --- one construct with one compiler, in the child process ---------------------------------

class Counter:
    """The pass-through backend both compilers get: counts graphs, runs them as captured."""

    def __init__(self):
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


def _weights(t):
    """Deterministic, non-uniform weights: a plain sum has zero gradient through a softmax."""
    import torch

    return torch.arange(t.numel(), dtype=torch.float32).reshape(t.shape).mul(0.37).sin().to(t.dtype)


def snapshot(value):
    """The value with every tensor and ndarray detached and copied (later calls may write them)."""
    import numpy as np
    import torch
    from torch.utils._pytree import tree_map

    def copy(v):
        if isinstance(v, torch.Tensor):
            return v.detach().clone()
        if isinstance(v, np.ndarray):
            return v.copy()
        return v
    return tree_map(copy, value)


def execute(case, fn):
    """Run a program with ``fn`` standing for ``case.fn``: (what to compare, seconds of the first call)."""
    import torch
    from torch.utils._pytree import tree_leaves

    record = {}
    start = time.perf_counter()
    out = fn(*case.args)
    first = time.perf_counter() - start
    record["out"] = snapshot(out)
    record["requires_grad"] = [t.requires_grad for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
    if case.grads:
        live = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor) and t.requires_grad]
        if not live:
            raise RuntimeError("no output requires grad")
        sum((t * _weights(t)).sum() for t in live).backward()
        record["grads"] = [None if t.grad is None else t.grad.clone() for t in case.grads]
    for i, step in enumerate(case.then):
        step()
        record[f"call {i + 2}"] = snapshot(fn(*case.args))
    if case.observe is not None:
        record["state"] = snapshot(case.observe())
    return record, first


def compare(got, expected):
    """'exact', 'close' or 'mismatch: where' for two records of one program."""
    import numpy as np
    import torch
    from torch.utils._pytree import tree_flatten

    if got.keys() != expected.keys():
        return f"mismatch: parts {sorted(got)} vs {sorted(expected)}"
    close = False
    for part in expected:
        a, spec_a = tree_flatten(got[part])
        b, spec_b = tree_flatten(expected[part])
        if spec_a != spec_b:
            return f"mismatch: {part} structure {str(spec_a)[:60]} vs {str(spec_b)[:60]}"
        for i, (x, y) in enumerate(zip(a, b)):
            where = f"{part} leaf {i}"
            if isinstance(y, torch.Tensor):
                if not isinstance(x, torch.Tensor):
                    return f"mismatch: {where} is {type(x).__name__}, eager's a tensor"
                if x.dtype != y.dtype or x.shape != y.shape:
                    return f"mismatch: {where} {x.dtype}{list(x.shape)} vs {y.dtype}{list(y.shape)}"
                if torch.equal(x, y):
                    continue
                if x.is_floating_point() and torch.allclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True):
                    close = True
                    continue
                return f"mismatch: {where} values (max diff {(x.double() - y.double()).abs().max().item():.3g})"
            if isinstance(y, (np.ndarray, np.generic)):
                # torch._numpy documents 0-d arrays where NumPy gives scalars: the values decide
                x_np, y_np = np.asarray(x), np.asarray(y)
                if x_np.dtype != y_np.dtype or x_np.shape != y_np.shape:
                    return (f"mismatch: {where} {type(x).__name__} {x_np.dtype}{list(x_np.shape)} "
                            f"vs {y_np.dtype}{list(y_np.shape)}")
                if np.array_equal(x_np, y_np):
                    continue
                if np.allclose(x_np, y_np, rtol=RTOL, atol=ATOL, equal_nan=True):
                    close = True
                    continue
                return f"mismatch: {where} ndarray values"
            if x != y:
                return f"mismatch: {where} {x!r} vs {y!r}"
            if isinstance(y, (set, frozenset)) and all(type(i) in (int, str, bytes, bool, float) for i in y) \
                    and list(x) != list(y):  # hashed alike in both runs: the iteration order counts
                return f"mismatch: {where} iterates {list(x)!r} vs {list(y)!r}"
    return "close" if close else "exact"


def one_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:300] if text else ''}"


def warm_up(compiler):
    """Compile and run an unrelated function, so that one-time costs (imports, first traces of torch
    internals) stay out of the first call measured."""
    import torch

    def tiny(x):
        return torch.relu(x @ x.T).sum(0) + 1
    x = torch.randn(3, 3)
    if compiler == "framegraph":
        import framegraph

        framegraph.compile(tiny, backend=Counter())(x)
        framegraph.reset()
    else:
        import torch._dynamo
        from torch._dynamo.utils import counters

        torch.compile(tiny, backend=Counter())(x)
        torch._dynamo.reset()
        counters.clear()


def child(name, compiler):
    """One construct with one compiler; the result as a dict."""
    import logging
    import warnings

    import torch

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    torch.set_num_threads(1)  # two children share two cores
    torch.manual_seed(0)
    group, build = CONSTRUCTS[name]
    result = {"construct": name, "group": group, "compiler": compiler, "graphs": None, "match": None,
              "error": None, "first_s": None, "breaks": []}
    if compiler == "framegraph":
        import framegraph
        from framegraph.diagnostics.records import observing
    else:
        import torch._dynamo
        from torch._dynamo.utils import counters

    torch.manual_seed(0)
    case = build()
    try:
        expected, _ = execute(case, case.fn)
    except Exception as e:
        result["error"] = "eager raised: " + one_line(e)
        return result
    finally:
        if case.cleanup:
            case.cleanup()

    warm_up(compiler)
    torch.manual_seed(0)
    case = build()
    if case.capture:
        options = framegraph.config if compiler == "framegraph" else torch._dynamo.config
        options.capture_scalar_outputs = options.capture_dynamic_output_shape_ops = True
    counter = Counter()
    records = []
    try:
        if compiler == "framegraph":
            compiled = framegraph.compile(case.fn, backend=counter, fullgraph=False)
            with observing(records.append):
                got, result["first_s"] = execute(case, compiled)
        else:
            compiled = torch.compile(case.fn, backend=counter)
            got, result["first_s"] = execute(case, compiled)
        result["match"] = compare(got, expected)
    except Exception as e:
        result["error"] = one_line(e)
    finally:
        if case.cleanup:
            case.cleanup()
    result["graphs"] = counter.graphs
    if compiler == "framegraph":
        for r in records:
            for brk in getattr(r.compiled, "breaks", None) or ():
                entry = getattr(brk, "entry", None)
                result["breaks"].append(f"break {getattr(entry, 'id', '?')} in {r.code.co_name}: "
                                        f"{str(getattr(brk, 'context', ''))[:150]}")
            if r.fallback:
                entry = getattr(r.error, "entry", None)
                result["breaks"].append(f"fallback {getattr(entry, 'id', type(r.error).__name__)} in "
                                        f"{r.code.co_name}: {str(r.error)[:150]}")
    else:
        result["breaks"] = [f"{k[:200]} (x{v})" for k, v in counters["graph_break"].most_common()]
    result["breaks"] = result["breaks"][:6]
    return result


# --- the parent: every pair in its own process, then the table ------------------------------

COMPILERS = ("dynamo", "framegraph")


def run_pair(name, compiler, timeout, script=None):
    """One (construct, compiler) in a fresh process of ``script`` (this file unless a runner that
    shares this machinery, benchmarks/families.py, names itself)."""
    here = os.path.abspath(script or __file__)
    start = time.time()
    base = {"construct": name, "group": CONSTRUCTS[name][0], "compiler": compiler, "graphs": None,
            "match": None, "error": None, "first_s": None, "breaks": []}
    try:
        proc = subprocess.run([sys.executable, here, "--one", name, "--compiler", compiler],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {**base, "outcome": "hang", "detail": f"no result after {timeout} s", "wall_s": time.time() - start}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        tail = [line for line in proc.stderr.strip().splitlines() if line.strip()][-3:]
        return {**base, "outcome": "crash", "detail": f"{how}: {' | '.join(tail)[-400:]}",
                "wall_s": time.time() - start}
    result = json.loads(lines[-1])
    result["outcome"] = "error" if result["error"] else "ok"
    result["wall_s"] = time.time() - start
    return result


def run_all(names, timeout, jobs, script=None):
    pairs = [(n, c) for n in names for c in COMPILERS]
    rows = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_pair, n, c, timeout, script): (n, c) for n, c in pairs}
        for fut in concurrent.futures.as_completed(futures):
            r = fut.result()
            rows[futures[fut]] = r
            print(f"[{len(rows)}/{len(pairs)}] {r['construct']} {r['compiler']}: {r['outcome']} "
                  f"graphs={r['graphs']} match={r['match']} {(r.get('error') or r.get('detail') or '')[:100]}",
                  file=sys.stderr, flush=True)
    return [rows[p] for p in pairs]


def by_construct(rows):
    table = {}
    for r in rows:
        table.setdefault(r["construct"], {})[r["compiler"]] = r
    return table


def correct(r):
    return r["outcome"] == "ok" and r["match"] in ("exact", "close")


def fg_ok(fg, dy):
    """framegraph gives eager's answer, no hang/crash/error, and no more graphs than torch._dynamo.

    Where torch._dynamo captured no graph at all (it ran the program eagerly), framegraph's
    single graph with no break is not "more graphs": it is the whole program captured."""
    if not correct(fg):
        return False
    if dy["outcome"] in ("hang", "crash") or dy["graphs"] is None or fg["graphs"] <= dy["graphs"]:
        return True
    return dy["graphs"] == 0 and fg["graphs"] == 1 and not fg["breaks"]


def note(label, r):
    if r["outcome"] in ("hang", "crash"):
        return f"{label} {r['outcome']}: {r['detail'][:110]}"
    if r["outcome"] == "error":
        return f"{label} error: {r['error'][:110]}"
    if r["match"] not in ("exact", "close"):
        return f"{label} {r['match'][:110]}"
    return ""


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rows):
    head = ("| group | construct | torch._dynamo graphs | framegraph graphs | both equal eager? | notes "
            "| 1st call s dynamo | 1st call s framegraph |")
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for name, pair in by_construct(rows).items():
        dy, fg = pair["dynamo"], pair["framegraph"]
        ok_dy, ok_fg = correct(dy), correct(fg)
        both = "yes" if ok_dy and ok_fg else "no (framegraph)" if ok_dy else "no (dynamo)" if ok_fg else "no (both)"
        notes = [n for n in (note("dynamo", dy), note("fg", fg)) if n]
        if fg["graphs"] is not None and dy["graphs"] is not None:
            why = fg["breaks"][0][:110] if fg["breaks"] else ""
            if dy["graphs"] == 0 and fg["graphs"] == 1 and not fg["breaks"]:
                notes.append("dynamo ran it eagerly; fg one whole graph")
            elif fg["graphs"] > dy["graphs"]:
                notes.append(f"fg {fg['graphs'] - dy['graphs']} more graph(s){': ' + why if why else ''}")
            elif fg["graphs"] == 0 < dy["graphs"]:
                # fewer graphs by running the frame unmodified is no capture at all: say so
                notes.append(f"fg no graph{': ' + why if why else ''}")

        def graphs(r):
            return r["outcome"] if r["outcome"] in ("hang", "crash") else str(r["graphs"])

        def secs(r):
            return "" if r["first_s"] is None else f"{r['first_s']:.3f}"
        lines.append(f"| {dy['group']} | {name} | {graphs(dy)} | {graphs(fg)} | {both} | {cell('; '.join(notes))} "
                     f"| {secs(dy)} | {secs(fg)} |")
    return "\n".join(lines) + "\n\n" + summary(rows) + "\n"


def summary(rows):
    table = by_construct(rows)
    n = len(table)
    good = sum(fg_ok(p["framegraph"], p["dynamo"]) for p in table.values())
    dy_good = sum(correct(p["dynamo"]) for p in table.values())
    fg_good = sum(correct(p["framegraph"]) for p in table.values())
    no_graph = sum(fg_ok(p["framegraph"], p["dynamo"]) and p["framegraph"]["graphs"] == 0
                   and (p["dynamo"]["graphs"] or 0) > 0 for p in table.values())
    bad = {k: sum(p["framegraph"]["outcome"] == k for p in table.values()) for k in ("hang", "crash", "error")}
    return (f"framegraph: {good} of {n} constructs with graphs <= torch._dynamo's, eager's answer and no "
            f"hang/crash/error ({no_graph} of them with no graph where torch._dynamo has one); "
            f"equal to eager: framegraph {fg_good}, torch._dynamo {dy_good}; framegraph "
            f"hang {bad['hang']}, crash {bad['crash']}, error {bad['error']}.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated construct names")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per (construct, compiler) process")
    parser.add_argument("--jobs", type=int, default=2, help="processes at a time")
    parser.add_argument("--json", help="write every result here")
    parser.add_argument("--list", action="store_true", help="print the constructs and their groups")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--compiler", choices=COMPILERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(child(args.one, args.compiler or "framegraph")), flush=True)
        return
    if args.list:
        for name, (group, _) in CONSTRUCTS.items():
            print(f"{group}: {name}")
        return
    names = [n for n in args.only.split(",") if n] or list(CONSTRUCTS)
    unknown = [n for n in names if n not in CONSTRUCTS]
    if unknown:
        parser.error(f"unknown constructs: {', '.join(unknown)}")
    rows = run_all(names, args.timeout, args.jobs)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(markdown(rows))


if __name__ == "__main__":
    main()
