# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ocp.egressip.node_nic_address: the module in tries, with a progress line between two (plugin_utils/progress)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.plugin_utils.progress import WaitingAction


class ActionModule(WaitingAction):
    TIMEOUTS = {'node_policy_timeout': 'wait_timeout', 'node_nic_not_in_state': 'state_wait_timeout'}
    DEFAULTS = {'wait_timeout': 300, 'state_wait_timeout': 90}
    WRITTEN = ('created', 'updated', 'deleted')
