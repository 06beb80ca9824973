"""Odd inputs a third fault probe found (stop 70), on the CPU: each a cuforge.Error naming the argument, before
anything is written, built or launched: NUL characters in paths, masked arrays, grouped lists that do not pair
up, DLPack tensors whose strides or address wrap, flags and sizes that were taken unchecked."""

from __future__ import annotations

import copy
import ctypes
import os
import pickle

import numpy as np
import pytest

import cuforge

RowMajor = cuforge.LayoutType.RowMajor


def _gemm():
    return cuforge.op.Gemm(element=np.float16, layout=RowMajor)


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


def _capsule(shape, data=0x10000, byte_offset=0, name=b"dltensor"):
    """A hand-made DLPack capsule of a host f16 tensor of `shape`, no strides (compact); its memory kept alive by
    the returned tuple."""
    extents = (ctypes.c_int64 * len(shape))(*shape)
    managed = _DLManagedTensor(_DLTensor(data, 1, 0, len(shape), 2, 16, 1, extents, None, byte_offset), None, None)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(ctypes.addressof(managed), name, None), (extents, managed, name)


@pytest.mark.parametrize("shape, byte_offset, says", [
    ((2**40, 2**40, 2**40), 0, r"^A: its DLPack tensor's strides \(the products of its extents\) pass 64 bits"),
    ((0, 2**40, 2**40), 0, r"^A: its DLPack tensor's strides \(the products of its extents\) pass 64 bits"),
    ((-1, 4), 0, "^A: its DLPack tensor's extent 0 is -1; extents are never negative"),
    ((4, 4), 2**64 - 2, r"^A: its DLPack tensor's data pointer plus byte_offset \(18446744073709551614\) wraps"),
])
def test_a_dlpack_tensor_that_wraps_is_refused(shape, byte_offset, says):
    capsule, keep = _capsule(shape, byte_offset=byte_offset)
    with pytest.raises(cuforge.InvalidArgumentError, match=says):
        cuforge._core.dlpack_descriptor(capsule, "A")
    del keep


def test_an_empty_dlpack_tensor_of_huge_extents_is_read():
    """Strides of (2**40, 2**40, 0): 0, 0 and 1, none past 64 bits."""
    capsule, keep = _capsule((2**40, 2**40, 0))
    assert cuforge._core.dlpack_descriptor(capsule, "A")[2] == (2**40, 2**40, 0)
    del keep


def test_a_capsule_of_another_name_is_named():
    capsule, keep = _capsule((4, 4), name=b"foo")
    with pytest.raises(cuforge.InvalidArgumentError, match="^A: its __dlpack__.. returned a capsule named 'foo', not"):
        cuforge._core.dlpack_descriptor(capsule, "A")
    del keep


@pytest.mark.parametrize("call, says", [
    (lambda: cuforge.emit.pytorch(_gemm().construct(), "m", sourcedir="/tmp/a\x00b"),
     "^sourcedir: '/tmp/a\\\\x00b' holds a NUL character"),
    (lambda: _gemm().profile(64, 64, 64, csv="/tmp/a\x00b.csv"), "^csv: .* holds a NUL character"),
    (lambda: cuforge.emit.pytorch(_gemm().construct(), "m", sourcedir="\ud800"),
     "^sourcedir: .* has no bytes in the file system's encoding"),  # a bare UnicodeEncodeError before
    (lambda: cuforge.profiler.Profile("x", 1.0, "t").save(csv="/tmp/a\x00b.csv"), "^csv: .* holds a NUL character"),
    (lambda: cuforge.profiler.Profile("x", 1.0, "t").save(plot="/nonexistent/p.png"), "^plot: .* is in no directory"),
    (lambda: cuforge.epilogue.of_kind(999), "^of_kind: expected a cuforge.Activation, got 999"),
    (lambda: cuforge.build(["x"], progress="no"), "^progress: expected True or False"),
    (lambda: cuforge.create_memory_pool(-1, "x"), "^create_memory_pool: expected max_pool_size to be a number of"),
    (lambda: cuforge.create_memory_pool(2**30, 2**20),
     r"^create_memory_pool: expected init_pool_size \(1073741824 bytes\) to be at most max_pool_size"),
    (lambda: _gemm().run(np.ma.masked_array(np.ones((8, 8), np.float16), mask=np.eye(8)),
                         np.ones((8, 8), np.float16), None, np.ones((8, 8), np.float16)), "^A: a masked array"),
    (lambda: cuforge.op.GroupedGemm(element=np.float16, A=[np.ones((8, 8), np.float16)] * 2,
                                    B=[np.ones((8, 8), np.float16)], D=[np.ones((8, 8), np.float16)] * 2)
     .compile(ragged=True), "^compile: the plan's A and B lists hold 2 and 1 tensors"),
], ids=["pytorch-sourcedir-nul", "profile-csv-nul", "pytorch-sourcedir-surrogate", "save-csv-nul", "save-plot-nowhere", "of-kind-int",
        "build-progress-str", "memory-pool-sizes", "memory-pool-order", "run-masked", "grouped-lists-unpaired"])
def test_odd_arguments_are_errors_of_cuforge(call, says):
    with pytest.raises(cuforge.Error, match=says):
        call()


def test_an_operation_is_not_copied_or_pickled():
    op = _gemm().construct()
    for copy_it in (pickle.dumps, copy.deepcopy, copy.copy):
        with pytest.raises(cuforge.InvalidArgumentError, match="^an Operation .* is not copied or pickled"):
            copy_it(op)


def test_a_profile_writes_only_regular_files(tmp_path):
    profile = cuforge.profiler.Profile("x", 1.0, "t")
    with pytest.raises(cuforge.InvalidArgumentError, match="^csv: expected a file path, got int"):
        profile.save(csv=0)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(cuforge.InvalidArgumentError, match="^plot: .* is not a regular file"):
        profile.save(plot=str(tmp_path / "fifo"))
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "p.csv")
    with pytest.raises(cuforge.InvalidArgumentError, match="^csv: cannot write .*No such file"):
        profile.save(csv=str(tmp_path / "dangling"))
    # Refused as the write would be, before a profile's minutes of timing (they were found only at the end): a link
    # that loops, a name too long. The files the check makes to try are removed; a link's target is written.
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for path, says in (("loop", "Too many levels of symbolic links"), ("x" * 300, "File name too long")):
        with pytest.raises(cuforge.InvalidArgumentError, match=f"^csv: cannot write .*{says}"):
            cuforge.profiler.check_outputs(str(tmp_path / path), None)
    (tmp_path / "link").symlink_to(tmp_path / "target.csv")
    for path in ("fresh.csv", "link"):
        cuforge.profiler.check_outputs(str(tmp_path / path), None)
    assert not (tmp_path / "fresh.csv").exists() and not (tmp_path / "target.csv").exists(), "a file tried was left"
    (tmp_path / "kept.csv").write_text("theirs")
    cuforge.profiler.check_outputs(str(tmp_path / "kept.csv"), None)
    assert (tmp_path / "kept.csv").read_text() == "theirs"


def test_a_slope_past_f32_is_refused():
    with pytest.raises(cuforge.InvalidArgumentError, match="slope must be finite in f32, got 1e"):
        _gemm().activation = (cuforge.epilogue.leaky_relu, 1e39)


def test_a_tile_descriptions_own_instruction_shape_is_checked():
    plan = _gemm()
    td = plan.tile_descriptions()[0]
    td.instruction_shape = "abc"
    with pytest.raises(cuforge.InvalidArgumentError, match="^tile_description.instruction_shape: expected three"):
        plan.tile_description = td
    td.instruction_shape = 16
    with pytest.raises(cuforge.InvalidArgumentError, match="^tile_description.instruction_shape: expected three"):
        plan.tile_description = td
    td.instruction_shape = [0, 0, 0]
    with pytest.raises(cuforge.InvalidArgumentError, match="^tile_description.instruction_shape: this plan's kernels"):
        plan.tile_description = td
    assert plan.tile_description is None, "a refused tile pins nothing"
    plan.tile_description = plan.tile_descriptions()[0]  # its own shape, as listed
    assert plan.tile_description is not None
