# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The converged record: one hash of what enable's steps read and write, so that a rerun on a cluster that has not
changed since the last converged run can skip those steps (docs/how-it-works.md#the-converged-record).

``fingerprint(snapshot, config)`` hashes, from preflight's snapshot (its shape is in checks/preflight.py), every part
the vSphere network, node network, egress node and EgressIP steps decide from, without the fields that change on their
own (resourceVersion, managedFields, timestamps, heartbeats), and the configuration those steps run with. Two
snapshots with the same fingerprint make the steps plan the same writes; a cluster where enable's last run wrote
nothing and verified healthy therefore needs none. Anything else (a node added, a label, a policy or a NIC changed by
hand, a vMotion to another host, another collection release or variable) changes the hash, and the steps run again.

Pure: no I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json

from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig, name as name_of

VERSION = 1  # of the fingerprint's shape: a new shape never matches an old record
NODE_ANNOTATION_PREFIXES = ('k8s.ovn.org/', 'egressip.ocp/')
# the interface fields NMState reports that the node steps read (addresses, MAC, state), not counters or ethtool details
INTERFACE_KEYS = ('name', 'type', 'state', 'mac-address', 'ipv4', 'ipv6', 'controller', 'mtu')
VOLATILE_METADATA = ('resourceVersion', 'managedFields', 'creationTimestamp', 'uid', 'generation', 'selfLink')
VOLATILE_CONDITION_KEYS = ('lastHeartbeatTime', 'lastTransitionTime', 'lastUpdateTime', 'lastProbeTime', 'message', 'reason')
# the public variables the skipped steps read (not the connection: a new password does not make steps run)
STEP_VARIABLES = ('egressip_acknowledge_unsupported', 'egressip_vsphere', 'egressip_network', 'egressip_nodes', 'egressip_objects')


def _metadata(obj):
    metadata = (obj or {}).get('metadata') or {}
    return dict((key, value) for key, value in metadata.items() if key not in VOLATILE_METADATA)


def _conditions(conditions):
    return sorted(([dict((key, value) for key, value in (item or {}).items() if key not in VOLATILE_CONDITION_KEYS)
                    for item in conditions or []]), key=lambda item: json.dumps(item, sort_keys=True))


def _node(node):
    metadata = (node or {}).get('metadata') or {}
    annotations = dict((key, value) for key, value in (metadata.get('annotations') or {}).items()
                       if key.startswith(NODE_ANNOTATION_PREFIXES))
    ready = [item.get('status') for item in dig(node, 'status', 'conditions') or [] if item.get('type') == 'Ready']
    return {'name': metadata.get('name'), 'labels': metadata.get('labels') or {}, 'annotations': annotations,
            'spec': (node or {}).get('spec') or {}, 'ready': ready[0] if ready else None}


def _nns(state):
    current = dig(state, 'status', 'currentState') or {}
    interfaces = [dict((key, item.get(key)) for key in INTERFACE_KEYS if key in item) for item in current.get('interfaces') or []]
    routes = current.get('routes') or {}
    return {'name': name_of(state), 'interfaces': sorted(interfaces, key=lambda item: (item.get('name') or '', item.get('type') or '')),
            'routes': {'config': routes.get('config') or [], 'running': routes.get('running') or []},
            'handler': dig(state, 'status', 'handlerNmstateVersion')}


def _object(obj):
    """Metadata (without what changes on its own), spec, and a status without timestamps."""
    status = dict((obj or {}).get('status') or {})
    if 'conditions' in status:
        status['conditions'] = _conditions(status['conditions'])
    for key in ('lastSuccessfulUpdateTime', 'lastUpdated', 'observedGeneration'):
        status.pop(key, None)
    return {'metadata': _metadata(obj), 'spec': (obj or {}).get('spec'), 'status': status}


def _machine(machine):
    return {'metadata': _metadata(machine), 'spec': (machine or {}).get('spec'),
            'node': dig(machine, 'status', 'nodeRef', 'name'), 'phase': dig(machine, 'status', 'phase')}


def _machineset(machineset):
    spec = dict((machineset or {}).get('spec') or {})
    spec.pop('replicas', None)  # a scaled MachineSet changes its Machines and nodes, which are hashed themselves
    return {'metadata': _metadata(machineset), 'spec': spec}


def _sorted(items, key=name_of):
    return sorted(items or [], key=lambda item: key(item) or '')


def _vsphere(vsphere):
    if vsphere is None:
        return None
    return dict((key, value) for key, value in vsphere.items() if key != 'privileges')


def state_of(snapshot):
    """The parts of a preflight snapshot the steps decide from, in a canonical order (a plain dict)."""
    snapshot = snapshot or {}

    def listed(key, shape, sort_key=name_of):
        items = snapshot.get(key)
        return None if items is None else [shape(item) for item in _sorted(items, sort_key)]

    return {
        'nodes': [_node(node) for node in _sorted(snapshot.get('nodes'))],
        'nns': listed('nns', _nns),
        'nncps': listed('nncps', _object),
        'tuneds': listed('tuneds', _object),
        'machinesets': listed('machinesets', _machineset),
        'machines': listed('machines', _machine),
        'egressips': listed('egressips', _object),
        'ip_forwarding': dig(snapshot.get('network_operator'), 'spec', 'defaultNetwork', 'ovnKubernetesConfig', 'gatewayConfig'),
        'vsphere': _vsphere(snapshot.get('vsphere')),
    }


def step_config(variables, step_options=None, collection_version=None):
    """What the steps run with: the public variables they read and the step roles' options, and this release."""
    chosen = dict((key, value) for key, value in (variables or {}).items() if key in STEP_VARIABLES)
    return {'variables': chosen, 'steps': step_options or {}, 'collection': collection_version}


def fingerprint(snapshot, config):
    """'v1:<sha256>' of the steps' state in the snapshot and their configuration (step_config)."""
    text = json.dumps({'state': state_of(snapshot), 'config': config}, sort_keys=True, separators=(',', ':'), default=str)
    return 'v%d:%s' % (VERSION, hashlib.sha256(text.encode('utf-8')).hexdigest())


def converged(recorded, current):
    """Whether the recorded fingerprint (the Lease annotation; '' or None: none) is the current one."""
    return bool(recorded) and recorded == current
