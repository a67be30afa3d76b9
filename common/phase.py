"""Helpers for phase packages: the labs that exist, in the planned order."""
import os


def existing(package_file: str, planned: list[str]) -> list[str]:
    """The planned labs whose module file exists (labs land one by one; the order never changes)."""
    here = os.path.dirname(os.path.abspath(package_file))
    return [name for name in planned if os.path.exists(os.path.join(here, name + ".py"))]
