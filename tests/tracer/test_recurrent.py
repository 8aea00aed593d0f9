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
