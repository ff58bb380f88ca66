"""Files a request names inside a folder of the server (the records folder, the bots folder).

A request names a file by a plain path relative to the folder. Anything that could reach
outside is refused: empty names, absolute paths, ``~``, backslashes, NUL bytes, ``:``, empty,
``.`` and ``..`` parts, hidden names, and files whose real path (symbolic links followed) is
not under the folder's real path.
"""

from __future__ import annotations

from pathlib import Path


def plain_name(name: str) -> bool:
    """Whether ``name`` is a plain path relative to a folder (module doc), before any lookup."""
    return not (
        not name
        or name.startswith(("/", "~"))
        or "\\" in name
        or "\x00" in name
        or ":" in name
        or any(part in ("", ".", "..") or part.startswith(".") for part in name.split("/"))
    )


def file_inside(root: Path, name: str) -> Path | None:
    """The real path of the file that ``name`` names under ``root`` (a resolved folder), or None
    when it is not a plain name, leads outside the folder, or is not a file there."""
    if not plain_name(name):
        return None
    try:
        path = (root / name).resolve()
        return path if path.is_relative_to(root) and path.is_file() else None
    except OSError:  # a name the file system refuses (too long, a loop of links, ...)
        return None
