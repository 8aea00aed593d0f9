"""What each of the 2 processes of tests/distributed/test_fsdp.py runs (spawned: module level)."""
import torch
import torch.nn.functional as F

import framegraph

STEPS = 10
VOCAB, DIM, HEADS, SEQ = 64, 32, 4, 8


class Block(torch.nn.Module):
    """Pre-norm causal self-attention and MLP."""

    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(DIM), torch.nn.LayerNorm(DIM)
        self.qkv, self.proj = torch.nn.Linear(DIM, 3 * DIM), torch.nn.Linear(DIM, DIM)
        self.up, self.down = torch.nn.Linear(DIM, 4 * DIM), torch.nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(DIM, dim=-1)
        q, k, v = (y.view(b, t, HEADS, DIM // HEADS).transpose(1, 2) for y in (q, k, v))
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, DIM))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class TinyTransformer(torch.nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM)
        self.pos = torch.nn.Parameter(torch.randn(SEQ, DIM) * 0.02)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(layers))
        self.norm = torch.nn.LayerNorm(DIM)
        self.head = torch.nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def sharded_model():
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    torch.manual_seed(0)
    model = TinyTransformer()
    mesh = init_device_mesh("cpu", (torch.distributed.get_world_size(),))
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def losses(rank, wrap):
    """The loss of each of STEPS AdamW steps of ``wrap(sharded model)``."""
    model = wrap(sharded_model())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(100 + rank)
    out = []
    for _ in range(STEPS):
        tokens = torch.randint(0, VOCAB, (4, SEQ), generator=gen)
        opt.zero_grad()
        logits = model(tokens)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        out.append(loss.detach())
    return torch.stack(out)


def fsdp_worker(rank, world_size, backends=("eager", "aot_eager")):
    from framegraph_pytest import TraceWatch

    eager = losses(rank, lambda m: m)
    results = {}
    for backend in backends:
        watch = TraceWatch()
        with watch.observing():
            compiled = losses(rank, lambda m: framegraph.compile(m, backend=backend))
        framegraph.reset()
        results[backend] = {"eager": eager, "compiled": compiled, "graphs": watch.graphs,
                            "frames": watch.frames, "problems": watch.problems()}
    return results
