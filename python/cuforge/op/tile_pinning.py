"""How a plan pins a tile description (the Plan's base): the catalog's descriptions listed, one pinned as a
TileDescription or a dict of its fields, on this plan's kernel family or the one it names; and the CUTLASS Python
interface's way with a shape no listed tile has, kept and refused when the plan next builds or runs."""

from __future__ import annotations

import copy
import logging
import os
import stat

from .._core import DataTypeError, InvalidArgumentError, TileDescription
from ..arguments import tile_from

_logger = logging.getLogger("cuforge")

# Where the CUTLASS Python interface wrote a failed kernel's compiler output (its tests remove the file after an
# impossible tile's compile()).
INTERFACE_ERROR_FILE = "cutlass_python_compilation_device_error.txt"


class TilePinning:
    """The tile-description part of a plan; the plan holds ``_plan`` (the core plan), ``_core_args``,
    ``_settings_lock`` and ``_update``."""

    # (description, why): a pinned tile refused for a threadblock shape no listed tile has, refused when the plan
    # next builds, constructs or runs (tile_description's setter).
    _pending_tile = None

    def _family_for_tile(self, value):
        """A core plan of another kernel family where the tile description or dict asks for one, with the
        arguments it was made of (None: this plan's family): Conv2d's SM80 tiles on Hopper, Gemm's tiles of the
        other opcode class."""
        return None

    def _tile_from(self, value, core=None) -> TileDescription:
        """A tile description or dict (arguments.tile_from) for `core` (this plan's); a dict changes the
        pinned tile, else (as the CUTLASS Python interface's dicts change its default) the plan's first
        listed tile, its schedules left automatic."""
        core = self._plan if core is None else core
        base = core.settings.tile
        if base is None and isinstance(value, dict):
            base = TileDescription()
            first = core.tile_descriptions()[0]
            for field in ("threadblock_shape", "warp_count", "stages", "cluster_shape", "swap_ab"):
                setattr(base, field, getattr(first, field))
        return tile_from(value, base, core.math_instruction())

    def tile_descriptions(self) -> list[TileDescription]:
        """Every tile description the catalog can build for this plan's types, layouts and target, each
        with the ``math_instruction`` (and its ``instruction_shape``) the plan's kernels compute with."""
        instruction = self._plan.math_instruction()
        tiles = self._plan.tile_descriptions()
        for t in tiles:
            t.math_instruction = instruction
            t.instruction_shape = list(instruction.instruction_shape)
        return tiles

    @property
    def tile_description(self) -> TileDescription | None:
        """The pinned tile description, or None when cuforge chooses per problem: a copy (a change to it
        pins nothing until it is set again). Set a TileDescription, a dict of its fields (they change the
        pinned one, as the CUTLASS Python interface's dicts do), or None to let cuforge choose again.

        A description refused for a threadblock shape none of the listed tiles has (17x32x5), and for nothing
        else (not the shared memory its stages take, which the interface checked when set), is kept, and refused
        when the plan next compiles, constructs or runs, as the interface found such shapes at compile(); anything
        else is refused here, the plan left as it was."""
        pending = self._pending_tile
        return copy.copy(pending[0]) if pending is not None else self._plan.settings.tile

    @tile_description.setter
    def tile_description(self, value):
        with self._settings_lock:
            try:
                self._pin(value)
            except InvalidArgumentError as e:
                # Shared memory the stages do not fit the interface checked when set (its valid_stage_count).
                unlisted = None if "shared memory" in str(e) else self._refused_for_an_unlisted_shape(value)
                if unlisted is None:
                    raise
                self._pending_tile = (unlisted, str(e))
                return
            self._pending_tile = None

    def _refused_for_an_unlisted_shape(self, value) -> TileDescription | None:
        """A refused tile description (or dict) as the description it is, where its threadblock shape is none of
        the listed tiles' and it would be pinned with the first listed tile's shape instead; else None."""
        try:
            tile = value if isinstance(value, TileDescription) else self._tile_from(value)
        except (InvalidArgumentError, DataTypeError):
            return None
        listed = self._plan.tile_descriptions()
        if not isinstance(value, (TileDescription, dict)) or min(tile.threadblock_shape) < 1 or \
                any(t.threadblock_shape == tile.threadblock_shape for t in listed):
            return None  # refused now: a listed shape's refusal, or extents no tile has (0x0x0)
        probe = copy.copy(tile)
        probe.threadblock_shape = listed[0].threadblock_shape
        try:
            self._trial_core(probe)
        except (InvalidArgumentError, DataTypeError):
            return None
        return copy.copy(tile)

    def _trial_core(self, tile_description=None, change=None):
        """A new core plan of this plan's types and settings (of the family the tile names, where it names
        another) with the tile pinned and `change` made to the settings, checked whole: the plan's own core
        plan, its settings and the kernels it compiled, untouched."""
        family = self._family_for_tile(tile_description) if tile_description is not None else None
        core = family[0] if family is not None else self._core_class(settings=self._plan.settings, **self._core_args)
        settings = core.settings
        if tile_description is not None:
            settings.tile = self._tile_from(tile_description, core)
        if change is not None:
            change(settings)
        core.settings = settings
        return core

    def _refuse_pending_tile(self, compiling: bool = False) -> None:
        """The pending tile's refusal (an InvalidArgumentError); compiling, its message also written to
        ./cutlass_python_compilation_device_error.txt, where the interface wrote its failed compiles' (not
        over anything but a regular file)."""
        pending = self._pending_tile
        if pending is None:
            return
        tile, why = pending
        where = ""
        if compiling and (not os.path.lexists(INTERFACE_ERROR_FILE) or
                          stat.S_ISREG(os.lstat(INTERFACE_ERROR_FILE).st_mode)):
            try:
                with open(INTERFACE_ERROR_FILE, "w") as f:
                    f.write(f"Compilation error for the following kernel: \n{tile}\nError Message:\n{why}\n")
                where = f" (also in ./{INTERFACE_ERROR_FILE}, as the CUTLASS Python interface wrote it)"
            except OSError:
                pass
        raise InvalidArgumentError(f"the pinned {why}{where}")

    def _pin(self, value):
        with self._settings_lock:
            family = None if value is None else self._family_for_tile(value)
            if family is not None:  # pinned on the new family's plan, which replaces this one once it takes it
                core, core_args = family
                settings = core.settings
                settings.tile = self._tile_from(value, core)
                core.settings = settings
                self._core_args = core_args
                self._plan = core
                _logger.info("tile_description names an sm%d %s tile: the plan runs those kernels from now on",
                             core.kernel_cc, core.math_instruction().opcode_class.name)
                return
            value = None if value is None else self._tile_from(value)

            def change(s):
                s.tile = value

            self._update(change)
