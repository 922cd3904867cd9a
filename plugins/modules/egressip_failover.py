#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_failover
short_description: Fail an egress node on purpose (or restore it) and measure how its egress IPs move
version_added: 0.1.0
description:
  - One step of a failover drill (the C(failover_drill) role runs them in order). With O(state=failed), records where
    every egress IP is and the prediction of what the failure of O(node) does (the placement model of
    M(ocp.egressip.egressip_plan), a set of candidate nodes per IP), applies O(trigger), then polls the EgressIPs every
    O(poll_interval) seconds until each IP that was on the node is assigned to another node, measuring the time with a
    monotonic clock from the moment the trigger took effect. Each IP's new node is compared with its predicted
    candidates. With O(wire), probe pods then run until the echo target sees the moved IPs again, measured the same way.
  - Triggers - V(unlabel) (safe, the default) removes the C(k8s.ovn.org/egress-assignable) label; V(cordon) sets
    C(spec.unschedulable), which OVN-Kubernetes ignores, so the module watches O(observe_seconds) that nothing moves;
    V(disconnect_nic) disconnects the node VM's vNIC on O(portgroup) in vCenter; what follows depends on NetworkManager
    (O(carrier_loss)) - without C(ignore-carrier) it removes the address a few seconds later and OVN-Kubernetes moves the
    IPs (measured like V(unlabel)); with it the address stays, OVN-Kubernetes notices nothing and the IPs are blackholed
    (M(ocp.egressip.egressip_verify) with C(remediate) detects and ends it). The module watches the node's C(host-cidrs)
    for O(observe_seconds) after the disconnect to see which happened (RV(carrier_loss)); V(power_off) powers the VM off
    (destructive, needs O(confirm_power_off=true)).
  - With O(state=restored), undoes the trigger - puts the label back (V(unlabel), and V(disconnect_nic) whose remediation
    removes it), uncordons, reconnects the vNIC (and waits until the node's address is back in C(host-cidrs),
    NetworkManager's autoconnect) or powers the VM on - then watches O(observe_seconds) that no egress IP moves back
    (OVN-Kubernetes does no failback).
  - Idempotent - a node already in the requested state is left alone (C(changed=false)), nothing is measured.
requirements:
  - netaddr >= 1.3.0
  - pyvmomi >= 9.0.0 (only for V(disconnect_nic) and V(power_off))
options:
  node:
    description: The node to fail or restore.
    type: str
    required: true
  trigger:
    description: How the node fails (see the description).
    type: str
    choices: [unlabel, cordon, disconnect_nic, power_off]
    default: unlabel
  state:
    description: V(failed) applies the trigger and measures; V(restored) undoes it and checks that nothing fails back.
    type: str
    choices: [failed, restored]
    default: failed
  confirm_power_off:
    description:
      - Must be V(true) for O(trigger=power_off) with O(state=failed). Powering a node VM off stops every workload on it
        at once, like a host failure.
    type: bool
    default: false
  confirm_unowned_moves:
    description:
      - Must be V(true) for O(state=failed) with any trigger but V(cordon) when O(node) hosts egress IPs this collection
        does not own - a primary-network egress IP, or one of an EgressIP object without the label
        C(egressip.ocp/managed-by=ocp.egressip). The trigger (or, after V(disconnect_nic), the remediation that removes
        the label) moves them too; without it the step is refused before any write, naming them.
    type: bool
    default: false
  wait:
    description: Wait and measure (O(state=failed)), or watch for moves back (O(state=restored)). V(false) only triggers.
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait for every moved egress IP to be assigned elsewhere (and, with O(wire), to be seen again).
    type: int
    default: 120
  poll_interval:
    description: Seconds between two reads of the EgressIPs while waiting; the resolution of the measured times.
    type: float
    default: 1.0
  observe_seconds:
    description:
      - Seconds to watch that no egress IP moves when none should - after V(cordon) or V(disconnect_nic), and after a
        restore (no failback).
    type: float
    default: 10
  carrier_loss:
    description:
      - For O(trigger=disconnect_nic), what NetworkManager on the node is expected to do when the vNIC loses its carrier -
        V(remove) the address (no C(ignore-carrier), NetworkManager's default; the IPs move) or V(keep) it
        (C(ignore-carrier); a blackhole). V(auto) reads it from the NodeNetworkStates (a link that is down and still holds
        its address) and otherwise assumes V(remove).
      - The prediction is made for that behaviour; after the disconnect the module observes what the node does and, when
        it differs, predicts and measures for what it observed (RV(carrier_loss)).
    type: str
    choices: [auto, keep, remove]
    default: auto
  datacenter:
    description: The vSphere datacenter of the node VMs (C(egressip_vsphere.datacenter)); required for V(disconnect_nic) and V(power_off).
    type: str
extends_documentation_fragment:
  - ocp.egressip.egressip_config.portgroup_failover
  - ocp.egressip.cluster_lock
  - ocp.egressip.k8s_auth
  - ocp.egressip.vsphere_auth.nested
  - ocp.egressip.wire_probe
  - ocp.egressip.progress.notes
  - ocp.egressip.common
attributes:
  check_mode:
    details: Node patches are sent as server-side dry runs; vCenter is only read. The prediction is returned, nothing is measured.
  diff_mode:
    support: full
    details: The node's label, cordon, vNIC connection or power state before and after.
notes:
  - Times are measured by polling, so they are accurate to about O(poll_interval); they include the API latency of one read.
  - The drill changes the cluster on purpose; run it in a maintenance window, V(unlabel) first.
seealso:
  - module: ocp.egressip.egressip_plan
  - module: ocp.egressip.egressip_verify
'''

EXAMPLES = r'''
- name: Take ocp1-worker-0 out of the egress nodes and measure the reassignment
  ocp.egressip.egressip_failover:
    node: ocp1-worker-0
    trigger: unlabel
    poll_interval: 0.5
    wire: {echo_target: 192.0.2.10:8080}
  register: failover

- name: Show the measured times
  ansible.builtin.debug:
    msg: "{{ failover.moves | map(attribute='seconds') | list }} s; as predicted: {{ failover.comparison | map(attribute='ok') | list }}"

- name: Put it back; nothing fails back
  ocp.egressip.egressip_failover:
    node: ocp1-worker-0
    trigger: unlabel
    state: restored

- name: Disconnect the secondary vNIC in vCenter (a blackhole OVN-Kubernetes does not see)
  ocp.egressip.egressip_failover:
    node: ocp1-worker-1
    trigger: disconnect_nic
    datacenter: DC1
    portgroup: {name: ocp-egress-120, switch_type: standard, switch: vSwitch1}
'''

RETURN = r'''
node:
  description: O(node).
  returned: always
  type: str
  sample: ocp1-worker-0
trigger:
  description: O(trigger).
  returned: always
  type: str
  sample: unlabel
state:
  description: O(state).
  returned: always
  type: str
  sample: failed
action:
  description: What was (or would be) done - C(unlabel), C(cordon), C(disconnect_nic), C(power_off), C(label), C(uncordon),
    C(reconnect_nic), C(power_on) (several joined by C(+)), or C(none) when the node already was in that state.
  returned: always
  type: str
  sample: unlabel
before:
  description: Every egress IP assignment when the step started (C(egressip), C(ip), C(node)).
  returned: always
  type: list
  elements: dict
  sample: [{egressip: payments, ip: 10.20.0.200, node: ocp1-worker-0}]
prediction:
  description: The placement model's C(what_if) for this node and trigger (C(effect), C(moved) with C(candidates), C(unassigned),
    C(blackholed), C(notes)), as M(ocp.egressip.egressip_plan) returns it.
  returned: when O(state=failed)
  type: dict
  sample: {effect: moves, moved: [{egressip: payments, ip: 10.20.0.200, from: ocp1-worker-0, candidates: [ocp1-worker-2]}]}
moves:
  description: Each egress IP that was on the node - C(from), C(to) (first other node it was seen on, or C(null)), C(seconds)
    from the trigger to that moment, C(now) (its node at the end).
  returned: when O(state=failed)
  type: list
  elements: dict
  sample: [{egressip: payments, ip: 10.20.0.200, from: ocp1-worker-0, to: ocp1-worker-2, seconds: 1.02, now: ocp1-worker-2}]
reassignment_seconds:
  description: Seconds until every moved IP was on another node (the slowest), or C(null) when not all moved.
  returned: when O(state=failed)
  type: float
  sample: 1.02
carrier_loss:
  description:
    - With O(trigger=disconnect_nic) and O(state=failed) - C(predicted) (C(remove) or C(keep)), C(source) (given, read from
      a NodeNetworkState, or assumed), C(observed) (what the node did - C(remove) when its secondary subnet left
      C(host-cidrs) within O(observe_seconds), else C(keep); C(null) without O(wait)) and C(observed_seconds).
  returned: when O(trigger=disconnect_nic) and O(state=failed)
  type: dict
  sample: {predicted: remove, source: "assumed: remove", observed: remove, observed_seconds: 4.6}
comparison:
  description: Each moved IP against the prediction - C(predicted), C(actual), C(ok).
  returned: when O(state=failed)
  type: list
  elements: dict
  sample: [{egressip: payments, ip: 10.20.0.200, predicted: [ocp1-worker-2], actual: ocp1-worker-2, ok: true}]
wire:
  description:
    - With O(wire), per object with moved IPs - C(ips) (the moved ones), C(seen) (each IP the echo target saw, with the
      seconds since the trigger), C(ok) (every moved IP seen), C(seconds) (when the last moved IP was first seen),
      C(source_ip), C(expected), C(attempts) (probe pods), C(last) probe answer.
    - Flows of an object spread over its IPs, so each round runs at least two probes per IP of the object.
  returned: when O(wire) is set and IPs moved
  type: list
  elements: dict
  sample: [{egressip: payments, ips: [10.20.0.200], seen: {10.20.0.200: 2.4}, ok: true, seconds: 2.4, source_ip: 10.20.0.200,
            expected: [10.20.0.200, 10.20.0.201], attempts: 4}]
unexpected_moves:
  description: Egress IPs that moved while none should (cordon, a disconnected vNIC, after a restore).
  returned: always
  type: list
  elements: dict
  sample: []
observed_seconds:
  description: How long the module watched for moves that should not happen.
  returned: when it watched
  type: float
  sample: 10.0
trigger_seconds:
  description: How long the trigger (or the undo) itself took - the API patch or the vCenter task.
  returned: when something was done
  type: float
  sample: 0.05
seconds:
  description: With O(state=restored), seconds from the undo until the node was Ready and labelled again.
  returned: when O(state=restored) and something was done
  type: float
  sample: 0.3
after:
  description: Every egress IP assignment at the end.
  returned: always
  type: list
  elements: dict
  sample: [{egressip: payments, ip: 10.20.0.200, node: ocp1-worker-2}]
findings:
  description: Drill findings (C(egressip_drill_not_reassigned), C(egressip_drill_prediction_mismatch),
    C(egressip_drill_wire_not_restored), C(egressip_drill_unexpected_move), C(egressip_drill_nothing_to_move)).
  returned: always
  type: list
  elements: dict
  sample: []
diff:
  description: The node's state before and after (label, cordon, vNIC connection or power state).
  returned: when diff mode is on and something changed
  type: dict
  sample: {before: {egress_assignable: true}, after: {egress_assignable: false}}
'''

from ansible_collections.ocp.egressip.plugins.module_utils.checks import drill as _drill
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement as _placement
from ansible_collections.ocp.egressip.plugins.module_utils.checks import drill_io as dio
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_path as _verify_path
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_io as vio
from ansible_collections.ocp.egressip.plugins.module_utils.model.egressip_facts import is_egress_assignable, is_ready, unowned_on_node
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.core.option_specs import (
    not_positive, portgroup_argument_spec, portgroup_problems, wire_argument_spec)
from ansible_collections.ocp.egressip.plugins.module_utils.core import progress
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import LOCK_BEFORE, PROGRESS_NOTES, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.checks.wire import validate_wire
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import vsphere_nested_argument_spec

WHAT = 'egressip_failover'
VSPHERE_TRIGGERS = ('disconnect_nic', 'power_off')


def argument_spec():
    spec = dict(
        node=dict(type='str', required=True),
        trigger=dict(type='str', choices=sorted(_drill.TRIGGERS), default='unlabel'),
        state=dict(type='str', choices=['failed', 'restored'], default='failed'),
        confirm_power_off=dict(type='bool', default=False),
        confirm_unowned_moves=dict(type='bool', default=False),
        wait=dict(type='bool', default=True),
        wait_timeout=dict(type='int', default=120),
        poll_interval=dict(type='float', default=1.0),
        observe_seconds=dict(type='float', default=10),
        carrier_loss=dict(type='str', choices=['auto', 'keep', 'remove'], default='auto'),
        datacenter=dict(type='str'),
        portgroup=portgroup_argument_spec(),
    )
    spec.update(wire_argument_spec())
    spec.update(vsphere_nested_argument_spec())
    return spec


def check_input(params):
    """Messages naming the field, the value and the fix; empty when the options fit together."""
    messages = []
    trigger = params['trigger']
    if trigger == 'power_off' and params['state'] == 'failed' and not params['confirm_power_off']:
        messages.append('trigger=power_off powers off the VM of node %s and stops every workload on it; set confirm_power_off: true '
                        'to do that on purpose, or use trigger=unlabel (safe).' % params['node'])
    if trigger in VSPHERE_TRIGGERS and not params['datacenter']:
        messages.append('trigger=%s acts in vCenter; set datacenter (egressip_vsphere.datacenter).' % trigger)
    if trigger == 'disconnect_nic' and not params['portgroup']:
        messages.append('trigger=disconnect_nic needs the port group of the vNIC; set portgroup (egressip_vsphere.portgroup).')
    messages += portgroup_problems(params['portgroup'])
    messages += not_positive(params, ('wait_timeout', 'poll_interval'))
    if params['observe_seconds'] < 0:
        messages.append('observe_seconds=%s must be 0 or more.' % params['observe_seconds'])
    if params['wire']:
        messages += validate_wire(params['wire'])
    return messages


class Step(object):
    """One drill step on one node: read, trigger or undo, measure."""

    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.k8s = module.k8s
        self.clock = vio.Clock()
        self.trigger = self.params['trigger']
        self._vcenter = None
        self._target = None
        self._snap = None

    # --- reads ---------------------------------------------------------------------------------

    def read(self):
        egressips = vio.list_egressips(self.k8s)
        nodes = kube.list_objects(self.k8s, kube.NODES)
        node = next((item for item in nodes if item['metadata']['name'] == self.params['node']), None)
        if node is None:
            raise ModuleFailure('node=%s: no such node in the cluster (nodes: %s).'
                                % (self.params['node'], ', '.join(sorted(item['metadata']['name'] for item in nodes))), reason='not_found')
        return nodes, egressips, node

    def vm_target(self, node):
        if self._target is None:
            self._vcenter = self.module.vcenter(reason='for trigger=%s' % self.trigger)
            portgroup = self.params['portgroup'] if self.trigger == 'disconnect_nic' else None
            self._target = dio.read_node_vm(self._vcenter, self.params['datacenter'], node, portgroup)
        return self._target

    def node_state(self, node):
        """The node's state as far as the trigger is concerned (what diff shows)."""
        state = {'egress_assignable': is_egress_assignable(node)}
        if self.trigger == 'cordon':
            state = {'unschedulable': bool((node.get('spec') or {}).get('unschedulable'))}
        elif self.trigger == 'disconnect_nic':
            state['nic_connected'] = bool(self.vm_target(node)['nic'].get('connected'))
        elif self.trigger == 'power_off':
            state = {'power_state': self.vm_target(node)['vm'].get('power_state')}
        return state

    # --- what to do --------------------------------------------------------------------------------

    def actions(self, state):
        """[(action, new state)]: the writes that bring the node to the requested state; empty when it is there."""
        failed = self.params['state'] == 'failed'
        wanted = []
        if self.trigger == 'unlabel':
            wanted.append(('unlabel' if failed else 'label', 'egress_assignable', not failed))
        elif self.trigger == 'cordon':
            wanted.append(('cordon' if failed else 'uncordon', 'unschedulable', failed))
        elif self.trigger == 'disconnect_nic':
            wanted.append(('disconnect_nic' if failed else 'reconnect_nic', 'nic_connected', not failed))
            if not failed:
                wanted.append(('label', 'egress_assignable', True))
        else:
            wanted.append(('power_off' if failed else 'power_on', 'power_state', 'poweredOff' if failed else 'poweredOn'))
        return [(action, key, value) for action, key, value in wanted if state.get(key) != value]

    def apply(self, node, action, check_mode):
        name = self.params['node']
        if not check_mode:
            progress.note('%s of node %s%s' % (action, name, ' (vCenter)' if action in VCENTER_ACTIONS else ''))
        if action in ('unlabel', 'label'):
            dio.patch_node(self.k8s, name, dio.label_patch(action == 'label'), check_mode)
        elif action in ('cordon', 'uncordon'):
            dio.patch_node(self.k8s, name, dio.cordon_patch(action == 'cordon'), check_mode)
        elif check_mode:
            return
        elif action in ('disconnect_nic', 'reconnect_nic'):
            dio.set_nic_connected(self._vcenter, self.vm_target(node), action == 'reconnect_nic')
        else:
            dio.set_power(self._vcenter, self.vm_target(node), action == 'power_on')

    # --- the two states -------------------------------------------------------------------------------

    def run(self):
        nodes, egressips, node = self.read()
        before = _drill.assignments(egressips)
        state = self.node_state(node)
        todo = self.actions(state)
        result = {'node': self.params['node'], 'trigger': self.trigger, 'state': self.params['state'],
                  'action': '+'.join(action for action, _key, _value in todo) or 'none', 'before': _drill.assignment_list(before),
                  'unexpected_moves': [], 'findings': []}
        self.guard_unowned(node, egressips, todo)
        if self.params['state'] == 'failed':
            snap = _placement.snapshot(nodes, egressips)
            result['prediction'] = self.predict(snap, result)
            result.update(moves=[], reassignment_seconds=None, comparison=[])
        if todo and self.module._diff:
            result['diff'] = {'before': state, 'after': dict(state, **dict((key, value) for _action, key, value in todo))}
        if not todo or self.module.check_mode:
            for action, _key, _value in todo:
                self.apply(node, action, True)
            result['after'] = result['before']
            return bool(todo), result
        started = self.clock.now()
        for action, _key, _value in todo:
            self.apply(node, action, False)
        effective = self.clock.now()
        result['trigger_seconds'] = effective - started
        if self.params['state'] == 'failed':
            self.measure_failure(result, before, nodes, effective)
        else:
            self.measure_restore(result, before, effective)
        return True, result

    def guard_unowned(self, node, egressips, todo):
        """Refuse (before any write) a failure that would move egress IPs this collection does not own, unless confirmed."""
        if not todo or self.params['state'] != 'failed' or self.trigger == 'cordon' or self.params['confirm_unowned_moves']:
            return
        unowned = unowned_on_node(node, egressips)
        if unowned:
            raise ModuleFailure(
                'node=%s hosts egress IP(s) this collection does not own: %s. trigger=%s would move them too; nothing was done. Fix: drill '
                'another node (egressip_drill.nodes), or set confirm_unowned_moves: true (failover_drill_confirm_unowned_moves) to move them '
                'on purpose.' % (self.params['node'], ', '.join('%s of %s (%s)' % (ip, name, why) for name, ip, why in unowned), self.trigger),
                reason='unowned_egress_ips')

    def predict(self, snap, result):
        """The what-if of the trigger; for disconnect_nic with the carrier-loss behaviour chosen (result['carrier_loss'])."""
        node = self.params['node']
        if self.trigger != 'disconnect_nic':
            return _placement.what_if(snap, node, _drill.TRIGGERS[self.trigger])
        self._snap = snap
        given = self.params['carrier_loss'] if self.params['carrier_loss'] != 'auto' else None
        behaviour, source = _verify_path.carrier_loss_choice(node, given, vio.read_nns(self.k8s)[0] if given is None else None)
        result['carrier_loss'] = {'predicted': behaviour, 'source': source, 'observed': None, 'observed_seconds': None}
        prediction = _placement.what_if(snap, node, 'disconnect_nic', carrier_loss=behaviour)
        prediction['notes'].append('carrier loss: %s' % source)
        return prediction

    def observe_carrier(self, result, started):
        """After disconnect_nic: 'remove' once the node's secondary subnets left host-cidrs, 'keep' if they stay for observe_seconds.

        When that differs from the prediction's behaviour, the prediction is made again for what was observed.
        """
        node = self.params['node']
        # a /32 (/128) host address such as keepalived's VIP on br-ex can host no egress IP and stays: not the NIC's subnet
        subnets = set(cidr for cidr in self._snap['nodes'][node]['secondary'] if not _host_route(cidr))
        deadline = started + self.params['observe_seconds']
        progress.note('node %s: whether its secondary subnets (%s) leave its host-cidrs after the NIC disconnect (observe_seconds %d s)'
                      % (node, progress.shown(sorted(subnets)), self.params['observe_seconds']))
        while True:
            current = next((item for item in kube.list_objects(self.k8s, kube.NODES) if item['metadata']['name'] == node), None)
            now = self.clock.now()
            left = set(_placement.snapshot([current], [])['nodes'][node]['secondary']) if current is not None else set()
            if not subnets & left or now >= deadline:
                break
            self.clock.sleep(self.params['poll_interval'])
        observed = 'keep' if subnets & left else 'remove'
        result['carrier_loss'].update(observed=observed, observed_seconds=now - started)
        if observed != result['carrier_loss']['predicted']:
            result['prediction'] = _placement.what_if(self._snap, node, 'disconnect_nic', carrier_loss=observed)
            result['prediction']['notes'].append('carrier loss: predicted %s (%s), observed %s: predicted again for what the node did'
                                                 % (result['carrier_loss']['predicted'], result['carrier_loss']['source'], observed))
        return result['prediction']

    def measure_failure(self, result, before, nodes, started):
        node = self.params['node']
        prediction = result['prediction']
        if self.trigger == 'disconnect_nic' and self.params['wait']:
            prediction = self.observe_carrier(result, started)
        watched = dict((key, node) for key in _drill.on_node(before, node))
        tracker = _drill.MoveTracker(watched, [node])
        if not self.params['wait']:
            result['moves'] = tracker.moves()
            result['after'] = result['before']
            return
        if prediction['effect'] == 'moves' and watched:
            egressips = vio.watch_moves(self.k8s, tracker, started, self.params['wait_timeout'], self.params['poll_interval'], self.clock)
            result['comparison'] = _placement.compare(prediction, _placement.snapshot(nodes, egressips))
            result['reassignment_seconds'] = tracker.slowest() if tracker.done() else None
            if self.params['wire'] and tracker.done():
                result['wire'] = self.wire_until_seen(sorted(watched), started)
        else:
            moves, observed = vio.watch_still(self.k8s, before, self.params['observe_seconds'], self.params['poll_interval'], self.clock)
            when = 'while node %s was cordoned' % node if self.trigger == 'cordon' else 'while nothing should move (%s)' % self.trigger
            result['unexpected_moves'] = [dict(move, when=when) for move in moves]
            result['observed_seconds'] = observed
            tracker.observe(_drill.assignments(vio.list_egressips(self.k8s)), observed)
        result['moves'] = tracker.moves()
        result['after'] = _drill.assignment_list(tracker.last or before)
        result['findings'] = _drill.failure_findings(node, self.trigger, prediction, result['moves'], result['comparison'],
                                                     result.get('wire'), result['unexpected_moves'])

    def wire_until_seen(self, moved, started):
        """Probe rounds until the echo target has seen every moved IP again (time since the trigger)."""
        def current(name):
            return lambda: next((item for item in vio.list_egressips(self.k8s) if item['metadata']['name'] == name), None)
        targets = {}
        for name, ip in moved:
            targets.setdefault(name, {'ips': [], 'get': current(name)})['ips'].append(ip)
        deadline = started + self.params['wait_timeout']
        return vio.probe_until_seen(self.k8s, targets, self.params['wire'], started, deadline, self.clock, self.params['poll_interval'])

    def measure_restore(self, result, before, started):
        node = self.params['node']
        if self.params['wait']:
            result['seconds'] = self.wait_capable(started)
            moves, observed = vio.watch_still(self.k8s, before, self.params['observe_seconds'], self.params['poll_interval'], self.clock)
            result['unexpected_moves'] = [dict(move, when='after node %s was restored (failback or rebalancing)' % node) for move in moves]
            result['observed_seconds'] = observed
            result['findings'] = _drill.restore_findings(node, result['unexpected_moves'])
        result['after'] = _drill.assignment_list(_drill.assignments(vio.list_egressips(self.k8s)))

    def wait_capable(self, started):
        """Seconds until the node is Ready (and labelled, when the restore labels it), or None at the timeout."""
        deadline = started + self.params['wait_timeout']
        progress.note('Node %s to be Ready%s (wait_timeout %d s)' % (
            self.params['node'], '' if self.trigger in ('cordon', 'power_off') else ', egress-assignable and with its secondary address'
            if self.trigger == 'disconnect_nic' else ' and egress-assignable', self.params['wait_timeout']))
        while True:
            node = next((item for item in kube.list_objects(self.k8s, kube.NODES) if item['metadata']['name'] == self.params['node']), None)
            now = self.clock.now()
            if node is not None and is_ready(node) and (self.trigger == 'cordon' or self.trigger == 'power_off' or is_egress_assignable(node)) \
                    and _address_back(self.trigger, node):
                return now - started
            if now >= deadline:
                return None
            self.clock.sleep(self.params['poll_interval'])


VCENTER_ACTIONS = ('disconnect_nic', 'reconnect_nic', 'power_off', 'power_on')


def _address_back(trigger, node):
    """After reconnect_nic: the node holds a secondary subnet in host-cidrs again (NetworkManager autoconnect); else True."""
    secondary = _placement.snapshot([node], [])['nodes'][node['metadata']['name']]['secondary']
    return trigger != 'disconnect_nic' or any(not _host_route(cidr) for cidr in secondary)


def _host_route(cidr):
    return str(cidr).endswith('/32') or str(cidr).endswith('/128')


def step(module, result):
    """Trigger the failover and watch the EgressIPs move (under the cluster lock)."""
    result['changed'], output = Step(module).run()
    result.update(output)


def main():
    module = EgressModule(WHAT, argument_spec=argument_spec(), libraries=('netaddr',), lock=LOCK_BEFORE, progress=PROGRESS_NOTES,
                          supports_check_mode=True)
    messages = check_input(module.params)
    if messages:
        module.fail_json(msg='egressip_failover: invalid options; nothing was done. %s' % ' '.join(messages))
    module.run(step)


if __name__ == '__main__':
    main()
