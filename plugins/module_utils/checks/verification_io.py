# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One verification run of egressip_verify: read, evaluate, probe the wire, remediate and verify again.

The module ``egressip_verify`` runs it on its own read. ``preflight`` runs it on its own read of a converged cluster
(its ``verify`` option, enable's converged record): nothing was written since that read, so the verification a separate
module run would make a moment later is the same one, and one module run and one read of every Node, EgressIP and
NodeNetworkState are saved. Such a result carries the options it was made with (checks/verify_options.py).

``params`` are the verify options of ``verify_options.option_spec()`` (validated); ``module`` gives the clients (``k8s``,
``vcenter()``), ``check_mode`` and ``_diff``. Private module_util: no API promise.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.ocp.egressip.plugins.module_utils.checks import drill as _drill
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify as _verify
from ansible_collections.ocp.egressip.plugins.module_utils.checks import remediation as _remediation
from ansible_collections.ocp.egressip.plugins.module_utils.checks import wire as _wire
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_io as vio
from ansible_collections.ocp.egressip.plugins.module_utils.clients import parallel
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.checks.egressip_validation import egress_network
from ansible_collections.ocp.egressip.plugins.module_utils.model import cluster_identity as _identity
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import kubernetes as _kubernetes
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.core.option_specs import not_positive, portgroup_problems
from ansible_collections.ocp.egressip.plugins.module_utils.checks.verify_options import made_with, packed, validated
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot.failure_domains import read_domains
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors


def check_input(params):
    """(network or None, messages): every problem with the options, named by field, value and fix; the network parsed once."""
    messages = []
    cidr = None
    if params['network']:
        cidr, findings = egress_network(params['network'])
        messages += ['%s Fix: %s' % (item['message'], item['remedy']) for item in errors(findings)]
    messages += portgroup_problems(params['portgroup'])
    if params['wire']:
        messages += _wire.validate_wire(params['wire'])
    messages += not_positive(params, ('wait_timeout', 'poll_interval'))
    if params['remediation_limit'] is not None:
        messages += not_positive(params, ('remediation_limit',))
    messages += ['%s %r is negative; give 0 (none) or more.' % (key, params[key])
                 for key in ('remediation_hold_down', 'remediation_min_egress_nodes') if params[key] < 0]
    return cidr, messages


def vsphere_options(module, params, facts=None):
    """How verify reads vCenter (None without datacenter, cluster or failure domains, and portgroup); ``facts``: what a
    preflight of this run read, used for the first look instead of reading vCenter again."""
    if not (params['datacenter'] and (params['cluster'] or params['failure_domains']) and params['portgroup']):
        return None
    reason = 'to check the node VMs (datacenter given)'
    if not facts:
        module.require('pyvmomi', reason=reason)   # given the facts, pyVmomi loads only if a second look reads vCenter
    options = {'vcenter': lambda: module.vcenter(reason=reason), 'datacenter': params['datacenter'], 'cluster': params['cluster'],
               'portgroup': params['portgroup'], 'facts': facts}
    if params['failure_domains']:
        # each node's vNIC is checked on its own failure domain's port group (docs/how-it-works.md, Failure domains)
        options['failure_domains'] = read_domains(module.k8s, params['failure_domains'], {
            'datacenter': params['datacenter'], 'cluster': params['cluster'], 'portgroup': params['portgroup']})
    return options


class Verification(object):
    """One run: read (or take the read handed over), evaluate, probe the wire, remediate and verify again."""

    def __init__(self, module, params, network, facts=None, read=None):
        self.module = module
        self.params = params
        # every family of the secondary network (a dual-stack one has two), and the gateway of each that has one
        self.cidr = [str(family.cidr) for family in network.families] if network is not None else None
        self.gateways = [str(family.gateway) for family in network.families if family.gateway is not None] if network is not None else None
        self.names = [entry['name'] for entry in params['objects']] or None
        self.expected = dict((entry['name'], entry.get('egress_ips') or []) for entry in params['objects'])
        self.vsphere = vsphere_options(module, params, facts)
        self.clock = vio.Clock()
        self.read = read

    def once(self):
        snapshot = vio.read_verify_snapshot(self.module.k8s, self.vsphere, read=self.read)
        self.read = None   # the handed-over read, as preflight's vCenter facts, serves the first look only
        if self.vsphere:
            self.vsphere['facts'] = None
        if self.params['wire']:
            # the wire check's probe pods need only the EgressIPs: they run while the read is evaluated
            probes, result = parallel.run_beside(lambda: self.probes(snapshot['egressips']), lambda: self.evaluate(snapshot))
            return snapshot, _wire.apply_wire(result, probes)
        return snapshot, self.evaluate(snapshot)

    def evaluate(self, snapshot):
        result = _verify.evaluate(snapshot, cidr=self.cidr, names=self.names, expected=self.expected, gateway=self.gateways or None)
        if self.vsphere is None:
            result['findings'].append(catalogue_finding('vsphere_not_checked', 'vCenter was not read (datacenter, cluster and portgroup '
                                                        'not all given), so the node VMs\' vNICs were not checked.'))
        return result

    def probes(self, egressips):
        """The wire check's outcomes for the objects verified (checks/verify_io.run_probes)."""
        wanted = [obj for obj in egressips if self.names is None or obj['metadata']['name'] in self.names]
        return vio.run_probes(self.module.k8s, wanted, self.params['wire'], self.module.check_mode, self.clock, self.params['poll_interval'])

    def remediate(self, snapshot, result):
        """(remediation record, final result, changed, diff) for the broken egress nodes."""
        now = time.time()
        limits = {'limit': self.params['remediation_limit'], 'hold_down': self.params['remediation_hold_down'],
                  'min_egress_nodes': self.params['remediation_min_egress_nodes'], 'now': now}
        plan = _remediation.plan_remediation(result, snapshot, self.cidr, limits)
        record = {'nodes': plan['nodes'], 'moves': [dict(move, to=None, seconds=None) for move in plan['moves']],
                  'refused': plan['refused'], 'check_mode': self.module.check_mode, 'seconds': None, 'comparison': [],
                  'detected': bool(plan['nodes']), 'skipped': plan['skipped'], 'deferred': plan['deferred']}
        kept = [item for item in plan['findings'] if item['id'] in ('egressip_remediation_skipped', 'egressip_remediation_deferred')]
        result['findings'] += kept
        if not plan['nodes']:
            return record, result, False, None
        if plan['refused']:
            result['findings'] += plan['findings']
            return record, result, False, None
        vio.patch_nodes(self.module.k8s, plan['nodes'], _remediation.label_patch(now), self.module.check_mode)
        diff = _remediation.remediation_diff(plan['nodes'], now, snapshot)
        if self.module.check_mode:
            return record, result, True, diff
        record.update(self.watch(plan))
        initial = {'summary': _verify.summary(result), 'findings': result['findings'], 'egress_ips': result['egress_ips']}
        _snapshot, final = self.once()
        final['findings'] += kept + _remediation.remediated_findings([move for move in record['moves'] if move['to']])
        final['findings'] += [catalogue_finding(
            'egressip_drill_not_reassigned', 'EgressIP %s: %s left node %s (label removed by remediation) and was not assigned to '
            'another node within %d s.' % (move['egressip'], move['ip'], move['from'], self.params['wait_timeout']),
            objects=[{'kind': 'EgressIP', 'name': move['egressip']}, {'kind': 'Node', 'name': move['from']}])
            for move in record['moves'] if not move['to']]
        record['initial'] = initial
        return record, final, True, diff

    def watch(self, plan):
        """{moves, seconds, comparison}: where each IP the unlabelled nodes hosted went, and how long that took."""
        started = self.clock.now()
        watched = dict(((move['egressip'], move['ip']), move['from']) for move in plan['moves'])
        tracker = _drill.MoveTracker(watched, plan['nodes'])
        vio.watch_moves(self.module.k8s, tracker, started, self.params['wait_timeout'], self.params['poll_interval'], self.clock)
        candidates = dict(((move['egressip'], move['ip']), move['candidates']) for move in plan['moves'])
        moves = [dict(move, candidates=candidates[(move['egressip'], move['ip'])]) for move in tracker.moves()]
        return {'moves': moves, 'seconds': tracker.slowest() if tracker.done() else None,
                'comparison': [{'egressip': move['egressip'], 'ip': move['ip'], 'predicted': move['candidates'], 'actual': move['to'],
                                'may_be_unassigned': False, 'ok': move['to'] in move['candidates']} for move in moves]}


def failure_text(findings):
    """One message listing every error finding with its remedy (the findings are returned too)."""
    found = errors(findings)
    return 'egressip_verify found %d error(s): %s' % (len(found), ' '.join('[%s] %s Fix: %s' % (item['id'], item['message'], item['remedy'])
                                                                           for item in found))


def run(module, params, facts=None, read=None):
    """(changed, output) of one verification with ``params``; ``facts`` and ``read``: what a preflight of this run read."""
    cidr, messages = check_input(params)
    if messages:
        raise ModuleFailure('egressip_verify: invalid options; nothing was read or written. %s' % ' '.join(messages))
    verification = Verification(module, params, cidr, facts=facts, read=read)
    snapshot, result = verification.once()
    changed, diff, remediation = False, None, None
    if params['remediate'] and result['broken_nodes']:
        remediation, result, changed, diff = verification.remediate(snapshot, result)
    portgroup = (params['portgroup'] or {}).get('name')
    output = {
        'summary': _verify.summary(result),
        'egress_ips': result['egress_ips'],
        'nodes': result['nodes'],
        'findings': result['findings'],
        'notes': snapshot.get('notes') or [],
        'report': _verify.report(result, network=cidr.cidr if cidr is not None else None, portgroup=portgroup, remediation=remediation),
    }
    singletons = read if read is not None else _kubernetes.read_singletons(module.k8s, _identity.KINDS)
    output['report'].update(_identity.identity(singletons, module.k8s.host, _identity.utc_now()))
    if 'wire' in result:
        output['wire'] = result['wire']
    if remediation is not None:
        output['remediation'] = remediation
        if remediation.get('initial'):
            output['initial'] = remediation.pop('initial')
    if diff and module._diff:  # pylint: disable=protected-access
        output['diff'] = diff
    return changed, output


def on_converged_read(module, options, facts, read):
    """preflight's ``verify``: the verification of its read (a converged cluster), or None when it is better left to
    egressip_verify's own run - a remediation (it writes, under the lock), options with a problem (that module names it),
    or a read that lacks what verify needs (egressip_verify reads it again and reports what it finds)."""
    params, problems = validated(options)
    if problems or params['remediate'] or read.get('egressips') is None:
        return None
    try:
        # run() checks the options first (the network parsed once) and raises before any read when one has a problem
        _changed, output = run(module, params, facts=facts, read=read)
    except ModuleFailure:
        return None
    return packed(output, made_with(params, module.check_mode))
