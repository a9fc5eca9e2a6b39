"""Tools of the demo agent: every public function is a tool, described by its docstring
and typed by its annotations."""

import datetime
from typing import List


def current_time() -> str:
    """Tell the current local date and time."""
    return datetime.datetime.now().isoformat(timespec="seconds")


def add_numbers(numbers: List[float]) -> str:
    """Add numbers together.

    Args:
        numbers: The numbers to add
    """
    return str(sum(numbers))


def greet(name: str, shout: bool = False) -> str:
    """Greet someone by name.

    Args:
        name: Who to greet
        shout: Greet loudly
    """
    text = f"Hello, {name}!"
    return text.upper() if shout else text


def _private_helper() -> None:
    """Not a tool: its name starts with an underscore."""
