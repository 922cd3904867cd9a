# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Progress lines of the modules whose waits take minutes on a real cluster (their action plugins run them in tries)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  progress_interval:
    description:
      - While the module waits, the controller prints a line at least every this many seconds naming what is still
        awaited (the task name, C(still waiting after 20 s), the time limit and the awaited
        objects, such as C(NodeNetworkConfigurationPolicy egressip-worker-0)).
      - A module cannot print while it runs, so its action plugin runs it in tries that wait at most this long each and
        then runs it again with the time left; the module is idempotent, so a later try does only what is still to do.
        The result is the last try's, with C(changed) and the diff of all tries, and C(tries).
      - C(0) or less waits in one try, without progress lines. Not used in check mode (nothing is waited for).
    type: int
    default: 10
'''
