# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The migrate report: what its report files hold (``report_data``, JSON as is) and its Markdown for people
(``render_markdown``), from the result of checks/migrate.py's ``discover`` and, after an adoption, its check.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.ocp.egressip.plugins.module_utils.reports import report as _report
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, INFO, WARNING

CHECK_KEYS = ('ok', 'moved', 'unassigned', 'removed', 'dropped_addresses', 'nodes_gone')
REPORT_KEYS = ('cluster', 'generated_at', 'summary', 'variables', 'overrides', 'override_reasons', 'networks', 'nodes', 'egressips', 'portgroup', 'machinesets',
               'adoption_plan', 'findings')


def report_data(result):
    """What the migrate report files hold: the discovery and, after an adoption, its check (problems only).

    Deterministic but for ``generated_at``, and without what only one run sees (new assignments, labels added), so
    a rerun that changes nothing writes the same bytes once the time is kept (same_but_time).
    """
    data = dict((key, result.get(key)) for key in REPORT_KEYS)
    data['kind'] = 'migrate'
    comparison = result.get('comparison')
    if comparison is not None:
        data['adoption_check'] = dict((key, comparison[key]) for key in CHECK_KEYS)
    return data


def _node_table(rows):
    return _report.table(
        ['Node', 'VM (host)', 'NIC (interface)', 'Port group', 'Connected', 'Base address', 'Policies', 'Forwarding', 'Label', 'Egress IPs'],
        [(row['node'], '%s (%s)' % (row.get('vm') or '-', row.get('host') or '-'), '%s (%s)' % (row.get('mac') or '-', row.get('interface') or '-'),
          row.get('network'), row.get('connected'), ', '.join(item for item in (row.get('address'), row.get('ipv6_address')) if item) or None,
          row.get('policies'), row.get('forwarding'),
          row.get('egress_assignable'), row.get('egress_ips')) for row in rows])


def _ipv6_rows(ipv6):
    """The settings rows of the IPv6 family of a dual-stack network (none without it)."""
    if not ipv6:
        return []
    return [('IPv6 subnet', ipv6.get('cidr')), ('IPv6 gateway (metric)', '%s (%s)' % (ipv6.get('gateway'), ipv6.get('route_metric'))),
            ('IPv6 node address range', ipv6.get('node_address_range'))]


def render_markdown(result):
    """The migrate report for people."""
    data = report_data(result)
    summary = data['summary'] or {}
    verdict = 'complete' if summary.get('complete') else 'INCOMPLETE (see the errors)'
    sections = [['Discovery %s: %d egress node(s), %d EgressIP object(s); %d error(s), %d warning(s), %d info.' % (
        verdict, summary.get('nodes', 0), summary.get('egressip_objects', 0), summary.get(ERROR, 0), summary.get(WARNING, 0),
        summary.get(INFO, 0)), ''] + _report.identity_lines(data)]
    if data.get('adoption_check') is not None:
        check = data['adoption_check']
        lines = ['## Adoption check', '',
                 'No egress IP moved and no node address was dropped.' if check['ok'] else
                 'FAILED: %d moved, %d unassigned, %d removed egress IP(s); %d dropped address(es).' % (
                     len(check['moved']), len(check['unassigned']), len(check['removed']), len(check['dropped_addresses']))]
        sections.append(lines)
    variables = data.get('variables')
    if variables:
        network, portgroup = variables['egressip_network'], variables['egressip_vsphere']['portgroup']
        sections.append(['## Discovered settings', ''] + _report.table(['Setting', 'Value'], [
            ('vCenter', '%s / %s' % (variables['egressip_vsphere']['datacenter'], variables['egressip_vsphere']['cluster'])),
            ('Port group', '%s (%s %s, VLAN %s)' % (
                portgroup.get('name'), portgroup.get('switch_type'), portgroup.get('switch'), portgroup.get('vlan_id', 'not compared'))),
            ('Subnet', network.get('cidr')), ('Gateway (metric)', '%s (%s)' % (network.get('gateway'), network.get('route_metric'))),
            ('Node address range', network.get('node_address_range'))] + _ipv6_rows(network.get('ipv6')) + [
            ('IP forwarding', network.get('ip_forwarding')),
            ('Egress node selector', json.dumps(variables['egressip_nodes']['selector'], sort_keys=True))]
            + [(key, '%s - %s' % (json.dumps(value), (data.get('override_reasons') or {}).get(key, '')))
               for key, value in sorted((data.get('overrides') or {}).items())]))
    if data.get('networks'):
        sections.append(['## Networks with node NICs', ''] + _report.table(
            ['Network', 'Primary', 'Nodes'], [(row['network'], row['primary'], row['nodes']) for row in data['networks']]))
    if data.get('nodes'):
        sections.append(['## Egress nodes', ''] + _node_table(data['nodes']))
    if data.get('egressips'):
        sections.append(['## EgressIP objects', ''] + _report.table(
            ['Object', 'Egress IPs', 'Network', 'Owned', 'SDN migration', 'Action'],
            [(row['name'], row['egress_ips'], row['network'], row['owned'], row.get('sdn_converted_namespace'), row['action'])
             for row in data['egressips']]))
    if data.get('machinesets'):
        sections.append(['## MachineSets', ''] + _report.table(
            ['MachineSet', 'Devices', 'Lists the port group'], [(row['name'], row['devices'], row['has_portgroup']) for row in data['machinesets']]))
    if data.get('adoption_plan'):
        sections.append(['## What enable changes', ''] + ['- %s' % item for item in data['adoption_plan']])
    sections.append(_report.findings_section(data.get('findings')))
    return _report.document('Migrate: EgressIP on the secondary network', sections)
