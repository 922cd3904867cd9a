# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The support report: one JSON document and one Markdown page to attach to a support case.

Pure code: no I/O, no clock. ``build(snapshot, findings, ...)`` turns the preflight snapshot
(`snapshot/cluster.py`, with the requested configuration under ``config``), the findings (preflight
in audit mode, plus any verify findings), and optionally the ``egressip_plan`` result into a
JSON-serialisable report of kind ``support``: the verdict in one line, versions, the configuration,
every finding with its remedy, the current placement, the what-if summary, the primary-network
egress IPs compared with an earlier record, and the nodes with their NICs. ``markdown(report)``
renders it with the building blocks of `_report` (tables, findings, the Mermaid diagram), and
``render(report)`` returns both file contents. The report holds no secrets: the snapshot has none,
and any configuration key that looks like a credential is dropped.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import name as _name
from ansible_collections.ocp.egressip.plugins.module_utils.model import cluster_identity as _identity
from ansible_collections.ocp.egressip.plugins.module_utils.model import egress_network as _egress_network
from ansible_collections.ocp.egressip.plugins.module_utils.reports import report as _report
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, WARNING
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight_context import AUDIT, PreflightContext
from ansible_collections.ocp.egressip.plugins.module_utils.core.names import EGRESS_ASSIGNABLE_LABEL
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight_cluster import SUPPORT_STATEMENT
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight import cluster_facts
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import node_ready
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight_egress import primary_egressips

KIND = 'support'
SECRET_WORDS = ('password', 'passwd', 'token', 'api_key', 'secret', 'client_key', 'credential')
OUTSIDE_SUPPORT = 'outside Red Hat support: secondary-network EgressIP on vSphere'


def _scrub(value):
    """The value without any key that names a credential (defence in depth: the configuration has none)."""
    if isinstance(value, dict):
        return dict((key, _scrub(item)) for key, item in value.items()
                    if not any(word in str(key).lower() for word in SECRET_WORDS))
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    return value


# --- placement and nodes ------------------------------------------------------------------------

def placement(snapshot, ctx):
    """One row per IP of every EgressIP object: where it is, on which network, and whether this collection manages it."""
    nodes = [_egress_network.node_networks_from_node(node) for node in snapshot.get('nodes') or []]
    requested = set(entry.get('name') for entry in ctx.objects)
    rows = []
    for egressip in sorted(snapshot.get('egressips') or [], key=_name):
        status = dict((str(item.get('egressIP')), item.get('node')) for item in (egressip.get('status') or {}).get('items') or [])
        for ip in (egressip.get('spec') or {}).get('egressIPs') or []:
            try:
                where = _egress_network.classify_ip_on_nodes(ip, nodes)
            except ValueError:
                where = None
            node = status.get(str(ip))
            node_object = ctx.nodes_by_name.get(node)
            rows.append({
                'egressip': _name(egressip), 'ip': str(ip),
                'network': where.network if where else 'invalid', 'subnet': str(where.subnet) if where and where.subnet else None,
                'node': node, 'node_ready': node_ready(node_object) if node_object else None,
                'node_labelled': EGRESS_ASSIGNABLE_LABEL in ((node_object or {}).get('metadata') or {}).get('labels', {}) if node_object else None,
                'requested': _name(egressip) in requested,
            })
    for entry in ctx.objects:
        existing = set(row['ip'] for row in rows if row['egressip'] == entry.get('name'))
        for ip in entry.get('egress_ips') or []:
            if str(ip) not in existing:
                rows.append({'egressip': entry.get('name'), 'ip': str(ip), 'network': None, 'subnet': None, 'node': None,
                             'node_ready': None, 'node_labelled': None, 'requested': True, 'missing': True})
    return rows


def _portgroup_on_host(ctx, host_name):
    """Whether the egress port group reaches the ESXi host (None when vCenter was not read)."""
    if not ctx.vsphere_cluster_read() or not host_name:
        return None
    name = ctx.portgroup_config.get('name')
    if ctx.portgroup_config.get('switch_type') == 'distributed':
        return any(host_name in (switch.get('hosts') or []) and any(pg.get('name') == name for pg in switch.get('portgroups') or [])
                   for switch in ctx.vsphere.get('distributed_switches') or [])
    host = next((item for item in ctx.vsphere.get('hosts') or [] if item.get('name') == host_name), None)
    return bool(host) and any(pg.get('name') == name for pg in host.get('standard_portgroups') or [])


def family_addresses(ctx, node):
    """Per family of the secondary network (IPv4 first, then the ipv6 part): the node's address in it from host-cidrs,
    or None; [] when the network is not known."""
    host_cidrs = _egress_network.node_networks_from_node(node).host_cidrs
    return [next((entry for entry in host_cidrs if entry.version == family.version and entry.ip in family.cidr), None)
            for family in (ctx.network.families if ctx.network is not None else [])]


def node_rows(ctx):
    """The egress nodes (selected or labelled) with their VM, ESXi host, secondary NIC and address."""
    names = set(_name(node) for node in ctx.selected_nodes)
    names.update(_name(node) for node in ctx.nodes if EGRESS_ASSIGNABLE_LABEL in ((node.get('metadata') or {}).get('labels') or {}))
    rows = []
    for name in sorted(names):
        node = ctx.nodes_by_name[name]
        vm = ctx.node_vm(node) if ctx.vsphere_cluster_read() else None
        nic = next((item for item in (vm or {}).get('nics') or [] if item.get('network') == ctx.portgroup_config.get('name')), None)
        addresses = family_addresses(ctx, node)
        on_host = _portgroup_on_host(ctx, (vm or {}).get('host'))
        path_ok = None
        if vm is not None:
            path_ok = bool(nic and nic.get('connected') and on_host is not False and addresses and None not in addresses)
        rows.append({
            'name': name, 'ready': node_ready(node), 'selected': name in set(_name(item) for item in ctx.selected_nodes),
            'labelled': EGRESS_ASSIGNABLE_LABEL in ((node.get('metadata') or {}).get('labels') or {}),
            'vm': (vm or {}).get('name'), 'esxi_host': (vm or {}).get('host'),
            'nic_mac': (nic or {}).get('mac'), 'nic_connected': (nic or {}).get('connected') if nic else None,
            'portgroup_on_host': on_host, 'address': ', '.join(str(item) for item in addresses if item is not None) or None, 'path_ok': path_ok,
        })
    return rows


# --- what-if and the primary-network record -------------------------------------------------------

def what_if_rows(plan):
    """A summary row per simulated node failure of an egressip_plan result (None when no plan was given)."""
    if not plan or plan.get('what_if') is None:
        return None
    rows = []
    for item in plan['what_if']:
        rows.append({'node': item.get('node'), 'trigger': item.get('trigger'), 'effect': item.get('effect'),
                     'moved': ['%s %s -> %s' % (move.get('egressip'), move.get('ip'), '/'.join(move.get('candidates') or []) or 'nowhere')
                               for move in item.get('moved') or []],
                     'unassigned': ['%s %s' % (entry.get('egressip'), entry.get('ip')) for entry in item.get('unassigned') or []],
                     'blackholed': ['%s %s' % (entry.get('egressip'), entry.get('ip')) for entry in item.get('blackholed') or []]})
    return rows


def primary_comparison(current, recorded):
    """The primary-network egress IPs now, and what changed since `recorded` (None when there is no record)."""
    result = {'current': current, 'recorded': recorded, 'changed': None}
    if recorded is None:
        return result
    before = dict(((item['name'], item['egress_ip']), item.get('node')) for item in recorded)
    after = dict(((item['name'], item['egress_ip']), item.get('node')) for item in current)
    changed = []
    for key in sorted(set(before) | set(after)):
        if before.get(key, '<absent>') != after.get(key, '<absent>'):
            changed.append({'name': key[0], 'egress_ip': key[1], 'before': before.get(key, '<absent>'), 'after': after.get(key, '<absent>')})
    result['changed'] = changed
    return result


# --- verdict ----------------------------------------------------------------------------------------

def verdict(findings, rows, requested, acknowledged):
    """(status, one line): healthy, degraded, failing, partial or not_configured, plus the support status."""
    errors = [item for item in findings if item['severity'] == ERROR]
    warnings = [item for item in findings if item['severity'] == WARNING]
    wanted = [row for row in rows if row['requested']]
    assigned = [row for row in wanted if row['node']]
    if errors:
        status = 'failing'
        line = 'Not healthy: %d error(s) (%s)' % (len(errors), ', '.join(sorted(set(item['id'] for item in errors))))
    elif not requested:
        status = 'not_configured'
        line = 'No secondary-network EgressIP is configured'
    elif len(assigned) < len(wanted) or not wanted:
        status = 'partial'
        line = 'Partly configured: %d of %d egress IP(s) assigned' % (len(assigned), len(wanted))
    elif warnings:
        status = 'degraded'
        line = 'Configured and healthy, with %d warning(s) (%s)' % (len(warnings), ', '.join(sorted(set(item['id'] for item in warnings))))
    else:
        status = 'healthy'
        line = 'Configured and healthy'
    if requested:
        line += '; %s%s' % (OUTSIDE_SUPPORT, '' if acknowledged else ' (NOT acknowledged)')
    return status, line


# --- the report ------------------------------------------------------------------------------------

def build(snapshot, findings, plan=None, recorded_primary=None, about=None, api_url=None):
    """The support report (kind ``support``) as JSON-serialisable data.

    snapshot: the preflight snapshot (with ``config``); findings: preflight findings (audit mode
    recommended) plus any others (verify); plan: an ``egressip_plan`` result (``placements``,
    ``what_if``, ``single_points_of_failure``) or None; recorded_primary: an earlier
    ``primary_egressips`` record to compare with, or None; about: facts the caller knows
    (``generated_at``, ``collection_version``, ``ansible_version``, ...), copied as they are; api_url: the API server
    the run used. ``cluster`` holds the identity (model/cluster_identity.py) beside the facts of preflight;
    ``generated_at`` is about's.
    """
    about = dict(about or {})
    made = _identity.identity(snapshot, api_url, about.get('generated_at') or '')
    ctx = PreflightContext(snapshot, AUDIT)
    findings = _report.sorted_findings(findings)
    rows = placement(snapshot, ctx)
    acknowledged = ctx.config.get('acknowledge_unsupported') is True
    status, line = verdict(findings, rows, ctx.requested(), acknowledged)
    facts = cluster_facts(snapshot)
    vsphere = snapshot.get('vsphere') or {}
    counts = dict((severity, len([item for item in findings if item['severity'] == severity])) for severity in ('error', 'warning', 'info'))
    wanted = [row for row in rows if row['requested']]
    return {
        'kind': KIND,
        'verdict': line,
        'status': status,
        'support': {'outside_red_hat_support': ctx.requested(), 'acknowledged': acknowledged, 'statement': SUPPORT_STATEMENT},
        'versions': {
            'openshift': facts['openshift_version'], 'platform': facts['platform'], 'network_type': facts['network_type'],
            'vcenter': vsphere.get('about'),
            'collection': about.get('collection_version'), 'ansible_core': about.get('ansible_version'),
        },
        'about': _scrub(about),
        'configuration': _scrub(ctx.config),
        'cluster': dict(facts, **made['cluster']),
        'generated_at': made['generated_at'] or None,
        'summary': dict(counts, egress_ips=len(wanted), assigned=len([row for row in wanted if row['node']]),
                        ok=status in ('healthy', 'degraded')),
        'findings': findings,
        'placement': rows,
        'nodes': node_rows(ctx),
        'what_if': what_if_rows(plan),
        'single_points_of_failure': (plan or {}).get('single_points_of_failure'),
        'primary_egressips': primary_comparison(primary_egressips(snapshot), recorded_primary),
        'checked': {'vcenter': snapshot.get('vsphere') is not None, 'pods': 'pods' in snapshot,
                    'unreadable': sorted((snapshot.get('unreadable') or {}).keys())},
    }


# --- Markdown ---------------------------------------------------------------------------------------

def _flatten(prefix, value):
    # selectors stay whole (their keys are label names, values may be empty strings)
    if isinstance(value, dict) and value and not prefix.endswith('selector'):
        rows = []
        for key in sorted(value):
            rows += _flatten('%s.%s' % (prefix, key) if prefix else key, value[key])
        return rows
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        rows = []
        for index, item in enumerate(value):
            rows += _flatten('%s[%d]' % (prefix, index), item)
        return rows
    if isinstance(value, dict):
        value = json.dumps(value, sort_keys=True)
    return [(prefix, value)]


def configuration_lines(configuration):
    """The configuration as a table of public variable paths (egressip_network.cidr, ...) and values."""
    return _report.table(['Variable', 'Value'], [('egressip_' + key, value) for key, value in _flatten('', configuration)])


def versions_lines(report):
    versions = report.get('versions') or {}
    rows = [('OpenShift', versions.get('openshift')), ('Platform', versions.get('platform')),
            ('Network type', versions.get('network_type')), ('vCenter', versions.get('vcenter')),
            ('ocp.egressip', versions.get('collection')), ('ansible-core', versions.get('ansible_core'))]
    return _report.table(['Component', 'Version'], rows)


def placement_lines(report):
    rows = [(row['egressip'], row['ip'], row.get('network') or ('NOT CREATED' if row.get('missing') else None), row.get('subnet'),
             row.get('node') or 'UNASSIGNED', row.get('node_ready'), row.get('node_labelled'), row.get('requested'))
            for row in report.get('placement') or []]
    return _report.table(['EgressIP', 'IP', 'Network', 'Subnet', 'Node', 'Node Ready', 'Node labelled', 'In the variables'], rows)


def node_lines(report):
    rows = [(row['name'], row.get('ready'), row.get('labelled'), row.get('vm'), row.get('esxi_host'), row.get('nic_mac'),
             row.get('nic_connected'), row.get('portgroup_on_host'), row.get('address'),
             {True: 'ok', False: 'BROKEN', None: None}[row.get('path_ok')])
            for row in report.get('nodes') or []]
    return _report.table(['Node', 'Ready', 'Egress label', 'VM', 'ESXi host', 'Egress NIC', 'Connected', 'Port group on host',
                          'Address', 'Secondary path'], rows)


def what_if_lines(report):
    if report.get('what_if') is None:
        return ['_No prediction was made (run egressip_plan with what_if to include it)._']
    rows = [(row['node'], row['trigger'], row['effect'], row['moved'], row['unassigned'], row['blackholed'])
            for row in report['what_if']]
    lines = _report.table(['Failing node', 'Trigger', 'Effect', 'Moves (IP -> candidates)', 'May stay unassigned', 'Blackholed'], rows)
    spofs = report.get('single_points_of_failure') or []
    if spofs:
        lines += ['', 'Single points of failure: %s.' % ', '.join(sorted(set(item.get('node') for item in spofs)))]
    return lines


def primary_lines(report):
    primary = report.get('primary_egressips') or {}
    lines = _report.table(['EgressIP', 'IP', 'Subnet', 'Node'],
                          [(item['name'], item['egress_ip'], item.get('subnet'), item.get('node') or 'UNASSIGNED')
                           for item in primary.get('current') or []])
    if primary.get('changed') is None:
        lines += ['', 'No earlier record to compare with.']
    elif not primary['changed']:
        lines += ['', 'Unchanged since the recorded state.']
    else:
        lines += ['', 'Changed since the recorded state:', '']
        lines += _report.table(['EgressIP', 'IP', 'Before', 'After'],
                               [(item['name'], item['egress_ip'], item['before'], item['after']) for item in primary['changed']])
    return lines


def diagram_lines(report):
    configuration = report.get('configuration') or {}
    portgroup = ((configuration.get('vsphere') or {}).get('portgroup') or {}).get('name')
    nodes = [{'name': row['name'], 'host': row.get('esxi_host'), 'address': row.get('address'), 'nic': row.get('nic_mac'),
              'connected': row.get('nic_connected'), 'path_ok': row.get('path_ok')} for row in report.get('nodes') or []]
    names = set(row['name'] for row in nodes)
    ips = [{'egressip': row['egressip'], 'ip': row['ip'], 'node': row['node'] if row.get('node') in names else None,
            'ok': bool(row.get('node')) and row.get('node') in names}
           for row in report.get('placement') or [] if row.get('requested')]
    network = configuration.get('network') or {}
    cidrs = [cidr for cidr in (network.get('cidr'), (network.get('ipv6') or {}).get('cidr')) if cidr]
    return _report.topology_diagram({'name': portgroup, 'cidr': ', '.join(cidrs) or None}, nodes, ips)


def markdown(report):
    """The human support report."""
    support = report.get('support') or {}
    checked = report.get('checked') or {}
    head = ['**%s.**' % report.get('verdict'), '']
    if support.get('outside_red_hat_support'):
        status_text = ('This cluster uses EgressIP on a secondary host interface on vSphere, which is **outside Red Hat support**; '
                       'the owner %s this with `egressip_acknowledge_unsupported: true`.'
                       % ('acknowledged' if support.get('acknowledged') else '**did not acknowledge**'))
    else:
        status_text = 'No secondary-network EgressIP is requested in the configuration.'
    head += _report.identity_lines(report)
    skipped = [what for what, done in (('vCenter', checked.get('vcenter')), ('pods', checked.get('pods'))) if not done]
    skipped += checked.get('unreadable') or []
    if skipped:
        head += ['Not read (the checks that need them were skipped): %s.' % ', '.join(skipped), '']
    sections = [
        head,
        ['## Support status', '', status_text, '', support.get('statement') or '', ''],
        ['## Versions', ''] + versions_lines(report) + [''],
        ['## Configuration', '', 'The variables this report was made with (credentials are never part of them).', '']
        + configuration_lines(report.get('configuration') or {}) + [''],
        _report.findings_section(report.get('findings')),
        ['## Placement', ''] + placement_lines(report) + [''],
        ['## Egress nodes', ''] + node_lines(report) + [''],
        ['## Diagram', ''] + diagram_lines(report) + [''],
        ['## What if a node fails', ''] + what_if_lines(report) + [''],
        ['## EgressIPs on the primary network', '', 'Recorded so that changes by anyone (including this collection) show up.', '']
        + primary_lines(report) + [''],
    ]
    return _report.document('EgressIP support report', sections)


def render(report):
    """(JSON text, Markdown text) of a support report."""
    return _report.render_json(report), markdown(report)
