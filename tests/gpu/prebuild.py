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


def collected(request, param, module_values):
    """The values of parameter `param` that the session's collected tests of this module run with (after
    -k and other deselection), in `module_values`' order: what a module's prebuild needs to build."""
    wanted = [item.callspec.params[param] for item in request.session.items
              if getattr(item, "module", None) is request.module
              and param in getattr(getattr(item, "callspec", None), "params", {})]
    return [v for v in module_values if any(v is w for w in wanted)]
