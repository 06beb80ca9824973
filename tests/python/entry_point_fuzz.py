"""Arbitrary integers and arbitrary entry.json files against the selection (GEMM, grouped GEMM and
Conv2d), Conv2d's checks of a run (fake device arrays), compile and cache entry points (hypothesis):
every case ends in a result or a cuforge.Error, never a dead process.

Run by test_fuzz.py in a child process whose CUDA_INSTALL_PATH is a fake toolkit (its nvcc writes a
library of an ELF header alone at once) and whose CUFORGE_CACHE_DIR is private, so that compile() builds nothing
real. CUFORGE_FUZZ_CASES scales the number of cases (default 10,000 in all).
"""

from __future__ import annotations

import json
import os
import pathlib

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cuforge
from fake_arrays import BASE, FakeDeviceArray

CASES = int(os.environ.get("CUFORGE_FUZZ_CASES", "10000"))
# Each entry point's share of the cases, in tenths (entry.json takes the rest).
SHARE = {"select": 3, "grouped select": 1, "grouped run": 1, "conv select": 1.5, "conv run": 1.5, "compile": 1}


def cases(name):
    return int(CASES * SHARE[name] / 10)

FUZZ = settings(deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
EDGES = [0, 1, -1, 2, 7, 8, 16, 64, 127, 128, 255, 4096, 65536, 2**31 - 1, 2**31, 2**32, 2**40, 2**63 - 1, -2**31,
         -2**63]
extent = st.one_of(st.sampled_from(EDGES), st.integers(-5, 5000), st.integers(-2**64, 2**64))
counted = {name: 0 for name in SHARE} | {"entry.json": 0}

PLANS = [cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor),
         cuforge.op.Gemm(element=np.float16, layout=cuforge.LayoutType.RowMajor, kernel_cc=80),
         cuforge.op.Gemm(element=np.int8, element_C=np.int32, element_D=np.int32,
                         layout_A=cuforge.LayoutType.RowMajor, layout_B=cuforge.LayoutType.ColumnMajor,
                         layout_C=cuforge.LayoutType.ColumnMajor)]


GROUPED_PLANS = [cuforge.op.GroupedGemm(element=np.float16, layout=cuforge.LayoutType.RowMajor),
                 cuforge.op.GroupedGemm(element=np.float16, layout=cuforge.LayoutType.RowMajor, kernel_cc=80)]
CONV_PLANS = [cuforge.op.Conv2d(kind=kind, element=np.float16, kernel_cc=cc)
              for kind in ("fprop", "dgrad", "wgrad") for cc in (None, 80)]
CONV_PLANS.append(cuforge.op.Conv2d(kind="wgrad", element=np.float32))
# Convolutions: extents N, H, W, C, K, R, S and (stride, padding, dilation) per axis, plausible ones
# (which reach the choice) as often as arbitrary ones.
small = st.one_of(st.sampled_from(EDGES), st.integers(-3, 40))
conv_extents = st.one_of(
    st.tuples(st.integers(1, 64), st.integers(1, 300), st.integers(1, 300), st.integers(1, 1024),
              st.integers(1, 1024), st.integers(1, 9), st.integers(1, 9)),
    st.tuples(extent, extent, extent, extent, extent, small, small))
conv_geometry = st.one_of(
    st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(0, 4), st.integers(0, 4), st.integers(1, 3),
              st.integers(1, 3)),
    st.tuples(small, small, small, small, small, small))


def one_of_plans(i):
    return PLANS[i % len(PLANS)]


@settings(FUZZ, max_examples=cases("select"))
@given(st.integers(0, 2), extent, extent, extent, extent, st.booleans())
def test_select(i, m, n, k, batch, bias):
    counted["select"] += 1
    try:
        assert one_of_plans(i).select(m, n, k, batch, bias).startswith("cuforge_sm")
    except cuforge.InvalidArgumentError:
        pass


@settings(FUZZ, max_examples=cases("grouped select"))
@given(st.integers(0, 1), extent, extent, extent, extent, st.booleans(),
       st.sampled_from([None, 1, 2, 8, 16, 0, 3, -1, 2**40]), st.booleans())
def test_grouped_select(i, groups, m, n, k, ragged, alignment, bias):
    counted["grouped select"] += 1
    try:
        name = GROUPED_PLANS[i].select(groups, m, n, k, ragged=ragged, alignment_A=alignment, bias=bias)
        assert name.startswith("cuforge_sm"), name
    except cuforge.InvalidArgumentError:
        pass


@settings(FUZZ, max_examples=cases("conv select"))
@given(st.integers(0, len(CONV_PLANS) - 1), conv_extents, conv_geometry, st.booleans())
def test_conv_select(i, extents, geometry, bias):
    counted["conv select"] += 1
    sh, sw, ph, pw, dh, dw = geometry
    try:
        name = CONV_PLANS[i].select(*extents, stride=(sh, sw), padding=(ph, pw), dilation=(dh, dw), bias=bias)
        assert name.startswith("cuforge_sm"), name
    except cuforge.InvalidArgumentError:
        pass


# A grouped run's group: the extents of A, B and D, and its C: none, a matrix like D, a bias row of
# N, one row of N, or the extents given.
shape2 = st.one_of(st.tuples(st.integers(0, 300), st.integers(0, 300)), st.tuples(extent, extent))
group = st.tuples(shape2, shape2, shape2, st.one_of(st.sampled_from(["none", "matrix", "bias", "row"]),
                                                    st.lists(extent, max_size=3)))


@settings(FUZZ, max_examples=cases("grouped run"))
@given(st.integers(0, 1), st.lists(group, max_size=5), st.sampled_from([0, 2, 8]), st.sampled_from([0.0, 1.0]))
def test_grouped_run(i, groups, misaligned, beta):
    """Lists of fake device arrays, each group's C its own kind: the checks refuse them by name (the
    group named), or a run stops at the device."""
    counted["grouped run"] += 1
    As, Bs, Cs, Ds = [], [], [], []
    try:
        for g, (a, b, d, c) in enumerate(groups):
            at = 0x1_0000 * g + misaligned
            As.append(FakeDeviceArray(a, np.float16, ptr=BASE["A"] + at))
            Bs.append(FakeDeviceArray(b, np.float16, ptr=BASE["B"] + at))
            Ds.append(FakeDeviceArray(d, np.float16, ptr=BASE["D"] + at))
            c_shape = {"none": None, "matrix": d, "bias": d[1:], "row": (1, *d[1:])}[c] if isinstance(c, str) else c
            Cs.append(None if c_shape is None else FakeDeviceArray(c_shape, np.float16, ptr=BASE["C"] + at))
    except (OverflowError, ValueError):  # no such array
        return
    try:
        GROUPED_PLANS[i].run(As, Bs, Cs, Ds, beta=beta)
    except cuforge.Error:
        pass


shape4 = st.one_of(st.tuples(st.integers(1, 8), st.integers(1, 40), st.integers(1, 40), st.integers(1, 64)),
                  st.tuples(extent, extent, extent, extent))


@settings(FUZZ, max_examples=cases("conv run"))
@given(st.integers(0, len(CONV_PLANS) - 1), shape4, shape4, shape4, st.sampled_from([0, 2, 3, 8]),
       conv_geometry, st.one_of(st.none(), st.tuples(st.sampled_from(["serial", "parallel", "x"]), extent)),
       st.sampled_from([0.0, 1.0, float("nan")]))
def test_conv_run(i, a, b, d, misaligned, geometry, split_k, beta):
    """Fake device arrays of any shape: the checks refuse them by name, or a run stops at the device."""
    counted["conv run"] += 1
    sh, sw, ph, pw, dh, dw = geometry
    try:
        arrays = [FakeDeviceArray(shape, np.float16, ptr=BASE[name] + misaligned) for shape, name in ((a, "A"), (b, "B"),
                                                                                                     (d, "D"))]
    except (OverflowError, ValueError):  # no such array
        return
    try:
        CONV_PLANS[i].run(arrays[0], arrays[1], None, arrays[2], stride=(sh, sw), padding=(ph, pw),
                          dilation=(dh, dw), split_k=split_k, beta=beta)
    except cuforge.Error:
        pass


@settings(FUZZ, max_examples=cases("compile"))
@given(st.integers(0, 2), extent, extent, extent, st.sampled_from([1, 2, 0, -1, 2**40]))
def test_compile(i, m, n, k, batch):
    counted["compile"] += 1
    try:
        built = one_of_plans(i).compile(M=m, N=n, K=k, batch=batch)
        assert pathlib.Path(built.library).exists()
    except cuforge.InvalidArgumentError:
        pass


json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6)
FIELDS = ["key", "name", "library_bytes", "library_xxh3", "source_xxh3"]


@settings(FUZZ, max_examples=CASES - sum(cases(name) for name in SHARE))
@given(st.dictionaries(st.sampled_from(FIELDS + ["other"]), json_value, max_size=4),
       st.sets(st.sampled_from(FIELDS), max_size=2), st.booleans())
def test_entry_json(changes, removed, whole):
    """An entry's entry.json changed (fields of any type, fields removed, or replaced by any JSON
    value): verify reports it or finds it sound, and the next compile finds or rebuilds it."""
    counted["entry.json"] += 1
    plan = PLANS[1]
    built = plan.compile(M=128, N=128, K=128)
    entry = pathlib.Path(built.library).parent / "entry.json"
    doc = json.loads(entry.read_text())
    if whole:
        doc = changes.get("other", changes)
    else:
        doc.update(changes)
        for field in removed:
            doc.pop(field, None)
    entry.write_text(json.dumps(doc))
    for check in cuforge.cache_verify():
        assert isinstance(check["problem"], str)
    assert pathlib.Path(plan.compile(M=128, N=128, K=128).library).exists()
    assert all(c["problem"] == "" for c in cuforge.cache_verify())


def test_report():
    total = sum(counted.values())
    print(f"\nFUZZ {total} cases ({', '.join(f'{k} {v}' for k, v in counted.items())}), 0 crashes")
