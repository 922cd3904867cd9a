# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Progress lines for the modules that wait minutes for the cluster (controller side, for their action plugins).

A module cannot print while it runs: Ansible shows its result when it ends. So the action plugin of a waiting module
runs the module in tries of at most ``progress_interval`` seconds of waiting. A try that ends only because its wait ran
out (every error finding is one of the module's "not yet" findings, ``TIMEOUTS``) is followed by a progress line naming
what is awaited and by the next try with the time left, until the module's own timeout is used up. The modules are
idempotent, so a later try writes nothing the first did not and only waits again. The task's result is the last
try's, with ``changed`` true if any try changed something, the first try's diff ``before`` and the lists of what was
written (``WRITTEN``) from every try. ``progress_interval: 0`` runs the module once, as a plain module.

A module whose wait cannot be split into tries (a drill step measures from its own trigger; vCenter tasks go on
after a try ends) has a ``NotingAction`` instead: the module runs once, in a thread of the action plugin, and notes
what it waits for in a file (module_utils/core/progress.py); every ``progress_interval`` seconds while it runs, the
plugin prints a line with the module's last note. That costs no second module run.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import abc
import math
import os
import tempfile
import threading
import time

from ansible import constants as C
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash
from ansible.utils.display import Display

from ansible_collections.ocp.egressip.plugins.module_utils.core.progress import shown

display = Display()


def awaited(findings):
    """The objects the "not yet" findings name: ``Kind name`` texts, de-duplicated, in the order found."""
    names = []
    for finding in findings:
        for item in finding.get('objects') or []:
            if not isinstance(item, dict):
                item = {'kind': None, 'name': item}   # some findings name an object as one text (Lease ns/name)
            text = ' '.join(str(part) for part in (item.get('kind'), item.get('name')) if part)
            if item.get('kind') != 'option' and text not in names:
                names.append(text)
    return shown(names) or 'the cluster'


def merge(tries, written):
    """The task result of a list of tries (oldest first): the last one, with what every try changed and wrote."""
    result = dict(tries[-1])
    result['changed'] = any(item.get('changed') for item in tries)
    diffs = [item['diff'] for item in tries if isinstance(item.get('diff'), dict)]
    if diffs:
        result['diff'] = {'before': diffs[0].get('before'), 'after': diffs[-1].get('after')}
    for key in written:
        names = []
        for item in tries:
            names.extend(name for name in item.get(key) or [] if name not in names)
        if key in result or names:
            result[key] = names
    result['tries'] = len(tries)
    return result


def interval_of(args, default):
    """The task's progress_interval as a whole number of seconds; None for a bad value (the module reports it)."""
    try:
        return int(args.get('progress_interval', default))
    except (TypeError, ValueError):
        return None


class ModuleAction(ActionBase):
    """What both progress actions share: the module of the task run as Ansible's own action for modules runs it."""

    DEFAULT_INTERVAL = 10
    clock = staticmethod(time.monotonic)
    _supports_async = True   # an async task (the lock's background renewal) runs the module once, as Ansible's own would

    def run(self, tmp=None, task_vars=None):
        result = super(ModuleAction, self).run(tmp, task_vars)
        wrap_async = self._task.async_val and not self._connection.has_native_async
        try:
            result = merge_hash(result, self._run_module(task_vars, wrap_async))
        finally:
            if not wrap_async:
                self._remove_tmp_path(self._connection._shell.tmpdir)   # as Ansible's own action for modules does
        return result

    @abc.abstractmethod
    def _run_module(self, task_vars, wrap_async):
        """The module's result: NotingAction runs it once, WaitingAction in tries."""

    def _once(self, args, task_vars, wrap_async=False):
        return self._execute_module(module_name=self._task.resolved_action, module_args=args, task_vars=task_vars,
                                    wrap_async=wrap_async)


class NotingAction(ModuleAction):
    """Base of the action plugins of the modules that note what they wait for: one run, lines from its notes."""

    POLL = 0.5   # seconds between two looks at the running module

    def _run_module(self, task_vars, wrap_async):
        args = dict(self._task.args)
        interval = interval_of(args, self.DEFAULT_INTERVAL)
        if interval is None or interval <= 0 or self._task.check_mode or self._task.async_val or 'progress_file' in args \
                or getattr(self._connection, 'transport', None) != 'local':
            return self._once(args, task_vars, wrap_async)   # the module writes its notes where this process can read them
        handle, path = tempfile.mkstemp(prefix='ocp-egressip-progress-', dir=C.DEFAULT_LOCAL_TMP)
        os.close(handle)
        args['progress_file'] = path
        outcome = {}

        def work():
            try:
                outcome['result'] = self._once(args, task_vars)
            except BaseException as error:  # pylint: disable=broad-except # raised again in the task's own thread
                outcome['error'] = error

        worker = threading.Thread(target=work, name='ocp.egressip module run')
        worker.daemon = True
        started = self.clock()
        worker.start()
        lines = 0
        try:
            while True:
                worker.join(self.POLL)
                if not worker.is_alive():
                    break
                waited = self.clock() - started
                if waited >= (lines + 1) * interval:
                    lines = int(waited // interval)
                    display.display(self.line(waited, read_note(path)))
        finally:
            for name in (path, path + '.partial'):
                if os.path.exists(name):
                    os.remove(name)
        if 'error' in outcome:
            raise outcome['error']
        return outcome['result']

    def line(self, waited, note):
        """The progress line; under no_log the module's note is left out."""
        if note and not self._task.no_log:
            return '%s: still waiting after %d s for %s' % (self._task.get_name(), int(waited), note)
        return '%s: still running after %d s' % (self._task.get_name(), int(waited))


def read_note(path):
    """The module's last note, '' before the first or when it cannot be read."""
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return ''


class WaitingAction(ModuleAction):
    """Base of the action plugins of the waiting modules run in tries; subclasses name the module's waits."""

    TIMEOUTS = {}    # finding id meaning "not yet" -> the option whose time it uses
    DEFAULTS = {}    # those options' module defaults (seconds), kept equal to the module's by a unit test
    WRITTEN = ()     # result keys listing what a try wrote (created, updated, deleted ...)

    def _run_module(self, task_vars, wrap_async):
        args = dict(self._task.args)
        interval = interval_of(args, self.DEFAULT_INTERVAL)
        if interval is None or interval <= 0 or self._task.check_mode or self._task.async_val or not self._waits(args):
            # one try: an async task (the lock's background renewal) or nothing to wait for; a bad progress_interval is
            # the module's to report
            return self._once(args, task_vars, wrap_async)
        totals = {}
        for option in set(self.TIMEOUTS.values()):
            try:
                totals[option] = int(args.get(option, self.DEFAULTS[option]))
            except (TypeError, ValueError):
                return self._once(args, task_vars)   # the module names the bad value
        started = self.clock()
        tries = []
        pending = None
        while True:
            waited = self.clock() - started
            attempt = dict(args)
            for option, total in totals.items():
                attempt[option] = max(0, int(math.ceil(min(interval, total - waited))))
            tries.append(self._once(attempt, task_vars))
            pending = self._not_yet(tries[-1])
            waited = self.clock() - started
            if pending is None or all(waited >= totals[self.TIMEOUTS[finding['id']]] for finding in pending):
                break
            display.display('%s: still waiting after %d s (of %s) for %s' % (
                self._task.get_name(), int(waited),
                ', '.join('%s %d s' % (option, totals[option]) for option in sorted(set(self.TIMEOUTS[f['id']] for f in pending))),
                awaited(pending)))
        result = self.merge(tries)
        if pending is not None:
            # out of time: the last try's message names its own, shorter wait
            result['msg'] = '%s (waited %d s in all, in tries of up to %d s: progress_interval)' % (
                result.get('msg', ''), int(self.clock() - started), interval)
        return result

    def merge(self, tries):
        """The task result of the tries (oldest first); a subclass adds what its module reports per try."""
        return merge(tries, self.WRITTEN)

    def _waits(self, args):
        try:
            return boolean(args.get('wait', True), strict=True)
        except TypeError:
            return False  # the module refuses the value itself

    def _not_yet(self, result):
        """The error findings of a failed try if each is a "not yet" finding (more waiting may end them); None otherwise."""
        if not result.get('failed'):
            return None
        errors = [item for item in result.get('findings') or [] if item.get('severity', 'error') == 'error']
        if not errors or any(item.get('id') not in self.TIMEOUTS for item in errors):
            return None
        return errors
