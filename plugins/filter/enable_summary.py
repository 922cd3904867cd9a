# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: enable_summary
short_description: One summary of what an enable run changed, step by step
version_added: 0.1.0
author: ocp.egressip maintainers (placeholder)
description:
  - Takes the results the enable roles registered (port group, VM NICs, Machine API, node addresses, forwarding,
    labels, EgressIP objects, the in-cluster guard) and returns one line per step that changed something, with counts and the first names
    (the rest counted), or a single line saying that nothing changed.
  - A result that is missing or skipped (a step that did not run) is left out.
options:
  _input:
    description:
      - A mapping with any of the keys C(portgroup), C(nics), C(machine_api), C(addresses), C(forwarding), C(labels),
        C(egressips), C(guard) (M(ocp.egressip.egressip_guard_deploy), the in-cluster guard's objects by action), each the
        registered result of that step's module.
    type: dict
    required: true
  check_mode:
    description: Word the lines as what a real run would change.
    type: bool
    default: false
  names:
    description: How many names to show per line before counting the rest.
    type: int
    default: 5
'''

EXAMPLES = r'''
- name: Summary of what this run changed
  ansible.builtin.debug:
    msg: "{{ {'portgroup': vsphere_network_portgroup_result, 'nics': vsphere_network_nic_result} | ocp.egressip.enable_summary }}"
'''

RETURN = r'''
_value:
  description: The summary lines.
  type: list
  elements: str
'''


def _names(items, limit):
    items = [str(item) for item in items]
    if len(items) <= limit:
        return ', '.join(items)
    return '%s and %d more' % (', '.join(items[:limit]), len(items) - limit)


def _ran(result):
    return isinstance(result, dict) and not result.get('skipped') and not result.get('failed')


def _by_action(entries, key='name'):
    actions = {}
    for entry in entries or []:
        action = entry.get('action')
        if action and action != 'none':
            actions.setdefault(action, []).append(entry.get(key) or entry.get('name'))
    return actions


def _action_line(what, actions, limit):
    parts = ['%s %d (%s)' % (action, len(names), _names(names, limit)) for action, names in sorted(actions.items())]
    return '%s: %s' % (what, '; '.join(parts)) if parts else None


def _portgroup(result, limit):
    """One line per port group that changed: with failure domains, each domain's (named after the domain)."""
    domains = result.get('domains') or [{'portgroup': result.get('portgroup')}]
    lines = [_one_portgroup(domain.get('portgroup') or {}, domain.get('name'), limit) for domain in domains]
    return '; '.join(line for line in lines if line) or None


def _one_portgroup(portgroup, domain, limit):
    what = 'port group %s' % portgroup.get('name') + (' (failure domain %s)' % domain if domain else '')
    hosts = [item for item in portgroup.get('hosts') or [] if item.get('action') not in (None, 'none')]
    if hosts:
        return _action_line(what, _by_action(hosts, 'host'), limit)
    if portgroup.get('action') not in (None, 'none'):
        return '%s: %s' % (what, portgroup.get('action'))
    return None


def _forwarding(result, limit):
    changed = [item.get('node') for item in result.get('interfaces') or [] if item.get('forwarding_before') != item.get('forwarding_after')]
    if changed:
        return 'IP forwarding: on for %d node(s) (%s)' % (len(changed), _names(changed, limit))
    return 'IP forwarding: Tuned %s updated' % result.get('tuned') if result.get('changed') else None


def _addresses(result, limit):
    parts = []
    for key, word in (('created', 'created'), ('updated', 'updated'), ('deleted', 'deleted')):
        if result.get(key):
            parts.append('%s %d (%s)' % (word, len(result[key]), _names(result[key], limit)))
    return 'NMState policies: %s' % '; '.join(parts) if parts else None


def _labels(result, limit):
    parts = []
    for key, word in (('added', 'label added on'), ('removed', 'label removed from')):
        if result.get(key):
            parts.append('%s %d node(s) (%s)' % (word, len(result[key]), _names(result[key], limit)))
    return 'egress-assignable: %s' % '; '.join(parts) if parts else None


STEPS = (
    ('portgroup', _portgroup),
    ('nics', lambda result, limit: _action_line('VM NICs', _by_action(result.get('vms')), limit)),
    ('machine_api', lambda result, limit: _action_line('MachineSets', _by_action(result.get('machinesets')), limit)),
    ('addresses', _addresses),
    ('forwarding', _forwarding),
    ('labels', _labels),
    ('egressips', lambda result, limit: _action_line('EgressIP objects', _by_action(result.get('egressips')), limit)),
    ('guard', lambda result, limit: _action_line('in-cluster guard', _by_action(result.get('objects'), 'id'), limit)),
)


def enable_summary(results, check_mode=False, names=5):
    lines = []
    for key, describe in STEPS:
        result = (results or {}).get(key)
        if _ran(result):
            line = describe(result, names)
            if line:
                lines.append(line)
    if not lines:
        return ['Nothing %s: every step was already as the variables ask.' % ('would change' if check_mode else 'changed')]
    head = 'A real run would change:' if check_mode else 'This run changed:'
    return [head] + ['- ' + line for line in lines]


class FilterModule(object):
    def filters(self):
        return {'enable_summary': enable_summary}
