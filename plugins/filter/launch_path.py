# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: launch_path
short_description: Make a relative path absolute from the directory ansible-playbook was started in
version_added: 0.1.0
author: ocp.egressip maintainers (placeholder)
description:
  - Modules run in the playbook's directory, which for C(ansible-playbook ocp.egressip.<name>) is inside the installed
    collection. The roles pass report and snapshot paths through this filter so that a relative path such as C(reports)
    lands where the user started ansible-playbook (the controller's working directory), as users expect.
  - An absolute path and an empty string are returned unchanged.
  - With O(cluster), the path of that cluster of a fleet, C(<path>/<cluster>), so that the reports of the clusters of one run
    never collide (docs/fleet.md); the one-cluster run (C(localhost)) keeps the path as it is.
options:
  _input:
    description: The path.
    type: path
    required: true
  cluster:
    description:
      - The inventory host (cluster) the path is for; empty or C(localhost), the path is not changed. An empty path stays empty.
    type: str
    default: ''
'''

EXAMPLES = r'''
- name: Reports next to where the playbook was started
  ansible.builtin.debug:
    msg: "{{ 'reports' | ocp.egressip.launch_path }}"

- name: This cluster's reports (reports/cluster-a for the inventory host cluster-a)
  ansible.builtin.debug:
    msg: "{{ 'reports' | ocp.egressip.launch_path(cluster=inventory_hostname) }}"
'''

RETURN = r'''
_value:
  description: The absolute path, or the input when it was absolute or empty.
  type: path
'''

import os


def launch_path(path, cluster=''):
    if not path:
        return path
    if cluster and str(cluster) != 'localhost':
        path = os.path.join(str(path), str(cluster))
    if os.path.isabs(str(path)):
        return path
    # Filters run in the controller process, whose working directory is where ansible-playbook started.
    return os.path.join(os.getcwd(), str(path))


class FilterModule(object):
    def filters(self):
        return {'launch_path': launch_path}
