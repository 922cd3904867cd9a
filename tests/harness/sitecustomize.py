# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test harness only: a compile cache for Python source imported from zip files.

Ansible runs a module as an AnsiballZ payload: a zip of the module and its module_utils that Python imports with
``zipimport``, which compiles every file from source on every run (it never writes bytecode). That compile is about a
third of a module run's CPU, and the test suite runs thousands of modules. The tests put this directory on PYTHONPATH
(tests/conftest.py) with OCP_EGRESSIP_TEST_ZIP_PYCACHE naming a cache directory; Python then imports this file at
start-up and zipimport keeps the code objects it compiles there, keyed by the interpreter's bytecode magic, the
file's path inside the payload and its exact source. A changed source compiles again; the code objects carry the path
of the run that imports them, so tracebacks read as without the cache. Nothing else changes: the module, its payload
and what it executes are Ansible's own. Benchmarks and the demo do not use it.
"""

import hashlib
import importlib.util
import marshal
import os
import zipimport

CACHE = os.environ.get('OCP_EGRESSIP_TEST_ZIP_PYCACHE')
ORIGINAL = getattr(zipimport, '_compile_source', None)
PAYLOAD_ROOTS = (os.sep + 'ansible_collections' + os.sep, os.sep + 'ansible' + os.sep)


def renamed(code, filename):
    """The code object (and every one nested in it) with co_filename set to filename."""
    consts = tuple(renamed(item, filename) if hasattr(item, 'co_filename') else item for item in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def cache_key(pathname, source):
    """Magic number, the path from the payload's package root (the run's tmp dir differs) and the source."""
    starts = [pathname.find(root) for root in PAYLOAD_ROOTS if root in pathname]
    inner = pathname[min(starts):] if starts else pathname
    return hashlib.sha256(importlib.util.MAGIC_NUMBER + inner.encode('utf-8', 'surrogateescape') + b'\0'
                          + source).hexdigest()


def compile_source(pathname, source):
    """zipimport's _compile_source, served from CACHE when the same source was compiled before."""
    path = os.path.join(CACHE, cache_key(pathname, source))
    try:
        with open(path, 'rb') as handle:
            return renamed(marshal.load(handle), pathname)
    except (OSError, EOFError, ValueError, TypeError):
        pass
    code = ORIGINAL(pathname, source)
    try:
        os.makedirs(CACHE, exist_ok=True)
        temporary = '%s.%d.tmp' % (path, os.getpid())
        with open(temporary, 'wb') as handle:
            marshal.dump(code, handle)
        os.replace(temporary, path)   # atomic: parallel test workers never read half a file
    except OSError:
        pass
    return code


if CACHE and ORIGINAL is not None:
    zipimport._compile_source = compile_source  # pylint: disable=protected-access

if os.environ.get('OCP_EGRESSIP_TEST_ANSIBALLZ_CACHE'):
    # ansiballz_cache.py: the module_utils of each module's payload, kept across ansible-playbook runs
    import ansiballz_cache  # pylint: disable=import-error
    ansiballz_cache.activate()
