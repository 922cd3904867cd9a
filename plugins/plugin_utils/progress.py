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
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import time

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash
from ansible.utils.display import Display

display = Display()

SHOWN_NAMES = 6  # objects named in one progress line; the rest are counted


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
    if len(names) > SHOWN_NAMES:
        return ', '.join(names[:SHOWN_NAMES]) + ' and %d more' % (len(names) - SHOWN_NAMES)
    return ', '.join(names) or 'the cluster'


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


class WaitingAction(ActionBase):
    """Base of the action plugins of the waiting modules; subclasses name the module's waits."""

    TIMEOUTS = {}    # finding id meaning "not yet" -> the option whose time it uses
    DEFAULTS = {}    # those options' module defaults (seconds), kept equal to the module's by a unit test
    WRITTEN = ()     # result keys listing what a try wrote (created, updated, deleted ...)
    DEFAULT_INTERVAL = 10
    clock = staticmethod(time.monotonic)
    _supports_async = True   # an async task (the lock's background renewal) runs the module once, as Ansible's own would

    def run(self, tmp=None, task_vars=None):
        result = super(WaitingAction, self).run(tmp, task_vars)
        wrap_async = self._task.async_val and not self._connection.has_native_async
        try:
            result = merge_hash(result, self._run_tries(task_vars, wrap_async))
        finally:
            if not wrap_async:
                self._remove_tmp_path(self._connection._shell.tmpdir)   # as Ansible's own action for modules does
        return result

    def _once(self, args, task_vars, wrap_async=False):
        return self._execute_module(module_name=self._task.resolved_action, module_args=args, task_vars=task_vars,
                                    wrap_async=wrap_async)

    def _run_tries(self, task_vars, wrap_async):
        args = dict(self._task.args)
        interval = args.get('progress_interval', self.DEFAULT_INTERVAL)
        try:
            interval = int(interval)
        except (TypeError, ValueError):
            interval = None
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
