"""How a value given to cuforge appears in the message of the error that refuses it: its repr, except where the
repr cannot be had or read (an integer past the digits Python prints, a repr that raises or runs long)."""

from __future__ import annotations

import numbers

_LONGEST = 200  # characters of a repr shown; a longer one is cut with its length said


def shown(value, _items: bool = True) -> str:
    """``repr(value)`` for an error message: an integer of more than 128 bits as its size in bits (Python prints
    none past 4300 digits), a repr that raises (or is no str) as the value's type, and one past 200 characters cut."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        try:
            number = int(value)
        except Exception:  # noqa: BLE001 - an Integral whose int() raises: shown by its repr below
            number = 0
        if number.bit_length() > 128:
            return f"{'a negative' if number < 0 else 'an'} integer of {number.bit_length()} bits"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - the user's __repr__, or an int Python will not print
        text = None
    if not isinstance(text, str) and _items and type(value) in (tuple, list) and len(value) <= 16:
        items = ", ".join(shown(v, False) for v in value)  # (an integer of 16610 bits, 1): what in it is wrong
        text = f"({items},)" if type(value) is tuple and len(value) == 1 else \
            f"({items})" if type(value) is tuple else f"[{items}]"
    if not isinstance(text, str):
        return f"an object of type {type(value).__name__}"
    return text if len(text) <= _LONGEST else f"{text[:_LONGEST]}... ({len(text)} characters)"
