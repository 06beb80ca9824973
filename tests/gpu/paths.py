"""The two ways a run() on torch tensors reaches the core: in one call (`run_tensors`, the tensors
read in C++, taken for torch's current stream or a stream given as an int or a torch.cuda.Stream)
or by the general Python path (describe() each operand, then the core), taken for anything else."""

import types

import torch


def general_path_stream():
    """torch's current stream as CuPy hands a stream over (its handle in `.ptr`): run() reads it in
    Python, so a run given it takes the general path on the same stream as a run given none."""
    return types.SimpleNamespace(ptr=torch.cuda.current_stream().cuda_stream)
