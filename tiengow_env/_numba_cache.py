"""numba's on-disk cache (``cache=True``) for the project's kernels, kept fresh across files.

numba checks a cached kernel against the file that defines it and no other (its documentation
says so), yet the machine code of a kernel holds compiled copies of the kernels it calls in
other files and of the constants it reads from ``layout.py`` and ``tiles.py``. After an edit or
an upgrade that changed ``_kernels.py`` alone, the cached kernels of ``_search_kernels.py``
would go on running the old core. ``register`` puts a locator in front of numba's own: for a
kernel of ``tiengow_env`` or ``tiengow`` it adds to numba's source stamp a digest of every file
the kernel is compiled from (``sources``), so that a change to any of them compiles it afresh.

It also says where the project's kernels are cached. In a checkout (a ``pyproject.toml`` beside
the package) that is numba's choice, the git-ignored ``__pycache__`` folders. Installed from a
wheel, it is the user's cache folder, ``$XDG_CACHE_HOME/tiengow/numba`` (default ``~/.cache``),
or if that cannot be written ``tiengow-UID/numba`` in the temporary folder (a folder of the
user's own, as numba's index files are pickles: never one that others may write, and never the
current folder, where Python's ``tempfile`` falls back to), and never beside the kernels in
site-packages: no command writes into the installed package. When none can be written, a
kernel already cached in the first is still loaded, and one that must be compiled raises an
``OSError`` that says so and names ``NUMBA_CACHE_DIR``. ``NUMBA_CACHE_DIR`` wins over both.
Other code's kernels, the user's own among them, are left to numba, and nothing is set for the
rest of the process.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import stat
import tempfile
import types
from pathlib import Path

from numba.core import caching, config

# numba's private names (CacheImpl is _CacheImpl in older releases); without them numba's own check
# and choice of folder stay.
_IMPL = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
_LOCATOR = getattr(caching, "_CacheLocator", None)
_USER_WIDE = getattr(caching, "UserWideCacheLocator", None) or getattr(caching, "_UserWideCacheLocator", None)


def ours(module: str) -> bool:
    """True for a module of the project's two import names."""
    return module == "tiengow_env" or module.startswith(("tiengow_env.", "tiengow."))


def sources(py_func) -> tuple[str, ...]:
    """The files a kernel is compiled from: every module of the core package, its own file, and
    the file of every project module or kernel its module has imported (imports run one way, so
    the core and the kernel modules of the layers below are all there is)."""
    files = set(_core())
    files.add(py_func.__code__.co_filename)
    for value in list(py_func.__globals__.values()):
        if isinstance(value, types.ModuleType):
            if ours(value.__name__) and getattr(value, "__file__", None):
                files.add(value.__file__)
        elif ours(getattr(getattr(value, "py_func", None), "__module__", None) or ""):
            files.add(value.py_func.__code__.co_filename)
    return tuple(sorted(files))


@functools.cache
def installed_cache_dirs() -> tuple[str, ...]:
    """Where the project's kernels are cached when the package is installed, first choice first:
    the user's cache folder, else one in the temporary folder; none for a checkout."""
    package = Path(__file__).resolve().parent
    if (package.parent / "pyproject.toml").exists():
        return ()
    return cache_dirs()


def cache_dirs() -> tuple[str, ...]:
    """The user's cache folder for the kernels, then, if the system has a temporary folder (not
    the current one), the user's own folder in it."""
    user = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    dirs = [os.path.join(user, "tiengow", "numba")]
    try:
        temporary = tempfile.gettempdir()
    except OSError:  # no usable temporary folder at all
        return tuple(dirs)
    named = {os.path.abspath(os.environ[v]) for v in ("TMPDIR", "TEMP", "TMP") if os.environ.get(v)}
    if os.path.abspath(temporary) != os.path.abspath(os.getcwd()) or temporary in named | {"/tmp", "/var/tmp"}:
        uid = getattr(os, "getuid", None)  # Windows: the temporary folder is the user's own already
        dirs.append(os.path.join(temporary, f"tiengow-{uid()}" if uid else "tiengow", "numba"))
    return tuple(dirs)


def _own_folder(root: str) -> bool:
    """True unless ``root`` (one of ``cache_dirs``) is in a ``tiengow-UID`` folder of the temporary
    folder that another user owns or may write (one made now is the user's alone)."""
    folder = os.path.dirname(root)
    if not hasattr(os, "getuid") or not os.path.basename(folder).startswith("tiengow-"):
        return True
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


@functools.cache
def _core() -> tuple[str, ...]:
    return tuple(str(path) for path in Path(__file__).parent.glob("*.py"))


@functools.cache
def _digest(stamped: tuple[tuple[str, int, int], ...]) -> str:
    sha = hashlib.sha256()
    for path, _, _ in stamped:
        sha.update(os.path.basename(path).encode() + b"\0" + Path(path).read_bytes() + b"\0")
    return sha.hexdigest()


def digest(files: tuple[str, ...]) -> str:
    """A digest of the files' names and contents (read once per process while they are unchanged)."""
    stats = [os.stat(path) for path in files]
    return _digest(tuple((path, st.st_mtime_ns, st.st_size) for path, st in zip(files, stats)))


class KernelSourcesLocator(_LOCATOR or object):
    """A project kernel's locator: numba's own (or, installed, one in ``installed_cache_dirs``),
    with a stamp over all the kernel's ``sources``."""

    def __init__(self, inner, stamp: str, cache_path: str | None = None, tried: tuple[str, ...] = ()):
        self._inner, self._stamp, self._cache_path = inner, stamp, cache_path
        self._tried = tried  # installed, and none of these folders could be written
        self._py_file = getattr(inner, "_py_file", None)  # numba's warnings name the kernel's file

    @classmethod
    def from_function(cls, py_func, py_file):
        if not ours(getattr(py_func, "__module__", None) or ""):
            return None
        stamp = digest(sources(py_func))
        roots = () if config.CACHE_DIR or _USER_WIDE is None else installed_cache_dirs()
        paths = [os.path.join(root, cls.get_suitable_cache_subpath(py_file)) for root in roots]
        for root, path in zip(roots, paths):  # installed: never beside the kernels, whatever numba would choose
            self = cls(_USER_WIDE(py_func, py_file), stamp, path)
            try:
                if _own_folder(root):
                    self.ensure_cache_path()
                    return self
            except OSError:  # a folder that cannot be written: the next
                continue
        if paths:  # none can be written: load from the first, and say so when a kernel must be saved
            return cls(_USER_WIDE(py_func, py_file), stamp, paths[0], tuple(roots))
        for other in _IMPL._locator_classes:  # a checkout or NUMBA_CACHE_DIR
            inner = None if other is cls else other.from_function(py_func, py_file)
            if inner is not None:
                return cls(inner, stamp)
        return None

    def get_cache_path(self):
        return self._cache_path or self._inner.get_cache_path()

    def ensure_cache_path(self):
        if self._tried:  # numba is about to save a kernel it compiled (never into site-packages)
            raise OSError(
                errno.EACCES,
                "numba cannot cache the compiled core: no folder of the user's own among "
                f"{', '.join(self._tried)} can be written; set NUMBA_CACHE_DIR to one",
            )
        super().ensure_cache_path()

    def get_source_stamp(self):
        return self._inner.get_source_stamp(), self._stamp

    def get_disambiguator(self):
        return self._inner.get_disambiguator()


def register() -> None:
    """Put ``KernelSourcesLocator`` first among numba's locators (once), before any kernel is
    defined: ``_kernels.py``, which every kernel module imports first, calls it at its top."""
    if _IMPL is not None and _LOCATOR is not None and KernelSourcesLocator not in _IMPL._locator_classes:
        _IMPL._locator_classes.insert(0, KernelSourcesLocator)
