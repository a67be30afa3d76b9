"""Helpers for phase packages: the labs that exist, in the planned order."""
import os


def existing(package_file: str, planned: list[str]) -> list[str]:
    """The planned labs whose folder (labNN_name/ with a lab.py) exists (labs land one by one; the order never
    changes)."""
    here = os.path.dirname(os.path.abspath(package_file))
    return [name for name in planned if os.path.exists(os.path.join(here, name, "lab.py"))]
