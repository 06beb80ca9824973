"""The names of the CUTLASS Python interface (SEED_API.md, issue 20's list) resolve under
`import cuforge as cutlass`, and each maps to what cuforge runs or is refused with a clear error."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import cuforge
import cuforge as cutlass
from fake_arrays import FakeDeviceArray, no_gpu

NAMES = [
    "op.Gemm", "op.GroupedGemm", "op.Conv2d", "op.Conv2dFprop", "op.Conv2dDgrad", "op.Conv2dWgrad",
    "epilogue.relu", "epilogue.leaky_relu", "epilogue.tanh", "epilogue.sigmoid", "epilogue.silu",
    "epilogue.hardswish", "epilogue.gelu", "epilogue.identity", "shape.Conv2DProblemSize", "ConvMode.CrossCorrelation",
    "DataType.f16", "DataType.bf16", "DataType.f32", "DataType.tf32", "DataType.f64", "DataType.s8", "DataType.u8",
    "DataType.s32", "DataType.e4m3", "DataType.e5m2", "DataType.void",
    "LayoutType.RowMajor", "LayoutType.ColumnMajor", "LayoutType.TensorNHWC",
    "OpcodeClass.TensorOp", "OpcodeClass.Simt",
    "MathOperation.multiply_add", "MathOperation.multiply_add_fast_f32", "MathOperation.multiply_add_saturate",
    "MathOperation.multiply_add_fast_bf16", "MathOperation.multiply_add_fast_f16",
    "KernelScheduleType.ScheduleAuto", "KernelScheduleType.Multistage", "KernelScheduleType.TmaWarpSpecialized",
    "KernelScheduleType.TmaWarpSpecializedCooperative", "KernelScheduleType.TmaWarpSpecializedPingpong",
    "EpilogueScheduleType.ScheduleAuto", "EpilogueScheduleType.NoSmemWarpSpecialized",
    "EpilogueScheduleType.TmaWarpSpecialized", "EpilogueScheduleType.TmaWarpSpecializedCooperative",
    "TileSchedulerType.Default", "TileSchedulerType.Persistent", "TileSchedulerType.StreamK",
    "TileDescription", "CUTLASS_PATH", "cuda_install_path", "nvcc_version", "device_id", "device_cc",
    "check_cuda_versions", "set_log_level", "logger", "__version__",
    # The interface's top-level names of its operations, export and memory pool.
    "Gemm", "GroupedGemm", "Conv2d", "Conv2dFprop", "Conv2dDgrad", "Conv2dWgrad", "pytorch", "create_memory_pool",
]


@pytest.mark.parametrize("name", NAMES)
def test_the_seed_name_resolves(name):
    obj = cutlass
    for part in name.split("."):
        obj = getattr(obj, part)


def test_persistent_is_sm90s_default_scheduler():
    plan = sm90_plan()
    plan.swizzling_functor = cutlass.TileSchedulerType.Persistent
    assert plan.swizzling_functor == cutlass.TileSchedulerType.Default
    assert "_default_a8x8x8" in plan.select(4096, 4096, 4096)


def sm90_plan():
    return cutlass.op.Gemm(element=np.float16, layout_A=cutlass.LayoutType.RowMajor,
                           layout_B=cutlass.LayoutType.ColumnMajor, layout_C=cutlass.LayoutType.RowMajor)


def test_a_seed_tile_dict_takes_automatic_schedules_on_sm90():
    plan = sm90_plan()
    plan.tile_description = {"threadblock_shape": [128, 128, 64], "cluster_shape": [2, 1, 1], "stages": 0}
    name = plan.select(4096, 4096, 4096)
    assert "_128x128x64_c2x1x1_s0_" in name and ("_coop_tmacoop_" in name or "_pingpong_tma_" in name)
    td = cutlass.TileDescription()
    td.threadblock_shape = [64, 128, 64]
    td.kernel_schedule = cutlass.KernelScheduleType.ScheduleAuto
    td.epilogue_schedule = cutlass.EpilogueScheduleType.ScheduleAuto
    plan.tile_description = td
    assert "_64x128x64_c1x1x1_s0_pingpong_tma_" in plan.select(4096, 4096, 4096), "M = 64 runs ping-pong"
    td.kernel_schedule = cutlass.KernelScheduleType.TmaWarpSpecialized
    td.epilogue_schedule = cutlass.EpilogueScheduleType.TmaWarpSpecialized
    plan.tile_description = td
    assert "_64x128x64_c1x1x1_s0_tmaws_tma_" in plan.select(4096, 4096, 4096), "CUTLASS's non-persistent kernel"
    sm80 = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor, kernel_cc=80)
    sm80.tile_description = {"threadblock_shape": [128, 128, 32], "warp_count": [2, 2, 1], "stages": 3}
    assert "_128x128x32_w2x2x1_s3_multistage_default_" in sm80.select(4096, 4096, 4096)


@pytest.mark.parametrize("tile, says", [
    ({"threadblock_shape": [128, 128, 64], "kernel_schedule": cutlass.KernelScheduleType.TmaWarpSpecializedCooperative},
     "give both, or leave both automatic"),
    ({"threadblock_shape": [128, 128, 64], "epilogue_schedule": cutlass.EpilogueScheduleType.TmaWarpSpecialized},
     "give both, or leave both automatic"),
    ({"threadblock_shape": [128, 128, 64], "kernel_schedule": cutlass.KernelScheduleType.TmaWarpSpecialized,
      "epilogue_schedule": cutlass.EpilogueScheduleType.TmaWarpSpecialized,
      "tile_scheduler": cutlass.TileSchedulerType.StreamK}, "stream-K tile scheduler runs only with the cooperative"),
])
def test_schedules_cuforge_does_not_build_are_refused(tile, says):
    plan = sm90_plan()
    with pytest.raises(cuforge.InvalidArgumentError, match=says):
        plan.tile_description = tile
    assert plan.tile_description is None


@pytest.mark.parametrize("schedule, epilogue", [("TmaWarpSpecializedPingpong", "_pingpong_tma_"),
                                                ("TmaWarpSpecializedCooperative", "_coop_tmacoop_")])
def test_sm90s_epilogue_without_shared_memory_runs_as_its_tma_epilogue(schedule, epilogue):
    """The interface's tests pin NoSmemWarpSpecialized on an SM90 tile and expect it built: cuforge's SM90 kernels
    end in their schedule's TMA epilogue, the same results."""
    plan = sm90_plan()
    td = plan.tile_descriptions()[0]
    td.threadblock_shape, td.stages = [128, 64, 64], 3
    td.kernel_schedule = getattr(cutlass.KernelScheduleType, schedule)
    td.epilogue_schedule = cutlass.EpilogueScheduleType.NoSmemWarpSpecialized
    assert epilogue in plan.construct(td).name


def test_math_operations_without_kernels_are_refused():
    for math in (cutlass.MathOperation.multiply_add_fast_bf16, cutlass.MathOperation.multiply_add_fast_f16):
        # Named as not built (they said "no sm80 GEMM kernel ... computes", as for a type no kernel takes).
        with pytest.raises(cuforge.InvalidArgumentError, match=f"^math_operation {math.name}: cuforge builds no "):
            cutlass.op.Gemm(element=np.float32, layout=cutlass.LayoutType.RowMajor, math_operation=math)
        plan = cutlass.op.Gemm(element=np.float32, layout=cutlass.LayoutType.RowMajor)
        with pytest.raises(cuforge.InvalidArgumentError, match=f"^math_operation {math.name}: cuforge builds no "):
            plan.math_operation = math


def test_a_void_c_means_no_c():
    plan = cutlass.op.Gemm(element=np.float16, element_C=cutlass.DataType.void, layout=cutlass.LayoutType.RowMajor)
    assert plan.element_C == cutlass.DataType.void
    A, B, D = (FakeDeviceArray((64, 64), np.float16, ptr=0x1_0000_0000 * (i + 1)) for i in range(3))
    with pytest.raises(cuforge.InvalidArgumentError, match="^C: the plan's element_C is void"):
        plan.run(A, B, D, D)
    with pytest.raises(cuforge.InvalidArgumentError, match="^element_A: void means no tensor"):
        cutlass.op.Gemm(element_A=cutlass.DataType.void, element_B=np.float16, element_C=np.float16,
                        element_D=np.float16, layout=cutlass.LayoutType.RowMajor)


@no_gpu
def test_a_void_c_plan_runs_without_c():
    plan = cutlass.op.Gemm(element=np.float16, element_C=cutlass.DataType.void, layout=cutlass.LayoutType.RowMajor)
    A, B, D = (FakeDeviceArray((64, 64), np.float16, ptr=0x1_0000_0000 * (i + 1)) for i in range(3))
    with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):
        plan.run(A, B, None, D)


def test_tile_descriptions_name_their_math_instruction():
    sm90 = sm90_plan().tile_descriptions()[0]
    assert sm90.math_instruction.opcode_class == cutlass.OpcodeClass.TensorOp
    assert sm90.math_instruction.element_a == cutlass.DataType.f16
    assert list(sm90.math_instruction.instruction_shape) == sm90.instruction_shape == [64, 8, 16]
    simt = cutlass.op.Gemm(element=np.float32, layout=cutlass.LayoutType.RowMajor, opclass="Simt")
    td = simt.tile_descriptions()[0]
    assert td.math_instruction.opcode_class == cutlass.OpcodeClass.Simt and td.instruction_shape == [1, 1, 1]
    assert cutlass.TileDescription().math_instruction is None, "a description made by hand names none"


def test_tile_descriptions_are_made_and_copied_as_the_interface_does():
    plan = sm90_plan()
    td = plan.tile_descriptions()[1]
    # The interface's positional order: threadblock_shape, stages, warp_count, math_instruction, then
    # cluster_shape and the three schedules.
    made = cutlass.TileDescription(td.threadblock_shape, td.stages, td.warp_count, td.math_instruction,
                                   td.cluster_shape, td.kernel_schedule, td.epilogue_schedule, td.tile_scheduler)
    assert made == td and made.math_instruction is td.math_instruction
    assert made.instruction_shape == td.instruction_shape == [64, 8, 16]
    assert plan.construct(made).rt_module.emit() == plan.construct(td).rt_module.emit()
    sm80 = cutlass.TileDescription([64, 64, 32], 3, [2, 2, 1], None)
    assert (sm80.threadblock_shape, sm80.stages, sm80.warp_count) == ([64, 64, 32], 3, [2, 2, 1])
    assert sm80.kernel_schedule == cutlass.KernelScheduleType.ScheduleAuto, "None keeps the automatic schedule"
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^TileDescription.threadblock_shape: expected three"):
        cutlass.TileDescription([64, 64], 3, [2, 2, 1], None)

    for twin in (copy.copy(td), copy.deepcopy(td)):
        assert twin == td and twin.math_instruction is td.math_instruction and twin.instruction_shape == [64, 8, 16]
        twin.stages = 4
        assert td.stages == 0, "a copy's change leaves the original as it was"
    assert copy.deepcopy(td).instruction_shape is not td.instruction_shape


def test_a_tile_descriptions_lists_change_it_in_place():
    """The interface's fields are plain lists: td.cluster_shape[0] = 2 changes td (cuforge's getters gave a
    new list each time, so the change was lost and construct(td) built the 1x1 cluster), through the same
    checks as assigning the whole list."""
    plan = sm90_plan()
    td = plan.tile_descriptions()[0]
    td.cluster_shape[0] = 2
    td.threadblock_shape[2] = 128
    assert td.cluster_shape == [2, 1, 1] and td.threadblock_shape[2] == 128
    assert "_c2x1x1_" in plan.construct(td).name and "x128_c2x1x1" in plan.construct(td).name
    shape = td.cluster_shape
    shape[1:] = [2, 1]
    assert td.cluster_shape == [2, 2, 1] == shape
    warps = list(td.warp_count)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^TileDescription.warp_count: expected three integers"):
        td.warp_count[0] = "two"
    assert td.warp_count == warps, "a refused value leaves the description as it was"
    twin = copy.deepcopy(td)
    twin.cluster_shape[0] = 1
    assert td.cluster_shape == [2, 2, 1], "a copy's list changes the copy"
    # A list taken earlier changes the field as it is now; copies and pickles of one are plain lists.
    stale = td.cluster_shape
    td.cluster_shape = [1, 2, 1]
    stale[0] = 2
    assert td.cluster_shape == [2, 2, 1] == stale
    for plain in (copy.copy(td.cluster_shape), copy.deepcopy(td.cluster_shape),
                  pickle.loads(pickle.dumps(td.cluster_shape))):
        assert type(plain) is list and plain == [2, 2, 1]
        plain[0] = 1
    assert td.cluster_shape == [2, 2, 1]
    for change in (lambda s: s.append(1), lambda s: s.sort(), lambda s: s.pop(), lambda s: s.__iadd__([1])):
        with pytest.raises(cuforge.InvalidArgumentError, match="^TileDescription.cluster_shape: three integers"):
            change(td.cluster_shape)


def test_a_tile_dict_changes_the_pinned_tile_and_may_name_the_instruction():
    plan = sm90_plan()
    plan.tile_description = {"threadblock_shape": [128, 256, 64], "cluster_shape": [2, 1, 1],
                             "instruction_shape": [64, 8, 16]}
    plan.tile_description = {"stages": 4}  # the interface updates the pinned description
    pinned = plan.tile_description
    assert (pinned.threadblock_shape, pinned.cluster_shape, pinned.stages) == ([128, 256, 64], [2, 1, 1], 4)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"instruction_shape'\]: this plan's kernels compute with"):
        plan.tile_description = {"stages": 3, "instruction_shape": [16, 8, 16]}
    assert plan.tile_description == pinned, "a refused dict leaves the pinned tile"


def test_visitor_args_are_refused_by_name():
    plan = sm90_plan()
    A, B, D = (FakeDeviceArray((64, 64), np.float16, ptr=0x1_0000_0000 * (i + 1)) for i in range(3))
    with pytest.raises(cuforge.InvalidArgumentError, match="^visitor_args: epilogue visitor trees are not offered"):
        plan.run(A, B, None, D, visitor_args={"bias": None})


def test_a_misspelt_setting_is_refused_with_the_likely_one():
    plan = sm90_plan()
    with pytest.raises(AttributeError, match="^Gemm has no setting 'activaton'; did you mean 'activation'\\?") as info:
        plan.activaton = cutlass.epilogue.relu
    assert isinstance(info.value, cuforge.InvalidArgumentError), "a cuforge error too"
    assert plan.activation == cutlass.epilogue.identity
    conv = cutlass.op.Conv2dFprop(element=np.float16)
    with pytest.raises(AttributeError, match="did you mean 'swizzling_stride'"):
        conv.swizzle_stride = 2
    plan.A, plan.alpha = np.ones((4, 4), np.float16), 2.0  # what runs default to stays settable


def test_epilogue_visitors_are_refused_by_name():
    plan = sm90_plan()
    assert plan.epilogue_visitor is None
    with pytest.raises(cuforge.InvalidArgumentError, match="^epilogue_visitor: epilogue visitor trees are not offered"):
        plan.epilogue_visitor = lambda accum: accum


def test_a_tile_dict_with_nothing_pinned_changes_the_plans_first_tile():
    simt = cutlass.op.Gemm(element=np.float32, layout=cutlass.LayoutType.RowMajor, opclass="Simt")
    first = simt.tile_descriptions()[0]
    simt.tile_description = {"stages": 4}  # from a default tile (128x128x64) this was too much shared memory
    assert simt.tile_description.threadblock_shape == first.threadblock_shape and simt.tile_description.stages == 4


def test_a_tile_description_of_another_plans_instruction_is_refused():
    f16 = sm90_plan()
    bf16 = cutlass.op.Gemm(element=cutlass.DataType.bf16, layout=cutlass.LayoutType.RowMajor)
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^tile_description: its math_instruction is .*f16 x f16"):
        bf16.tile_description = f16.tile_descriptions()[0]
    assert bf16.tile_description is None
    bf16.tile_description = bf16.tile_descriptions()[0]


def test_plan_methods_and_fields_are_not_replaced_or_deleted():
    plan = sm90_plan()
    with pytest.raises(AttributeError, match="^Gemm has no setting 'run'"):
        plan.run = 5
    with pytest.raises(AttributeError, match="^Gemm.A cannot be deleted"):
        del plan.A
    assert callable(plan.run) and plan.A is None


def test_tile_descriptions_take_only_a_math_instruction_and_key_dicts():
    with pytest.raises(cuforge.InvalidArgumentError, match="^TileDescription.math_instruction: expected a cuforge.Math"):
        cutlass.TileDescription([128, 128, 64], 3, [2, 2, 1], 5)
    td = cutlass.TileDescription([128, 128, 64], 3)
    # The interface's were hashable (plain objects); scripts key their timings by them. Hashed as compared.
    times = {d: i for i, d in enumerate(sm90_plan().tile_descriptions())}
    assert len(times) == len(sm90_plan().tile_descriptions()) and all(times[copy.copy(d)] == i for d, i in times.items())
    assert hash(td) == hash(copy.copy(td)) and {td, copy.copy(td)} == {td}
    # And they pickle (a pool of processes passes them), the instruction and attributes a plan gave them with them.
    for d in sm90_plan().tile_descriptions() + [td]:
        back = pickle.loads(pickle.dumps(d))
        assert back == d and vars(back).keys() == vars(d).keys()
        assert repr(getattr(back, "math_instruction", None)) == repr(getattr(d, "math_instruction", None))
    forged = cutlass.TileDescription.__new__(cutlass.TileDescription)
    with pytest.raises(cuforge.InvalidArgumentError, match="^TileDescription.stages: expected"):
        forged.__setstate__(({"stages": "three"}, {}))  # read back through the checked properties


def test_settings_changed_from_two_threads_both_stay():
    import threading

    plan = sm90_plan()
    stop = threading.Event()

    def toggle():
        while not stop.is_set():
            plan.deterministic = not plan.deterministic

    worker = threading.Thread(target=toggle)
    worker.start()
    try:
        for _ in range(200):
            plan.activation = "relu"
            plan.split_k_slices = 4
            assert plan.activation == cutlass.epilogue.relu and plan.split_k_slices == 4
            plan.activation = "identity"
            plan.split_k_slices = 1
    finally:
        stop.set()
        worker.join()


def test_the_interfaces_enums_and_spellings_are_taken():
    """The interface's enums are cutlass_library's, its strings snake_case (its getattr_enum); its tests
    mix them with cutlass.* names."""
    L = pytest.importorskip("cutlass_library")
    assert cutlass.Gemm is cutlass.op.Gemm and cutlass.Conv2dWgrad is cutlass.op.Conv2dWgrad
    plan = cutlass.op.Gemm(element=L.DataType.f16, layout=L.LayoutType.RowMajor)
    assert (plan.element_A, plan.layout_B) == (cutlass.DataType.f16, cutlass.LayoutType.RowMajor)
    plan.opclass = L.OpcodeClass.TensorOp
    td = cutlass.TileDescription()
    td.kernel_schedule = L.KernelScheduleType.TmaWarpSpecializedCooperative
    assert td.kernel_schedule == cutlass.KernelScheduleType.TmaWarpSpecializedCooperative
    # A member cuforge lacks is named as such, with the members it has (not "expected a cuforge.KernelScheduleType").
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^TileDescription.kernel_schedule: KernelScheduleType"
                       r".CpAsyncWarpSpecializedCooperative is none of cuforge's \(cuforge.KernelScheduleType has "
                       r".*TmaWarpSpecializedCooperative"):
        td.kernel_schedule = L.KernelScheduleType.CpAsyncWarpSpecializedCooperative
    conv = cutlass.op.Conv2d(kind="fprop", element=np.float16)
    conv.opclass = "tensor_op"
    assert conv.opclass == cutlass.OpcodeClass.TensorOp
    for mode in (L.ConvMode.CrossCorrelation, "cross_correlation", "CrossCorrelation", 0):
        size = cutlass.shape.Conv2DProblemSize(1, 8, 8, 4, 16, 3, 3, 4, 1, 1, 2, 2, 1, 1, mode, 1, 1)
        assert size.mode == cutlass.ConvMode.CrossCorrelation and (size.P, size.Q) == (4, 4)
        assert size.mode == 0 and size.mode == L.ConvMode.CrossCorrelation, "read back as the interface's int"
    assert {L.ConvMode.CrossCorrelation: "x"}[cutlass.ConvMode.CrossCorrelation] == "x"
    with pytest.raises(cuforge.InvalidArgumentError, match="^mode: cuforge's kernels compute cross-correlation"):
        cutlass.shape.Conv2DProblemSize(1, 8, 8, 4, 16, 3, 3, 4, 1, 1, 2, 2, 1, 1, L.ConvMode.Convolution)
    with pytest.raises(cuforge.InvalidArgumentError, match="^opclass: expected a cuforge.OpcodeClass"):
        plan.opclass = cutlass.LayoutType.RowMajor  # cuforge's own enum of another kind is no spelling of one
    # A tile description's fields take them too, in the constructor as set one by one.
    td = cutlass.TileDescription([128, 128, 64], 0, None, None, [1, 1, 1], L.KernelScheduleType.ScheduleAuto,
                                 L.EpilogueScheduleType.ScheduleAuto, L.TileSchedulerType.Persistent)
    assert (td.kernel_schedule, td.tile_scheduler) == (cutlass.KernelScheduleType.ScheduleAuto,
                                                       cutlass.TileSchedulerType.Default)
    td.kernel_schedule = L.KernelScheduleType.TmaWarpSpecializedCooperative
    assert td.kernel_schedule == cutlass.KernelScheduleType.TmaWarpSpecializedCooperative
    with pytest.raises(cuforge.InvalidArgumentError, match="^TileDescription.kernel_schedule: expected a cuforge"):
        td.kernel_schedule = cutlass.EpilogueScheduleType.TmaWarpSpecialized  # cuforge's, of another kind
    with pytest.raises(cuforge.InvalidArgumentError, match="^TileDescription.kernel_schedule: expected a cuforge"):
        td.kernel_schedule = L.EpilogueScheduleType.TmaWarpSpecialized  # theirs, of another kind


def test_none_is_automatic_on_a_tile_descriptions_fields():
    td = sm90_plan().tile_descriptions()[0]
    td.stages = td.kernel_schedule = td.epilogue_schedule = td.tile_scheduler = None
    assert (td.stages, td.kernel_schedule, td.epilogue_schedule, td.tile_scheduler) == (
        0, cutlass.KernelScheduleType.ScheduleAuto, cutlass.EpilogueScheduleType.ScheduleAuto,
        cutlass.TileSchedulerType.Default)
    with pytest.raises(cuforge.InvalidArgumentError, match="^TileDescription.threadblock_shape: expected three"):
        td.threadblock_shape = None


def test_sm90s_listed_builder_schedules_are_automatic_as_the_interface_listed_them():
    """The CUTLASS Python interface listed each SM90 tile first with ScheduleAuto (CUTLASS's builder's
    choice: ping-pong for 64 rows, cooperative otherwise), and its tests change the first one's shape:
    a 64-row tile then runs ping-pong. Every listed description is still one kernel of its own."""
    plan = cutlass.op.Gemm(element=cutlass.DataType.f16, layout=cutlass.LayoutType.RowMajor,
                           element_accumulator=cutlass.DataType.f32)
    tds = plan.tile_descriptions()
    auto = cutlass.KernelScheduleType.ScheduleAuto
    assert (tds[0].kernel_schedule, tds[0].epilogue_schedule) == (auto, cutlass.EpilogueScheduleType.ScheduleAuto)
    names = [plan.construct(td).name for td in tds]
    assert len(set(names)) == len(names), "two listed descriptions emit one kernel"
    assert "_coop_tmacoop_" in names[0]
    td = plan.tile_descriptions()[0]
    td.threadblock_shape, td.stages = [64, 64, 64], 5
    assert "_64x64x64_c1x1x1_s5_pingpong_tma_" in plan.construct(td, alignment_A=8, alignment_B=8, alignment_C=8).name
    td = plan.tile_descriptions()[0]
    td.threadblock_shape, td.cluster_shape = [64, 128, 64], [2, 2, 1]
    assert "_64x128x64_c2x2x1_s0_pingpong_tma_" in plan.construct(td).name
    td.kernel_schedule = cutlass.KernelScheduleType.TmaWarpSpecializedCooperative  # explicit: the user's word
    td.epilogue_schedule = cutlass.EpilogueScheduleType.TmaWarpSpecializedCooperative
    with pytest.raises(cuforge.InvalidArgumentError, match="cooperative"):
        plan.construct(td)


def test_a_pinned_sm90_tile_of_operands_tma_cannot_load_runs_sm80s_kernel_of_it():
    """The interface's SM90 tests pin a tile of automatic schedules and stages, one CTA to a cluster, on f16
    operands of 4 or 2 elements (8 or 4 bytes) and int8 C of 8, for which it built SM90 cp.async kernels:
    cuforge runs SM80's kernel of that threadblock shape. A description naming something SM90's own (a
    cluster) keeps to its SM90 kernels and is refused for such operands."""
    f16, s8, s32 = cutlass.DataType.f16, cutlass.DataType.s8, cutlass.DataType.s32
    plan = cutlass.op.Gemm(element=f16, layout_A=cutlass.LayoutType.RowMajor, layout_B=cutlass.LayoutType.ColumnMajor,
                           layout_C=cutlass.LayoutType.RowMajor, element_accumulator=cutlass.DataType.f32, kernel_cc=90)
    td = plan.tile_descriptions()[0]
    td.threadblock_shape, td.stages, td.cluster_shape = [128, 128, 32], None, [1, 1, 1]
    for a, c in ((4, 8), (2, 2)):
        name = plan.construct(td, alignment_A=a, alignment_B=a, alignment_C=c).name
        assert name.startswith("cuforge_sm80_") and "_128x128x32_" in name and f"_a{a}x{a}x" in name, name
    assert plan.construct(td, alignment_A=8, alignment_B=8, alignment_C=8).name.startswith("cuforge_sm90_")
    td.cluster_shape = [2, 1, 1]
    with pytest.raises(cuforge.InvalidArgumentError, match="accepts the operands' alignment"):
        plan.construct(td, alignment_A=4, alignment_B=4, alignment_C=8)
    # Only for operands its SM90 kernels cannot load: a 64-row tile's ping-pong kernel has no stream-K, and
    # asking for it is refused as before, not run on SM80.
    td = plan.tile_descriptions()[0]
    td.threadblock_shape, td.stages, td.cluster_shape = [64, 64, 64], None, [1, 1, 1]
    plan.tile_description = td
    with pytest.raises(cuforge.InvalidArgumentError, match="stream-K"):
        plan.decomposition = cutlass.Decomposition.StreamK
        plan.select(512, 512, 512)
    plan = cutlass.op.Gemm(element=s8, element_accumulator=s32, layout_A=cutlass.LayoutType.RowMajor,
                           layout_B=cutlass.LayoutType.ColumnMajor, layout_C=cutlass.LayoutType.RowMajor, kernel_cc=90)
    td = plan.tile_descriptions()[0]
    td.threadblock_shape, td.stages, td.cluster_shape = [128, 128, 128], None, [1, 1, 1]
    for a, c in ((16, 8), (4, 16)):
        name = plan.construct(td, alignment_A=a, alignment_B=a, alignment_C=c).name
        assert name.startswith("cuforge_sm80_") and "_128x128x128_" in name, name


def test_a_conv2d_on_hopper_takes_the_interfaces_sm80_tile_dicts():
    """The interface's Conv2d ran SM80 kernels on Hopper, and its tests pin SM80 tiles by dict: a plan whose
    family cuforge chose moves to SM80 kernels for one; with kernel_cc=90 asked for, the dict is refused."""
    f16, f32 = cutlass.DataType.f16, cutlass.DataType.f32
    tile = {"threadblock_shape": [128, 128, 64], "warp_count": [2, 2, 1], "stages": 3, "instruction_shape": [16, 8, 16]}
    plan = cutlass.Conv2d(kind="fprop", element=f16, element_accumulator=f32)
    assert plan.cc == 90 and plan.select(32, 56, 56, 64, 64, 3, 3, 1, 1, 1).startswith("cuforge_sm90_")
    plan.tile_description = tile
    assert plan.select(32, 56, 56, 64, 64, 3, 3, 1, 1, 1).startswith(
        "cuforge_sm80_fprop_tensorop_mma_f16_f16_f32_f16_f16_rcr_128x128x64_w2x2x1_s3_multistage_")
    # A description of the SM80 family's for construct() on a plan left as it is.
    sm80 = cutlass.Conv2d(kind="fprop", element=f16, element_accumulator=f32, kernel_cc=80).tile_descriptions()[0]
    other = cutlass.Conv2d(kind="dgrad", element=f16, element_accumulator=f32)
    assert other.construct(sm80).name.startswith("cuforge_sm80_dgrad_")
    assert other.select(32, 56, 56, 64, 64, 3, 3, 1, 1, 1).startswith("cuforge_sm90_")
    pinned = cutlass.Conv2d(kind="fprop", element=f16, element_accumulator=f32, kernel_cc=90)
    with pytest.raises(cuforge.InvalidArgumentError, match="compute with MathInstruction"):
        pinned.tile_description = tile
    # After an SM90 tile; a dict with a warp count and no instruction shape; compile() builds the SM80 pick.
    plan = cutlass.Conv2d(kind="wgrad", element=f16, element_accumulator=f32)
    plan.tile_description = plan.tile_descriptions()[0]
    plan.tile_description = {"threadblock_shape": [128, 128, 32], "warp_count": [2, 2, 1], "stages": 3}
    assert "_sm80_wgrad_" in plan.select(32, 56, 56, 64, 64, 3, 3, 1, 1, 1) and plan._plan.kernel_cc == 80
    # A refused SM80 tile leaves the plan as it was: its family and its tile.
    plan = cutlass.Conv2d(kind="fprop", element=f16, element_accumulator=f32)
    before = plan.tile_descriptions()[0]
    plan.tile_description = before
    with pytest.raises(cuforge.InvalidArgumentError):
        plan.tile_description = dict(tile, warp_count=[3, 2, 1])
    assert plan._plan.kernel_cc == 90 and plan.tile_description == before


def test_the_interfaces_conv_tiles_of_the_narrower_instruction_and_of_simt_run():
    """The interface's conv2d_sm80.py pins 16x8x8 f16 tiles (cuforge's 16-bit SM80 kernels issue 16x8x16: the
    same products, logged) and switches plans to SIMT (SM80's CUDA-core implicit GEMM, f16 and f32)."""
    f16, f32 = cutlass.DataType.f16, cutlass.DataType.f32
    for kind, layouts in (("fprop", "rcr"), ("dgrad", "rrr"), ("wgrad", "crr")):
        plan = cutlass.Conv2d(kind=kind, element=f16, element_accumulator=f32)
        plan.opclass = "tensor_op"
        plan.tile_description = {"threadblock_shape": [128, 64, 32], "warp_count": [2, 2, 1], "stages": 3,
                                 "instruction_shape": [16, 8, 8]}
        assert plan.construct().name.startswith(
            f"cuforge_sm80_{kind}_tensorop_mma_f16_f16_f32_f16_f16_{layouts}_128x64x32_w2x2x1_s3_multistage_")
        for element, stages in ((f16, 2), (f32, 4)):
            plan = cutlass.Conv2d(kind=kind, element=element, element_accumulator=f32)
            plan.opclass = "simt"
            plan.tile_description = {"threadblock_shape": [128, 128, 8], "warp_count": [4, 2, 1], "stages": stages,
                                     "instruction_shape": [1, 1, 1]}
            t = element.name
            assert plan.construct().name.startswith(
                f"cuforge_sm80_{kind}_simt_mma_{t}_{t}_f32_{t}_{t}_{layouts}_128x128x8_w4x2x1_s{stages}_multistage_")
    # Not a narrower K of the plan's instruction: refused.
    plan = cutlass.Conv2d(kind="fprop", element=f16, element_accumulator=f32, kernel_cc=80)
    for shape in ([16, 8, 32], [8, 8, 8], [16, 8, 3], [16, 8, 4]):
        with pytest.raises(cuforge.InvalidArgumentError, match="compute with MathInstruction"):
            plan.tile_description = {"instruction_shape": shape}
    # f64 convolutions run on SIMT kernels (no tensor-core kernel computes them), any channel count.
    f64 = cutlass.Conv2d(kind="fprop", element=cutlass.DataType.f64, element_accumulator=cutlass.DataType.f64)
    assert f64.select(2, 9, 7, 3, 5, 3, 3, padding=(1, 1)).startswith("cuforge_sm80_fprop_simt_mma_f64_")


@pytest.mark.parametrize("name", ["epilogue.trace", "epilogue.reshape", "epilogue.permute", "epilogue.maximum",
                                  "Tensor"])
def test_the_interfaces_visitor_tree_names_are_refused_by_name(name):
    """Epilogue visitor trees are not offered: their names raise a cuforge error saying why, and what to do
    instead; an ImportError where imported (the interface's `from cutlass import Tensor`: an AttributeError
    there became a bare "cannot import name"), else an AttributeError (hasattr raised the ImportError)."""
    *path, last = name.split(".")
    module = cutlass
    for part in path:
        module = getattr(module, part)
    with pytest.raises(cuforge.InvalidArgumentError, match=f"cuforge.{name}.*not offered") as info:
        getattr(module, last)
    assert isinstance(info.value, AttributeError) and not isinstance(info.value, ImportError)
    assert not hasattr(module, last) and getattr(module, last, None) is None
    with pytest.raises(ImportError, match=f"cuforge.{name}.*not offered") as info:
        exec(f"from {module.__name__} import {last}", {})
    assert isinstance(info.value, cuforge.InvalidArgumentError)
    with pytest.raises(ImportError, match=f"cuforge.{name}.*not offered"):
        # The instruction of the name refused, not the first of the statement's:
        exec(f"from {module.__name__} import {'Gemm' if module is cutlass else 'relu'}, {last}", {})
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        getattr(module, "no_such_name")


def test_the_interfaces_device_cc_imports_from_its_backend_path():
    """The interface's notebooks: `from cutlass.backend.utils.device import device_cc`."""
    from cuforge.backend.utils.device import device_cc

    assert device_cc is cuforge.device_cc and cutlass.backend.utils.device.device_cc is cuforge.device_cc


def test_activation_functions_are_checked_and_fixed():
    """An ActivationFunction is made of a core Activation (5 or 'relu' raised AttributeError) and its kind
    cannot be changed after (a plan given one of kind 99 raised nanobind's TypeError); equal by kind."""
    from cuforge.epilogue import ActivationFunction

    for bad in (5, "relu", None):
        with pytest.raises(cuforge.InvalidArgumentError, match="^ActivationFunction: expected a cuforge.Activation"):
            ActivationFunction(bad)
    with pytest.raises(AttributeError):
        cutlass.epilogue.relu.kind = 99
    assert copy.deepcopy(cutlass.epilogue.relu) == cutlass.epilogue.relu != cutlass.epilogue.gelu
    assert ActivationFunction(cuforge.Activation.relu) == cutlass.epilogue.relu


@pytest.mark.parametrize("field, value", [("threadblock_shape", [True, False, True]), ("stages", False),
                                          ("warp_count", (2, True, 1)), ("cluster_shape", [True, True, True])])
def test_tile_description_integers_are_not_bools(field, value):
    """nanobind casts True to 1: a 1x0x1 tile and 'False' stages (automatic) were taken, as integers() refuses."""
    td = cutlass.TileDescription([64, 64, 64], 3, [2, 2, 1])
    with pytest.raises(cuforge.InvalidArgumentError, match=f"^TileDescription.{field}: expected"):
        setattr(td, field, value)
    with pytest.raises(cuforge.InvalidArgumentError, match=f"^TileDescription.{field}: expected"):
        cutlass.TileDescription(**{"threadblock_shape": [64, 64, 64], field: value})


@pytest.mark.parametrize("kind", ["Conv2dFprop", "Conv2dDgrad", "Conv2dWgrad"])
def test_a_passs_run_takes_its_arguments_in_the_order_the_interfaces_notebook_passed_them(kind):
    """The interface's notebook: plan.run(input, weight, C, output, stride, padding, dilation, alpha, beta)."""
    import inspect

    order = list(inspect.signature(getattr(cutlass, kind).run).parameters)[5:]
    assert order == list(inspect.signature(cutlass.Conv2d.run).parameters)[5:]
    assert order[:5] == ["stride", "padding", "dilation", "alpha", "beta"]


def test_a_positional_stride_is_the_convolutions_stride():
    plan = cutlass.Conv2dFprop(element=np.float16, element_accumulator=np.float32)
    x, w = np.ones((2, 8, 8, 16), np.float16), np.ones((32, 3, 3, 16), np.float16)
    y = np.zeros((2, 4, 4, 32), np.float16)  # stride 2, padding 1
    with pytest.raises(cuforge.InvalidArgumentError, match=r"^D: expected P \(height\) = 8 "):
        plan.run(x, w, y, y, (1, 1), (1, 1), (1, 1), 1.0, 0.0)
    if cuforge.device_count() == 0:
        with pytest.raises(cuforge.DeviceError, match="no CUDA GPU was found"):  # past every check of the geometry
            plan.run(x, w, y, y, (2, 2), (1, 1), (1, 1), 1.0, 0.0)


def test_the_interfaces_plan_attributes():
    """name, current_cc and op_class, which the CUTLASS Python interface's plans set at construction."""
    gemm = cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor, cc=90)
    assert (gemm.name, gemm.current_cc, gemm.op_class) == ("gemm", 90, cutlass.OpcodeClass.TensorOp)
    assert cutlass.op.Gemm(element=np.float16, layout=cutlass.LayoutType.RowMajor, cc=90, kernel_cc=80).current_cc == 80
    gemm.op_class = cutlass.OpcodeClass.Simt
    assert gemm.opclass == cutlass.OpcodeClass.Simt
    assert cutlass.op.GroupedGemm(element=np.float16, layout=cutlass.LayoutType.RowMajor, cc=90).name == "grouped_gemm"
    assert [cutlass.op.Conv2d(kind, element=np.float16, cc=90).name for kind in ("fprop", "dgrad", "wgrad")] == [
        "conv2dfprop", "conv2ddgrad", "conv2dwgrad"]


def test_the_interfaces_spellings_and_resets_of_settings():
    """Upper-case names (the interface's getattr_enum lower-cased them), math_operation = None (the kernels' own
    again), few_channels refused on dgrad as the interface refused it there, an unknown activation an AttributeError
    as the interface's lookup raised, and C's type from element= before D's tensor (the interface's order)."""
    plan = cutlass.op.Gemm(element=np.float32, layout=cutlass.LayoutType.RowMajor, cc=80)
    plan.opclass = "SIMT"
    assert plan.opclass == cutlass.OpcodeClass.Simt
    plan.opclass = "TENSOR_OP"
    plan.opclass = "tensorop"
    assert plan.opclass == cutlass.OpcodeClass.TensorOp
    plan.math_operation = "MULTIPLY_ADD_FAST_F32"
    assert plan.math_operation == cutlass.MathOperation.multiply_add_fast_f32
    plan.math_operation = None
    assert plan.math_operation == cutlass.MathOperation.multiply_add and plan._plan.settings.math is None
    with pytest.raises(AttributeError, match="^activation: unknown 'bogus'"):
        plan.activation = "bogus"
    dgrad = cutlass.op.Conv2d(kind="dgrad", element=np.float16, cc=80)
    for few in ("few_channels", "FewChannels"):
        with pytest.raises(cuforge.InvalidArgumentError, match="^iterator_algorithm few_channels: fprop's .* dgrad"):
            dgrad.iterator_algorithm = few
    a, d = np.ones((128, 128), np.float16), np.zeros((128, 128), np.float32)
    given = cutlass.op.Gemm(A=a, B=a, D=d, element=np.float16, layout=cutlass.LayoutType.RowMajor, cc=90)
    assert (given.element_C, given.element_D) == (cutlass.DataType.f16, cutlass.DataType.f32)
    assert cutlass.op.Gemm(A=a, B=a, D=d).element_C == cutlass.DataType.f32, "without element=, D's tensor's"
    with pytest.raises(cuforge.DataTypeError, match="^element_A is f16, but the tensor A given with it holds f32"):
        cutlass.op.Gemm(A=d, B=a, element_A=np.float16, element=np.float16)  # no run of it could be: refused now
