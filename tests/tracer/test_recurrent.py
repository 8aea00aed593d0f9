"""Recurrent modules inside a model compile whole: nn.LSTM, nn.GRU and nn.RNN.

Each reads its weights through the weak references it keeps of them
(``_weights_have_changed``); the trace follows a reference to its referent
and guards that, so weights updated in place are seen by the same graph, and
a replaced parameter is a recompile with eager's answer.
"""
import torch
from torch import nn

import framegraph

from helpers import CountingBackend, assert_same


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.gru = nn.GRU(8, 16, batch_first=True)
        self.rnn = nn.RNN(8, 16)
        self.head = nn.Linear(48, 4)

    def forward(self, x):
        a, _ = self.lstm(x)
        b, _ = self.gru(x)
        c, _ = self.rnn(x)
        return self.head(torch.cat([a, b, c], -1))


def test_lstm_gru_and_rnn_in_one_model_are_one_graph():
    model = Recurrent()
    cnt = CountingBackend()
    compiled = framegraph.compile(model, backend=cnt, fullgraph=True)
    x = torch.randn(2, 5, 8)
    assert_same(compiled(x), model(x))
    assert cnt.frame_count == 1
    assert sum(t in (torch.lstm, torch.gru, torch.rnn_tanh) for t in cnt.targets()) == 3


def test_backward_under_aot_eager_gives_eagers_gradients():
    model = Recurrent()
    x = torch.randn(2, 5, 8, requires_grad=True)
    model(x).sum().backward()
    expected = [x.grad] + [p.grad for p in model.parameters()]
    x.grad = None
    model.zero_grad()
    cnt = CountingBackend()

    def aot_eager(gm, example_inputs):
        cnt(gm, example_inputs)
        return framegraph.backends.lookup_backend("aot_eager")[0](gm, example_inputs)

    framegraph.compile(model, backend=aot_eager, fullgraph=True)(x).sum().backward()
    assert cnt.frame_count == 1
    for actual, wanted in zip([x.grad] + [p.grad for p in model.parameters()], expected):
        torch.testing.assert_close(actual, wanted)


def test_weights_updated_in_place_and_a_replaced_parameter_give_eagers_answer():
    model = Recurrent()
    cnt = CountingBackend()
    compiled = framegraph.compile(model, backend=cnt)
    x = torch.randn(2, 5, 8)
    assert_same(compiled(x), model(x))
    with torch.no_grad():
        model.lstm.weight_ih_l0.mul_(2)
    assert_same(compiled(x), model(x))
    assert cnt.frame_count == 1  # the same graph reads the new values
    model.lstm.weight_ih_l0 = nn.Parameter(torch.randn_like(model.lstm.weight_ih_l0))
    assert_same(compiled(x), model(x))  # the reference's referent changed: traced again
    assert cnt.frame_count == 2


class ReNet(nn.Module):
    """An image model that sweeps a bidirectional LSTM along every row of a conv
    feature map, then another along every column."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.rows = nn.LSTM(8, 6, batch_first=True, bidirectional=True)
        self.cols = nn.LSTM(12, 6, batch_first=True, bidirectional=True)
        self.head = nn.Linear(12, 5)

    def forward(self, x):
        f = self.stem(x).relu()
        b, c, h, w = f.shape
        r, _ = self.rows(f.permute(0, 2, 3, 1).reshape(b * h, w, c))
        r = r.reshape(b, h, w, -1).permute(0, 2, 1, 3).reshape(b * w, h, -1)
        col, _ = self.cols(r)
        return self.head(col.reshape(b, w, h, -1).mean((1, 2)))


def test_an_image_model_with_lstms_along_rows_and_columns_is_one_graph():
    model = ReNet()
    cnt = CountingBackend()
    compiled = framegraph.compile(model, backend=cnt, fullgraph=True)
    for shape in [(2, 3, 6, 5), (2, 3, 6, 5)]:
        x = torch.randn(shape)
        assert_same(compiled(x), model(x))
    assert cnt.frame_count == 1
    assert cnt.targets().count(torch.lstm) == 2
