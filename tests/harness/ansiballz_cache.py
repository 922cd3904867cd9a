# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test harness only: the module_utils an AnsiballZ payload carries, kept across ansible-playbook runs.

To build a module's payload, Ansible parses the module and every module_utils file it imports, transitively
(``module_common.recursive_finder``), and writes their sources into the payload's zip. It keeps the result only for the
run (a cache in that run's local tmp dir), so every ansible-playbook run parses the same sources again: 0.3 to 0.9 s of
CPU per module a run uses. On the small twin the cache takes a first ``enable`` from 17.4 s of CPU to 13.9 s. The playbook
tests run ansible-playbook hundreds of times.

With OCP_EGRESSIP_TEST_ANSIBALLZ_CACHE naming a directory (tests/conftest.py sets it; sitecustomize.py imports this
file), the files ``recursive_finder`` wrote into a payload and the metadata it returned are kept there and written into
the next payload of the same module, instead of parsing again. The key holds the Python and ansible-core versions, the
module's name and exact source, the payload extensions, and a fingerprint (path, size, modification time) of every file
under every module_utils directory Ansible searches (ansible-core's own, the collections' and the playbook-adjacent
ones): a changed module_utils file builds anew. The payload is what Ansible builds, file for file and byte for byte,
except the zip entries' time stamps. Benchmarks and the demo do not use it.
"""

import hashlib
import importlib.abc
import importlib.util
import os
import pickle
import sys

CACHE = os.environ.get('OCP_EGRESSIP_TEST_ANSIBALLZ_CACHE')
TARGET = 'ansible.executor.module_common'
KEEP = 400   # entries kept: the oldest go first (each code change makes new ones)


class _Recording(object):
    """The payload's zip as recursive_finder sees it: writes go through and are recorded."""

    def __init__(self, archive):
        self.archive = archive
        self.files = []

    @property
    def compression(self):
        return self.archive.compression

    def writestr(self, zinfo, data, *args, **kwargs):
        self.files.append((zinfo.filename, data.encode('utf-8') if isinstance(data, str) else bytes(data)))
        return self.archive.writestr(zinfo, data, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.archive, name)


def _module_utils_dirs(module_common):
    import ansible.module_utils  # pylint: disable=import-outside-toplevel
    from ansible import constants  # pylint: disable=import-outside-toplevel
    dirs = [os.path.dirname(ansible.module_utils.__file__)]
    dirs += list(module_common.module_utils_loader._get_paths(subdirs=False))  # pylint: disable=protected-access
    for root in constants.COLLECTIONS_PATHS or []:
        base = os.path.join(root, 'ansible_collections')
        for namespace in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            for name in sorted(os.listdir(os.path.join(base, namespace))) if os.path.isdir(os.path.join(base, namespace)) else []:
                dirs.append(os.path.join(base, namespace, name, 'plugins', 'module_utils'))
    return [path for path in dirs if os.path.isdir(path)]


def fingerprint(dirs):
    """A digest of every file's path, size and modification time under dirs."""
    digest = hashlib.sha256()
    for top in dirs:
        for folder, subfolders, files in os.walk(top, followlinks=True):
            subfolders[:] = sorted(name for name in subfolders if name != '__pycache__')
            for name in sorted(files):
                path = os.path.join(folder, name)
                stat = os.stat(path)
                digest.update(('%s\0%d\0%d\0' % (path, stat.st_size, stat.st_mtime_ns)).encode('utf-8', 'surrogateescape'))
    return digest.hexdigest()


def _key(module_common, name, module_fqn, module_data, extension_manager):
    import ansible  # pylint: disable=import-outside-toplevel
    digest = hashlib.sha256()
    for part in (importlib.util.MAGIC_NUMBER, ansible.__version__, name, module_fqn, bytes(module_data),
                 '~'.join(getattr(extension_manager, 'extension_names', None) or ()),
                 repr(getattr(extension_manager, 'debugger_enabled', False)), fingerprint(_module_utils_dirs(module_common))):
        digest.update(part if isinstance(part, bytes) else part.encode('utf-8', 'surrogateescape'))
        digest.update(b'\0')
    return digest.hexdigest()


def _load(path):
    try:
        with open(path, 'rb') as handle:
            return pickle.load(handle)   # nosec: a file this harness wrote under the test run's own cache directory
    except (OSError, EOFError, ValueError, TypeError, AttributeError, ImportError, pickle.UnpicklingError):
        return None


def _store(path, entry):
    try:
        os.makedirs(CACHE, exist_ok=True)
        temporary = '%s.%d.tmp' % (path, os.getpid())
        with open(temporary, 'wb') as handle:
            pickle.dump(entry, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)   # atomic: parallel test workers never read half a file
        names = [os.path.join(CACHE, name) for name in os.listdir(CACHE) if not name.endswith('.tmp')]
        for old in sorted(names, key=os.path.getmtime)[:max(0, len(names) - KEEP)]:
            os.remove(old)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        pass


def install(module_common):
    """Wrap module_common.recursive_finder with the cache."""
    original = module_common.recursive_finder

    def recursive_finder(name, module_fqn, module_data, zf, *args, **kwargs):
        # (name, module_fqn, module_data, zf, date_time, extension_manager): ansible-core 2.16 to 2.18 have no extension_manager
        date_time = args[0] if args else kwargs.get('date_time')
        extension_manager = args[1] if len(args) > 1 else kwargs.get('extension_manager')
        path = os.path.join(CACHE, _key(module_common, name, module_fqn, module_data, extension_manager))
        entry = _load(path)
        if entry is not None:
            metadata, files = entry
            for filename, data in files:
                zf.writestr(module_common._make_zinfo(filename, date_time, zf=zf), data)  # pylint: disable=protected-access
            return metadata
        recording = _Recording(zf)
        metadata = original(name, module_fqn, module_data, recording, *args, **kwargs)
        _store(path, (metadata, recording.files))
        return metadata

    recursive_finder.original = original
    module_common.recursive_finder = recursive_finder


class _Patcher(importlib.abc.MetaPathFinder):
    """Installs the cache once ansible.executor.module_common is imported (only ansible-playbook's processes import it)."""

    def find_spec(self, fullname, path, target=None):  # pylint: disable=unused-argument
        if fullname != TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            install(module)
        spec.loader.exec_module = exec_module
        return spec


def activate():
    if CACHE and TARGET not in sys.modules and not any(isinstance(finder, _Patcher) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Patcher())
