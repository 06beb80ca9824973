"""The two ways a run() on torch tensors reaches the core: in one call (`run_tensors`, the tensors
read in C++, taken for torch's current stream or a stream given, unless CuPy's)
or by the general Python path (describe() each operand, then the core), taken for anything else."""

import types

import torch


def general_path_stream():
    """torch's current stream as CuPy hands a stream over (its handle in `.ptr`): run() reads it in
    Python, so a run given it takes the general path on the same stream as a run given none."""
    return types.SimpleNamespace(ptr=torch.cuda.current_stream().cuda_stream)


def run_on_held_stream(run, given):
    """Calls `run(stream)` with a new side stream, given as the torch.cuda.Stream (`given` is
    "torch_stream") or as its handle ("int"), while a GPU sleep holds that stream; checks that the
    core took the run in one call (a handle, not None from run_tensors) and queued it on that stream
    (torch's current stream free, the side stream and the run not done), then waits for the run."""
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # about a tenth of a second of GPU clock cycles
    handle = run(side if given == "torch_stream" else side.cuda_stream)
    assert handle is not None, "the core left a run with a stream given to the Python layer"
    assert torch.cuda.current_stream().query(), "the run was queued on torch's current stream"
    assert not side.query() and not handle.done(), "the run was not queued on the stream given"
    handle.sync()
