# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ocp.egressip.egressip: the module in tries, with a progress line between two (plugin_utils/progress)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.ocp.egressip.plugins.plugin_utils.progress import WaitingAction


class ActionModule(WaitingAction):
    TIMEOUTS = {'egressip_unassigned': 'wait_timeout'}
    DEFAULTS = {'wait_timeout': 120}

    def merge(self, tries):
        """The last try's report, each object with the action of the try that wrote it (a later try finds it in place)."""
        result = super(ActionModule, self).merge(tries)
        if 'egressips' not in result:
            return result
        report = copy.deepcopy(result['egressips'] or [])
        listed = dict((entry.get('name'), entry) for entry in report)
        for earlier in tries[:-1]:
            for entry in earlier.get('egressips') or []:
                if entry.get('action', 'none') == 'none':
                    continue
                if entry.get('name') not in listed:       # deleted by an earlier try: the later ones do not list it
                    listed[entry.get('name')] = copy.deepcopy(entry)
                    report.append(listed[entry.get('name')])
                elif listed[entry.get('name')].get('action', 'none') == 'none':
                    listed[entry.get('name')]['action'] = entry['action']
        result['egressips'] = report
        return result
