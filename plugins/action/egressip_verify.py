# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ocp.egressip.egressip_verify: the module once, with progress lines from its notes (plugin_utils/progress).

Given ``precomputed`` (the verification a preflight of this run made on its read of a converged cluster) made with this
task's options in this mode, the result is that verification and the module does not run: the cluster was read a moment
ago and nothing was written since (enable's converged record). The module decides the same way when it runs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.ocp.egressip.plugins.module_utils.checks.verify_options import reusable
from ansible_collections.ocp.egressip.plugins.plugin_utils.progress import NotingAction


class ActionModule(NotingAction):
    """NotingAction, unless the task hands over a verification it can return as it is."""

    def _run_module(self, task_vars, wrap_async):
        args = self._task.args
        output = None if wrap_async else reusable(args.get('precomputed'), args, self._task.check_mode)
        # a failure (fail_on_error and an error finding) is the module's to report, with its message
        if output is None or (boolean(args.get('fail_on_error', True), strict=False) and not output['summary']['ok']):
            return super(ActionModule, self)._run_module(task_vars, wrap_async)
        return dict(output, changed=False, from_preflight=True)
