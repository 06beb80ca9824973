"""One parallel build of the kernels a GPU test module runs, before its first test."""

import cuforge


def build_selected(selections):
    """Compiles, in one `cuforge.build`, the kernel each selection (a call returning a kernel name)
    picks, and returns the names. A selection cuforge refuses is skipped: its own test then fails
    with cuforge's error, rather than every test of the module failing here."""
    names = set()
    for select in selections:
        try:
            names.add(select())
        except cuforge.Error:
            pass
    cuforge.build(names)
    return names
