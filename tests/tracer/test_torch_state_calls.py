"""Private torch C functions without tensor arguments: a trace asks a query now
(``torch._C._get_privateuse1_backend_name``), but one that changes state
(forward AD's ``_enter_dual_level``) would change it once, at trace time,
and never when the compiled code runs: it is a break."""
import pytest
import torch
import torch.autograd.forward_ad as fwAD

from helpers import assert_same, run_counted


def tangent_of_triple(x):
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, torch.ones_like(x))
        return fwAD.unpack_dual(dual * 3).tangent


@pytest.mark.expect_fallback("unsupported_call")
def test_forward_ad_runs_in_cpython():
    # the trace ran _enter_dual_level for real; the graph then met no dual level: RuntimeError
    expected = tangent_of_triple(torch.ones(2))  # forward AD's first use scripts torch's own helpers
    result, cnt, breaks, errors = run_counted(tangent_of_triple, torch.ones(2))
    assert_same(result, expected)
    assert cnt.frame_count == 0
    assert errors and "_enter_dual_level" in str(errors[0])
