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
import re
import tempfile

from ansible.module_utils.common.text.converters import to_bytes, to_text


# a report's time (model/cluster_identity.py generated_at)
STAMP = re.compile(r'[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z')


def same_but_time(before, after, stamp):
    """Whether `after` is `before` with the report time `stamp` in place of the one `before` has (and nothing else changed)."""
    if before is None or not stamp or stamp not in after:
        return False
    return any(old != stamp and before.replace(old, stamp) == after for old in sorted(set(STAMP.findall(before))))


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


def read_template(module, what):
    """The text of the module's html_template option (a Jinja2 page users can give), or None for the default page;
    a file that cannot be read ends the module with a message naming the option, the path and the fix."""
    path = module.params.get('html_template')
    if not path:
        return None
    text = read_text(path)
    if text is None:
        module.fail_json(msg='%s: html_template=%s cannot be read. Fix: give the path of a Jinja2 template file, or leave '
                             'html_template out for the default page. Nothing was written.' % (what, path))
    return text


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


def dest_problem(dest):
    """Why the reports cannot go to `dest` (checked in check mode too), or None."""
    if os.path.exists(dest):
        return None if os.path.isdir(dest) else 'it exists and is not a directory'
    parent = os.path.dirname(os.path.abspath(dest))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return '%s is not a directory' % parent
    if not os.access(parent, os.W_OK | os.X_OK):
        return 'it does not exist and %s is not writable, so it cannot be created' % parent
    return None


def _fail_dest(module, dest, problem):
    module.fail_json(msg='dest=%s cannot hold the reports: %s. Fix: give a writable directory (egressip_report_dir, or the '
                         'role\'s *_report_dir / support_report_dir variable); it is created when missing.' % (dest, problem))


def write_reports(module, dest, name, contents, mode, stamp=None):
    """(paths, changed, diffs): the files for [(suffix, text)] in dest; diffs for the text files that change.

    With `stamp` (the report's ``generated_at``), files that differ from the new texts only by their own report time are
    kept as they are, with that time: a rerun that finds the same writes nothing and changes nothing.
    A dest that cannot hold them ends the module with a message naming dest and the fix, never a bare errno."""
    problem = dest_problem(dest)
    if problem:
        _fail_dest(module, dest, problem)
    try:
        return _write_reports(module, dest, name, contents, mode, stamp)
    except (IOError, OSError) as exc:
        _fail_dest(module, dest, '%s (%s)' % (exc.strerror or exc, getattr(exc, 'filename', None) or dest))


def _write_reports(module, dest, name, contents, mode, stamp=None):
    paths, changed, diffs = [], False, []
    befores = [read_text(os.path.join(dest, name + suffix)) for suffix, _text in contents]
    keep = bool(stamp) and all(before == text or same_but_time(before, text, stamp) for before, (_suffix, text) in zip(befores, contents))
    for (suffix, text), before in zip(contents, befores):
        path = os.path.join(dest, name + suffix)
        paths.append(path)
        if before == text or keep:
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
