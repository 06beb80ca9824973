"""How a value given to cuforge appears in the message of the error that refuses it: its repr, except where the
repr cannot be had or read (an integer past the 4300 digits Python prints, a repr that raises or runs long)."""

from __future__ import annotations

import numbers

_LONGEST = 200  # characters of a repr shown; a longer one is cut with its length said


def shown(value) -> str:
    """``repr(value)`` for an error message: an integer of more than 64 bits as its size in bits, a repr that
    raises as the value's type, and a repr past 200 characters cut."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        try:
            bits = int(value).bit_length()
        except Exception:  # noqa: BLE001 - an Integral whose int() raises: shown by its type below
            bits = 0
        if bits > 64:
            return f"{'a negative' if value < 0 else 'an'} integer of {bits} bits"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - the user's __repr__, or an int Python will not print
        return f"a {type(value).__name__}"
    return text if len(text) <= _LONGEST else f"{text[:_LONGEST]}... ({len(text)} characters)"
