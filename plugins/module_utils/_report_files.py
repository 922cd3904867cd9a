# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing rendered reports to files: compare first, write atomically, honour check mode, report a diff.

``write_reports(module, dest, name, contents, mode)`` writes ``<dest>/<name><suffix>`` for each
``(suffix, text)`` in ``contents`` whose text differs from the file's, creating ``dest`` when missing,
and sets the file mode. Nothing is written in check mode. Private module_util: no API promise outside
this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile

from ansible.module_utils.common.text.converters import to_bytes, to_text


def check_name(name):
    """An error message when `name` is not a plain file name (the directory is dest), else None."""
    if not name or name != os.path.basename(name) or name in ('.', '..'):
        return 'name=%r must be a plain file name without a directory (the directory is dest).' % (name,)
    return None


def read_text(path):
    """The file's text, or None when it does not exist."""
    if not os.path.exists(path):
        return None
    with open(path, 'rb') as handle:
        return to_text(handle.read(), errors='surrogate_or_strict')


def write_atomic(module, path, content):
    """Write through a temporary file in the same directory, then rename (no half-written report)."""
    directory = os.path.dirname(path) or '.'
    handle, temporary = tempfile.mkstemp(dir=directory, prefix='.%s.' % os.path.basename(path))
    try:
        with os.fdopen(handle, 'wb') as stream:
            stream.write(to_bytes(content, errors='surrogate_or_strict'))
        module.atomic_move(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def write_reports(module, dest, name, contents, mode):
    """(paths, changed, diffs): the files for [(suffix, text)] in dest; diffs for the text files that change."""
    paths, changed, diffs = [], False, []
    for suffix, text in contents:
        path = os.path.join(dest, name + suffix)
        paths.append(path)
        before = read_text(path)
        if before == text:
            continue
        changed = True
        diffs.append({'before': before or '', 'after': text, 'before_header': path, 'after_header': path})
        if not module.check_mode:
            if not os.path.isdir(dest):
                os.makedirs(dest)
            write_atomic(module, path, text)
    for path in paths:
        if os.path.exists(path):
            changed = module.set_mode_if_different(path, mode, changed)
    return paths, changed, diffs
