"""Step 5's input: the FX graph of a trace, its fake tensors and shapes.

``output_graph.OutputGraph`` records the tensor work of one trace into a
``torch.fx.Graph`` on FakeTensors, holds its inputs and guards, and compiles
the finished graph with the backend; ``meta_ops.py`` propagates shapes of
common ops on meta kernels; ``dynamic.py`` owns the ShapeEnv (symbolic sizes,
``mark_dynamic``, automatic dynamic shapes).
"""
