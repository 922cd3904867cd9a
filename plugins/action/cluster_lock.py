# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ocp.egressip.cluster_lock: waiting for another run's lock in tries, with a progress line between two
(plugin_utils/progress)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.plugin_utils.progress import WaitingAction


class ActionModule(WaitingAction):
    TIMEOUTS = {'cluster_lock_held': 'wait_timeout'}
    DEFAULTS = {'wait_timeout': 120}

    def merge(self, tries):
        """waited_seconds is the wait of all tries."""
        result = super(ActionModule, self).merge(tries)
        if any('waited_seconds' in item for item in tries):
            result['waited_seconds'] = round(sum(item.get('waited_seconds') or 0 for item in tries), 1)
        return result
