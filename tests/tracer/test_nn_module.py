"""nn.Module: submodules, parameters as graph inputs, containers, training flag."""
import torch
from torch import nn

import framegraph
from helpers import CountingBackend, assert_same, check, run_counted


def run(model, *args, frames=1, ops=None):
    cnt = CountingBackend()
    compiled = framegraph.compile(model, backend=cnt, fullgraph=True)
    with torch.no_grad():
        expected = model(*args)
    with torch.no_grad():
        actual = compiled(*args)
    assert_same(actual, expected)
    assert cnt.frame_count == frames
    if ops is not None:
        assert cnt.op_count == ops, cnt.targets()
    return cnt, compiled


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 4)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.fc3(self.act(self.fc2(self.act(self.fc1(x)))))


def test_three_layer_mlp_is_one_graph_with_parameters_as_inputs():
    model = MLP()
    cnt, _ = run(model, torch.randn(5, 8), ops=5)
    assert len(cnt.example_inputs[0]) == 7  # x and six parameters
    assert any(isinstance(t, nn.Parameter) for t in cnt.example_inputs[0])


def test_in_place_parameter_update_is_seen_without_recompiling():
    model = MLP()
    cnt = CountingBackend()
    compiled = framegraph.compile(model, backend=cnt, fullgraph=True)
    x = torch.randn(2, 8)
    compiled(x)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5).add_(0.1)
    assert_same(compiled(x), model(x))
    assert cnt.frame_count == 1


def test_backward_through_the_graph(framegraph_trace):
    model = MLP()
    compiled = framegraph.compile(model, backend="aot_eager", fullgraph=True)
    x = torch.randn(3, 8)
    compiled(x).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g, p.grad)
    assert framegraph_trace.graphs == 1


class Block(nn.Module):
    """A pre-norm transformer block with nn.MultiheadAttention."""

    def __init__(self, d=16, heads=4):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(0.1))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def test_transformer_block_with_multihead_attention_is_one_graph():
    model = Block().eval()
    run(model, torch.randn(2, 5, 16))


class Attention(nn.Module):
    """Hand-written causal self-attention, nanoGPT style."""

    def __init__(self, d=16, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = self.drop(att) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class GPTBlock(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(d), Attention(d)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.ModuleDict(dict(fc=nn.Linear(d, 4 * d), proj=nn.Linear(4 * d, d)))
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        m = self.mlp
        return x + m["proj"](self.act(m["fc"](self.ln_2(x))))


def test_hand_written_transformer_block_is_one_graph():
    run(GPTBlock().eval(), torch.randn(2, 6, 16))


def test_training_flag_is_guarded():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    cnt = CountingBackend()
    compiled = framegraph.compile(model, backend=cnt, fullgraph=True)
    x = torch.randn(3, 4)
    model.eval()
    assert_same(compiled(x), model(x))
    model.train()
    torch.manual_seed(0)
    out = compiled(x)
    torch.manual_seed(0)
    assert_same(out, model(x))
    assert cnt.frame_count == 2


class Containers(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 2)})
        self.register_buffer("shift", torch.ones(4))
        self.scale = nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x) * self.scale if i % 2 else layer(x) + self.shift
        x = self.layers[-1](x)
        outs = {name: head(x) for name, head in self.heads.items()}
        return outs, len(self.layers), sum(p.numel() for p in self.parameters())


def test_module_list_dict_buffers_and_parameters():
    run(Containers(), torch.randn(2, 4))


def test_submodule_replaced_causes_recompile():
    model = MLP()
    cnt = CountingBackend()
    compiled = framegraph.compile(model, backend=cnt, fullgraph=True)
    x = torch.randn(2, 8)
    compiled(x)
    model.act = nn.Tanh()
    assert_same(compiled(x), model(x))
    assert cnt.frame_count == 2


def test_conv_batchnorm_eval():
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2)).eval()
    run(model, torch.randn(2, 3, 8, 8))


def test_a_convolutions_padding_changed_recompiles_and_an_equal_new_tuple_does_not():
    conv = nn.Conv2d(2, 3, 3, padding=(1, 1))
    cnt = CountingBackend()
    compiled = framegraph.compile(conv, backend=cnt, fullgraph=True)
    x = torch.randn(1, 2, 6, 6)
    with torch.no_grad():
        assert_same(compiled(x), conv(x))
        conv.padding = (2, 1)
        assert_same(compiled(x), conv(x))
        assert cnt.frame_count == 2
        conv.padding = tuple([2, 1])  # another tuple, equal: the check passes
        assert_same(compiled(x), conv(x))
    assert cnt.frame_count == 2


def test_slicing_a_sequential_or_module_list_gives_a_callable_container():
    seq = torch.nn.Sequential(torch.nn.Linear(5, 5), torch.nn.ReLU(), torch.nn.Linear(5, 5))
    layers = torch.nn.ModuleList([torch.nn.Linear(5, 5) for _ in range(4)])

    def f(x):
        x = seq[:2](x) + seq[-1:](x)
        for layer in layers[1::2]:
            x = layer(x)
        return x, len(layers[:3]), type(seq[1:]).__name__

    check(f, torch.randn(3, 5))


def test_next_of_parameters_is_a_generator_like_eager():
    class Cast(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x):
            p = next(self.parameters())  # the usual `self.dtype` idiom
            return self.lin(x.to(p.dtype)), type(self.children()).__name__

    m = Cast()
    check(m, torch.ones(1, 2, dtype=torch.float64))


def test_building_a_module_inside_compiled_code_runs_its_init_eagerly(framegraph_trace):
    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x)

    def f(x):
        torch.manual_seed(0)
        return Head()(x)

    x = torch.ones(1, 2)
    assert_same(framegraph.compile(f, backend="eager")(x), f(x))
    assert framegraph_trace.graphs == 1  # breaks at manual_seed and Head(); the call is the graph


def test_a_parameterless_torch_module_built_in_forward_is_traced():
    # CANINE builds nn.MaxPool1d / nn.ConstantPad1d inside forward: one graph, and
    # no recompile per call (a module made per call was guarded by its identity).
    def f(x):
        y = torch.nn.MaxPool1d(kernel_size=2, stride=2)(x)
        return torch.nn.ReLU()(torch.nn.ConstantPad1d((1, 2), 0.5)(y)) * 2

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    for _ in range(3):
        x = torch.randn(2, 3, 8)
        assert_same(compiled(x), f(x))
    assert cnt.frame_count == 1


def test_a_module_built_in_forward_that_is_returned_is_a_new_one_each_call():
    def f(x):
        pool = torch.nn.AvgPool1d(2)
        return pool, pool(x)

    cnt = CountingBackend()
    compiled = framegraph.compile(f, backend=cnt, fullgraph=True)
    x = torch.randn(1, 2, 4)
    (p1, y1), (p2, _) = compiled(x), compiled(x)
    assert type(p1) is torch.nn.AvgPool1d and p1 is not p2 and p1.kernel_size == (2,)
    assert_same(y1, f(x)[1])
    assert cnt.frame_count == 1


def test_a_module_with_weights_built_in_forward_breaks_and_draws_no_random_numbers_at_trace():
    def f(x):
        return torch.nn.Linear(4, 4)(x)

    x = torch.randn(2, 4)
    torch.manual_seed(0)
    expected, after_eager = f(x), torch.rand(1)
    torch.manual_seed(0)
    result, cnt, breaks, errors = run_counted(f, x)
    assert_same(result, expected)
    assert torch.equal(torch.rand(1), after_eager)
    assert [b.entry.id for b in breaks] == ["unsupported_call"] and not errors


class Sized(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def __len__(self):
        return self.n


class OptionalParts(nn.Module):
    """MobileViT's ``if self.downsampling_layer:`` and CvT's ``if self.normalization:``:
    an attribute that is a submodule or None, tested for truth."""

    def __init__(self, norm, extra, sized):
        super().__init__()
        self.norm = nn.LayerNorm(4) if norm else None
        self.extra = nn.ModuleList([nn.Linear(4, 4)] if extra else [])
        self.sized = Sized(sized)

    def forward(self, x):
        if self.norm:
            x = self.norm(x)
        if self.extra:
            x = self.extra[0](x)
        if self.sized:
            x = x * 2
        return x + 1


def test_truth_of_a_submodule_is_cpythons_bool_len_or_true():
    """A module without __bool__ or __len__ is true; a container is true when it
    has children; a class's own __len__ decides for it. One graph each, no break."""
    x = torch.randn(2, 4)
    run(OptionalParts(True, True, 1), x, ops=4)
    run(OptionalParts(False, False, 0), x, ops=1)
