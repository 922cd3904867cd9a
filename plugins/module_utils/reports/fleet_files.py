# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files of the fleet report: one record per cluster and run, and the report rebuilt from the records of the run.

Layout under ``dest``::

    .fleet/lock                      the lock every writer holds (fcntl.flock, exclusive) while it rebuilds the report
    .fleet/<run_id>/<cluster>.json   the row of one cluster in one run (fleet.row), written atomically
    fleet_report.json / .md / .html  the report of the run, from all records of that run

``update(module, ...)`` stores the cluster's row, then under the lock removes the record directories of other runs (but
those the caller says still run) and rewrites the report files whose text changed (texts that differ only in their time
stamps are kept as they are, so the same input twice changes nothing). In check mode nothing is written, created or
removed: the report is built from the records on disk and the new row, and compared. Private module_util: no API promise
outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil

from ansible_collections.ocp.egressip.plugins.module_utils.reports import files as _files
from ansible_collections.ocp.egressip.plugins.module_utils.reports import fleet as _fleet
from ansible_collections.ocp.egressip.plugins.module_utils.reports import fleet_html as _fleet_html
from ansible_collections.ocp.egressip.plugins.module_utils.reports import report as _report

RECORDS = '.fleet'
LOCK = 'lock'
NAME = 'fleet_report'
RUN_ID = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$')
SUFFIXES = (('json', '.json'), ('markdown', '.md'), ('html', '.html'))


def run_id_problem(run_id):
    if not RUN_ID.match(str(run_id or '')):
        return ('run_id=%r is not a plain name. Fix: give letters, digits, ".", "_" or "-" (at most 128, not starting with "." or '
                '"-"), one value that every host of the ansible-playbook run shares (the role derives one; in AAP awx_job_id).' % (run_id,))
    return None


def cluster_problem(cluster):
    if not cluster or '/' in cluster or '\0' in cluster or cluster.startswith('.') or len(cluster) > 200:
        return ('cluster=%r cannot name a record file. Fix: pass the inventory host name (inventory_hostname) - not empty, without '
                '"/", not starting with ".".' % (cluster,))
    return None


def _makedirs(path):
    """Create the directory; another fork creating it at the same moment is fine."""
    try:
        os.makedirs(path)
    except OSError as exc:
        if exc.errno != errno.EEXIST or not os.path.isdir(path):
            raise


def _read_json(path):
    try:
        text = _files.read_text(path)
        return json.loads(text) if text is not None else None
    except (IOError, OSError, ValueError):
        return None


def read_rows(dest, run_id):
    """{cluster: row} of the records of the run on disk (a file that cannot be read is skipped)."""
    directory = os.path.join(dest, RECORDS, run_id)
    rows = {}
    try:
        names = sorted(os.listdir(directory))
    except (IOError, OSError):  # no record yet, or another run removed them (check mode reads without the lock)
        return rows
    for name in names:
        if name.endswith('.json') and not name.startswith('.'):
            value = _read_json(os.path.join(directory, name))
            if isinstance(value, dict):
                rows[name[:-len('.json')]] = _fleet.normal_row(value)
    return rows


def _same_but_times(before, after):
    """Whether two texts are the same once every report time stamp in them is taken out."""
    return before is not None and _files.STAMP.sub('T', before) == _files.STAMP.sub('T', after)


def contents(report, formats, template=None):
    """[(suffix, text)] of the report in the formats asked for, JSON first."""
    texts = {'json': lambda: _report.render_json(report), 'markdown': lambda: _fleet.render_markdown(report),
             'html': lambda: _fleet_html.render_html(report, template=template)}
    return [(suffix, texts[fmt]()) for fmt, suffix in SUFFIXES if fmt in formats]


@contextlib.contextmanager
def locked(dest):
    """The exclusive lock of dest's fleet records (blocks until the writer before has finished)."""
    directory = os.path.join(dest, RECORDS)
    _makedirs(directory)
    with open(os.path.join(directory, LOCK), 'a') as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def old_runs(dest, run_id):
    """The record directories of other runs."""
    directory = os.path.join(dest, RECORDS)
    try:
        names = os.listdir(directory)
    except (IOError, OSError):
        return []
    return sorted(name for name in names if name != run_id and os.path.isdir(os.path.join(directory, name)))


def store_row(module, dest, run_id, cluster, row, stored):
    """Write the cluster's record unless the one stored differs only in its time; True when written (or would be)."""
    if stored is not None and dict(stored, time=row['time']) == row:
        return False
    if not module.check_mode:
        directory = os.path.join(dest, RECORDS, run_id)
        _makedirs(directory)
        _files.write_atomic(module, os.path.join(directory, cluster + '.json'), _report.render_json(row))
    return True


def unchanged(dest, report, texts, befores, formats, template=None):
    """Whether the report files can stay: they differ from `texts` only in their times, or they are the rendering of a
    fleet_report.json that already says what `report` says of every cluster reported so far (fleet.covers)."""
    if any(before is None for before in befores):
        return False
    if all(_same_but_times(before, text) for before, (_suffix, text) in zip(befores, texts)):
        return True
    if 'json' not in formats:
        return False
    previous = _read_json(os.path.join(dest, NAME + '.json'))
    if not _fleet.covers(previous, report):
        return False
    again = contents(_fleet.rebuild(previous), formats, template)
    return all(_same_but_times(before, text) for before, (_suffix, text) in zip(befores, again))


def write_contents(module, dest, report, texts, formats, template, mode):
    """(paths, changed, diffs) for [(suffix, text)]; nothing is written when the files can stay (unchanged)."""
    paths = [os.path.join(dest, NAME + suffix) for suffix, _text in texts]
    befores = [_files.read_text(path) for path in paths]
    keep = unchanged(dest, report, texts, befores, formats, template)
    changed, diffs = False, []
    for path, before, (_suffix, text) in zip(paths, befores, texts):
        if keep or before == text:
            continue
        changed = True
        diffs.append({'before': before or '', 'after': text, 'before_header': path, 'after_header': path})
        if not module.check_mode:
            _files.write_atomic(module, path, text)
    for path in paths:
        if os.path.exists(path):
            changed = module.set_mode_if_different(path, mode, changed)
    return paths, changed, diffs


def update(module, dest, run_id, cluster, row, clusters=None, formats=('json', 'markdown', 'html'), template=None, mode='0644',
           running=None):
    """Store the cluster's row of this run and rebuild the report; the module's result (without `changed` of the records).

    `running(run_id)` says whether another run still records into dest: its records are kept (kept_runs), not removed."""
    problem = _files.dest_problem(dest)
    if problem:
        module.fail_json(msg='dest=%s cannot hold the fleet report: %s. Fix: give a writable directory (fleet_report_dir, else '
                             'egressip_report_dir); it is created when missing.' % (dest, problem))
    try:
        if module.check_mode:
            return _update(module, dest, run_id, cluster, row, clusters, formats, template, mode, running)
        _makedirs(dest)
        with locked(dest):
            return _update(module, dest, run_id, cluster, row, clusters, formats, template, mode, running)
    except (IOError, OSError) as exc:
        if getattr(exc, 'errno', None) not in (errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EROFS, errno.ENOENT, errno.ENOTDIR):
            raise
        module.fail_json(msg='dest=%s cannot hold the fleet report: %s (%s). Fix: give a writable directory (fleet_report_dir, else '
                             'egressip_report_dir).' % (dest, exc.strerror or exc, getattr(exc, 'filename', None) or dest))


def _update(module, dest, run_id, cluster, row, clusters, formats, template, mode, running):
    rows = read_rows(dest, run_id)
    record_written = store_row(module, dest, run_id, cluster, row, rows.get(cluster))
    if not record_written:
        row = rows[cluster]
    rows[cluster] = row
    others = old_runs(dest, run_id)
    kept = [name for name in others if running and running(name)]
    removed = [name for name in others if name not in kept]
    if not module.check_mode:
        for name in removed:
            shutil.rmtree(os.path.join(dest, RECORDS, name), ignore_errors=True)
    report = _fleet.build(rows.values(), clusters)
    paths, changed, diffs = write_contents(module, dest, report, contents(report, formats, template), formats, template, mode)
    return {'changed': changed, 'report': report, 'row': row, 'paths': paths, 'diffs': diffs, 'removed_runs': removed,
            'kept_runs': kept, 'record': os.path.join(dest, RECORDS, run_id, cluster + '.json'), 'record_written': record_written}
