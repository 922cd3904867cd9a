# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes and vCenter I/O around the pure parts of verify (_verify) and the failover drill (_drill).

Reads are one list per kind (Nodes, EgressIPs, NodeNetworkStates, Namespaces, probe Pods) and
the preflight's batched vCenter read (``_preflight_snapshot.read_vcenter``); every request
goes through ``K8sClient.call`` / ``VsphereClient`` (one client, one error format). Writes:
the probe pods (and an optional probe namespace), deleted again; merge patches of node
labels; in check mode label patches are sent with ``dryRun=All`` and no probe runs.
Waiting is polling with a configurable interval against a monotonic clock. Private module_util.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import uuid

from ansible_collections.ocp.egressip.plugins.module_utils.checks import drill as _drill
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients import parallel
from ansible_collections.ocp.egressip.plugins.module_utils.core import progress
from ansible_collections.ocp.egressip.plugins.module_utils.clients.parallel import Clock  # the waits of verify and the drill
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import kubernetes
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify as _verify
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_path as _verify_path
from ansible_collections.ocp.egressip.plugins.module_utils.checks import wire as _wire
from ansible_collections.ocp.egressip.plugins.module_utils.model.egressip_facts import is_egress_assignable
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot.cluster import read_vcenter
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot.failure_domains import node_domains

POD_LIST_MARGIN = 10  # seconds beyond the probe timeout before a pod that never finished is given up


# --- reads ---------------------------------------------------------------------------------------------

def _nns_by_node(snapshot):
    """({node: NodeNetworkState} or None, HTTP status when the kind could not be read (404 absent, 403 forbidden) or None)."""
    if 'nns' not in snapshot:
        return None, 403
    if snapshot['nns'] is None:
        return None, 404
    return dict(((item.get('metadata') or {}).get('name'), item) for item in snapshot['nns']), None


def read_cluster(k8s, with_nns=True):
    """(nodes, egressips, {node: NodeNetworkState} or None, notes): one list each."""
    kinds = ('egressips', 'nodes', 'nns') if with_nns else ('egressips', 'nodes')
    snapshot = kubernetes.read(k8s, kinds, optional=('nns',), forbidden_ok=('nns',))
    return cluster_of(snapshot) if with_nns else (snapshot['nodes'], snapshot['egressips'], None, [])


def cluster_of(read):
    """read_cluster's answer from a preflight snapshot of this run: the same lists, the same notes."""
    notes = []
    nns, status = _nns_by_node(read)
    if status:
        notes.append('NodeNetworkStates were not read (HTTP %s): the base address on each NIC was checked in host-cidrs only' % status)
    return read['nodes'], read['egressips'], nns, notes


def _forwarding_of(read):
    """(Tuned objects of the Node Tuning Operator's namespace, network operator) from a preflight snapshot; a kind it could
    not read fails as verify's own read of it would (HTTP 403 or 404, then noted)."""
    for key, kind in (('tuneds', kube.TUNEDS), ('network_operator', kube.NETWORK_OPERATOR)):
        if key not in read or read[key] is None:
            raise ModuleFailure('%s was not read' % kube.resource(kind), status=403 if key not in read else 404)
    tuneds = [item for item in read['tuneds'] if (item.get('metadata') or {}).get('namespace') == nn.TUNED_NAMESPACE]
    return tuneds, read['network_operator']


def read_nns(k8s):
    """({node: NodeNetworkState} or None when the kind cannot be read (HTTP 403/404), note or None): one list."""
    nns, status = _nns_by_node(kubernetes.read(k8s, ('nns',), optional=('nns',), forbidden_ok=('nns',)))
    return nns, ('NodeNetworkStates were not read (HTTP %s)' % status if status else None)


def relevant_nodes(nodes, egressips):
    """Nodes whose VMs verify reads: labelled egress nodes and nodes named in an EgressIP status."""
    hosting = set(_drill.assignments(egressips).values())
    return [node for node in nodes if (node.get('metadata') or {}).get('name') in hosting or is_egress_assignable(node)]


def read_vsphere(vcenter, datacenter, cluster, portgroup, nodes, facts=None):
    """The vSphere facts of verify: the run's one vCenter session (``vcenter()``), the preflight's batched read, converted by
    _verify_path.vsphere_facts. facts: what a preflight of this run read (snapshot.cluster.read_vcenter), used instead."""
    if facts:
        # preflight read the VMs of every node: keep those verify reads
        names = set((node.get('metadata') or {}).get('name') for node in nodes)
        vcenter = dict(facts, vms=[vm for vm in facts.get('vms') or [] if vm.get('node') in names])
    else:
        vcenter = read_vcenter(vcenter(), datacenter, cluster, nodes)
    vcenter.setdefault('datacenter', datacenter)
    return _verify_path.vsphere_facts(vcenter, portgroup, nodes)


def read_domains_vsphere(k8s, options, nodes):
    """With failure domains (options['failure_domains'], resolved): each node in its domain (one list of the Machines), each
    domain with nodes read with its datacenter, cluster and port group (or taken from the preflight's read of it)."""
    mapping, findings = node_domains(k8s, nodes, options['failure_domains'])
    read = dict((item.get('name'), item.get('vsphere')) for item in (options.get('facts') or {}).get('domains') or [])
    parts = []
    for domain in options['failure_domains']:
        members = [node for node in nodes if mapping.get((node.get('metadata') or {}).get('name')) == domain['name']]
        if members:
            portgroup = dict((key, domain['portgroup'].get(key)) for key in ('name', 'switch_type', 'switch', 'vlan_id'))
            facts = read_vsphere(options['vcenter'], domain['datacenter'], domain['cluster'], portgroup, members, read.get(domain['name']))
            parts.append((domain['name'], [node['metadata']['name'] for node in members], facts))
    return _verify_path.domain_facts(parts, findings)


def read_verify_snapshot(k8s, vsphere_options=None, read=None):
    """The verify snapshot: Kubernetes lists, and vCenter when ``vsphere_options`` = {vcenter, datacenter, cluster, portgroup}.
    ``read``: a preflight snapshot of this run (snapshot.cluster.read_cluster) whose lists serve instead of reading them again."""
    nodes, egressips, nns, notes = read_cluster(k8s) if read is None else cluster_of(read)
    vsphere = None
    if vsphere_options and vsphere_options.get('failure_domains'):
        vsphere = read_domains_vsphere(k8s, vsphere_options, relevant_nodes(nodes, egressips))
    elif vsphere_options:
        vsphere = read_vsphere(vsphere_options['vcenter'], vsphere_options['datacenter'], vsphere_options['cluster'],
                               vsphere_options['portgroup'], relevant_nodes(nodes, egressips), vsphere_options.get('facts'))
    snapshot = _verify.build_snapshot(nodes, egressips, nns=nns, vsphere=vsphere)
    snapshot['notes'] = notes
    snapshot['forwarding'] = read_forwarding(k8s, notes, read)
    return snapshot


def read_forwarding(k8s, notes, read=None):
    """_verify_path.forwarding_facts from the nodes' Profiles, the Tuned objects and the network operator (one request each);
    None, with a note, when the Node Tuning Operator's API cannot be read. ``read``: a preflight snapshot of this run, whose
    Tuned objects (of the operator's namespace) and network operator serve; the Profiles are read."""
    try:
        profiles = kube.list_objects(k8s, kube.PROFILES, namespace=nn.TUNED_NAMESPACE)
        if read is None:
            tuneds = kube.list_objects(k8s, kube.TUNEDS, namespace=nn.TUNED_NAMESPACE)
            operator = kube.get_object(k8s, kube.NETWORK_OPERATOR, 'cluster')
        else:
            tuneds, operator = _forwarding_of(read)
    except ModuleFailure as failure:
        if failure.details.get('status') not in (403, 404):
            raise
        notes.append('Node Tuning Operator Profiles were not read (HTTP %s): IP forwarding on the secondary NICs was not checked'
                     % failure.details.get('status'))
        return None
    return _verify_path.forwarding_facts(profiles, tuneds, operator)


def list_egressips(k8s):
    return kube.list_objects(k8s, kube.EGRESSIPS)


# --- the wire: probe pods ----------------------------------------------------------------------------

def _not_run(egressip, reason, check_mode=False, namespace=None):
    return {'egressip': egressip, 'namespace': namespace, 'pod': None, 'phase': None, 'outcome': 'not_run', 'source_ip': None,
            'log': None, 'reason': reason, 'check_mode': check_mode}


def run_probes(k8s, egressips, wire, check_mode, clock=None, interval=1.0):
    """One round of probe pods (``wire['probes']`` per object), their outcomes, and clean-up.

    wire: {'echo_target', 'image', 'timeout', 'probes', 'namespaces': {object: namespace}, 'create_namespace'}.
    A probe that cannot be created or never starts is ``not_run``; nothing here fails the module
    except a failure to list pods (the API itself is unusable then). The round's API writes (probe pods and namespaces
    created and deleted) are counted in ``writes`` of its first outcome (0 on the others), so that their sum over the
    outcomes is what a "0 writes" claim must account for.
    """
    names = [egressip['metadata']['name'] for egressip in egressips]
    if check_mode:
        return [_not_run(name, 'check mode: no probe pod is created', check_mode=True) for name in names]
    if not egressips:
        return []
    clock = clock or Clock()
    run_id = uuid.uuid4().hex[:12]
    namespaces = kube.list_objects(k8s, kube.NAMESPACES)
    outcomes, bodies, created_namespaces = [], [], []
    for egressip in egressips:
        name = egressip['metadata']['name']
        namespace, namespace_body, reason = _wire.probe_namespace(egressip, namespaces, (wire.get('namespaces') or {}).get(name),
                                                                  wire.get('create_namespace'))
        if namespace_body is not None:
            reason = _create_namespace(k8s, namespace_body)
            if reason is None:
                created_namespaces.append(namespace)
                namespaces.append(namespace_body)
        if reason:
            outcomes.append(_not_run(name, reason, namespace=namespace))
            continue
        for target, family in _wire.echo_targets(wire, egressip):
            for _index in range(wire.get('probes') or 1):
                body, reason = _wire.probe_pod(egressip, namespace, target, wire['image'], run_id, wire['timeout'], family)
                if reason:
                    outcomes.append(_not_run(name, reason, namespace=namespace))
                    break
                bodies.append(body)
    writes = [len(created_namespaces)]
    try:
        outcomes += _run_pods(k8s, bodies, run_id, wire['timeout'], clock, interval, writes)
    finally:
        writes.append(_clean_up(k8s, bodies, run_id, created_namespaces))
    for index, outcome in enumerate(outcomes):
        outcome['writes'] = sum(writes) if index == 0 else 0
    return outcomes


def _create_namespace(k8s, body):
    try:
        kube.create(k8s, kube.NAMESPACES, body, False)
    except ModuleFailure as failure:
        if failure.details.get('status') == 409:
            return None
        return 'the probe namespace could not be created: %s' % failure.msg
    return None


def _create_pod(k8s, body):
    """(created pod or None, failure text or None): a probe that cannot be created is reported, not raised."""
    namespace = body['metadata']['namespace']
    try:
        return k8s.request('create', 'pods in %s' % namespace, kube.path(kube.PODS, namespace=namespace), body=body), None
    except ModuleFailure as failure:
        return None, failure.msg


def _run_pods(k8s, bodies, run_id, timeout, clock, interval, writes):
    since = _list_version(k8s, run_id)   # before the creates: the watch sees each probe pod's every change
    created, _failures = parallel.run_parallel([lambda body=body: _create_pod(k8s, body) for body in bodies])
    outcomes = [_not_run(body['metadata']['labels'][_wire.PROBE_OBJECT_LABEL], 'the probe pod could not be created: %s' % failure,
                         namespace=body['metadata']['namespace'])
                for body, (_pod, failure) in zip(bodies, created) if failure]
    count = len([pod for pod, _failure in created if pod is not None])
    writes.append(count)
    if not count:
        return outcomes
    started = clock.now()
    pods = _watch_pods(k8s, run_id, count, timeout + POD_LIST_MARGIN, since) if since else None
    if pods is None:   # the lists wait only for what is left of the probe timeout (a watch that ran out used it all)
        pods = _wait_pods(k8s, run_id, count, max(0, timeout - (clock.now() - started)), clock, interval)
    logs, _failures = parallel.run_parallel([lambda pod=pod: _log(k8s, pod) for pod in pods])
    return outcomes + [_wire.probe_outcome(pod, log, timeout) for pod, log in zip(pods, logs)]


def _run_selector(run_id):
    """The label selector of one run's probe pods."""
    return '%s=%s' % (_wire.PROBE_RUN_LABEL, run_id)


def _list_probe_pods(k8s, run_id):
    return kube.list_objects(k8s, kube.PODS, label_selector=_run_selector(run_id))


FIRST_POD_POLL = 0.2


def _finished(pods):
    return [pod for pod in pods if (pod.get('status') or {}).get('phase') in ('Succeeded', 'Failed')]


def _by_name(pods):
    return sorted(pods, key=lambda pod: (pod['metadata'].get('namespace'), pod['metadata'].get('name')))


def _list_version(k8s, run_id):
    """The resourceVersion of an (empty) list of the run's probe pods: where a watch of their changes starts."""
    answer = k8s.request('list', 'pods', kube.path(kube.PODS), query={'labelSelector': _run_selector(run_id), 'limit': 1})
    return ((answer or {}).get('metadata') or {}).get('resourceVersion')


def _watch_pods(k8s, run_id, count, seconds, since):
    """The probe pods once all ``count`` have finished, from one watch of the run's pods from ``since`` (a list's
    resourceVersion taken before they were created, as the API documents a watch to start), or None - the watch refused
    (no ``watch`` on pods: the shipped ClusterRoles grant it, preflight does not require it), expired (410) or ended first -
    and the caller lists instead."""
    seen = {}
    query = {'labelSelector': _run_selector(run_id), 'resourceVersion': str(since)}
    try:
        for event in k8s.watch('pods', kube.path(kube.PODS), query, seconds):
            pod = event.get('object') or {}
            if event.get('type') == 'ERROR' or not pod.get('metadata'):
                return None
            key = (pod['metadata'].get('namespace'), pod['metadata'].get('name'))
            if event.get('type') == 'DELETED':
                seen.pop(key, None)
                continue
            seen[key] = pod
            progress.note('the wire probe pods of run %s to finish (%d of %d finished; watching them)' % (run_id, len(_finished(seen.values())), count))
            if len(_finished(seen.values())) >= count:
                return _by_name(seen.values())
    except ModuleFailure:
        return None
    return None


def _wait_pods(k8s, run_id, count, timeout, clock, interval):
    deadline = clock.now() + timeout + POD_LIST_MARGIN
    tries = 0
    while True:
        pods = _list_probe_pods(k8s, run_id)
        finished = _finished(pods)
        progress.note('the wire probe pods of run %s to finish (%d of %d finished; probe timeout %d s)'
                      % (run_id, len(finished), count, timeout))
        if len(finished) >= count or clock.now() >= deadline:
            return _by_name(pods)
        # a probe pod takes about a second: the first looks come sooner (0.2 s, doubling up to the interval)
        clock.sleep(min(interval, FIRST_POD_POLL * 2 ** tries))
        tries += 1


def _log(k8s, pod):
    if (pod.get('status') or {}).get('phase') not in ('Succeeded', 'Failed'):
        return None
    name, namespace = pod['metadata']['name'], pod['metadata']['namespace']
    return k8s.request('get', 'pods/log %s/%s' % (namespace, name), kube.path(kube.PODS, name, namespace, 'log'), text=True)


def _clean_up(k8s, bodies, run_id, namespaces):
    """Delete the probe pods (one request per namespace) and the probe namespaces this run created; errors are ignored.
    Returns the number of delete requests that succeeded."""
    selector = _run_selector(run_id)
    deleted = 0
    for namespace in sorted(set(body['metadata']['namespace'] for body in bodies)):
        try:
            k8s.request('delete', 'pods in %s' % namespace, kube.path(kube.PODS, namespace=namespace),
                        query={'labelSelector': selector, 'gracePeriodSeconds': 0})
            deleted += 1
        except ModuleFailure:
            pass  # activeDeadlineSeconds ends a leftover pod; its labels name the run
    for namespace in namespaces:
        try:
            kube.delete(k8s, kube.NAMESPACES, namespace, False)
            deleted += 1
        except ModuleFailure:
            pass
    return deleted


def probe_until_seen(k8s, targets, wire, started, deadline, clock, interval):
    """Repeat probe rounds until the echo target has seen each moved egress IP as a source, or the deadline.

    targets: {object name: {'ips': [the moved IPs], 'get': callable returning the current EgressIP}}. An object's flows
    spread over its IPs, so each round runs at least two probes per IP of the object. Returns one entry per object:
    {'egressip', 'ips', 'seen': {ip: seconds since ``started``}, 'ok', 'seconds' (when the last moved IP was first
    seen), 'source_ip' (last answer), 'expected', 'attempts' (probe pods), 'last' (last answer or failure)}.
    """
    results = dict((name, {'egressip': name, 'ips': sorted(target['ips']), 'seen': {}, 'ok': False, 'seconds': None,
                           'source_ip': None, 'expected': [], 'attempts': 0, 'last': None}) for name, target in targets.items())
    while True:
        waiting = [name for name in sorted(results) if not results[name]['ok']]
        progress.note('the echo target to see the moved egress IPs of %s as sources (%d s left)'
                      % (progress.shown('EgressIP %s' % name for name in waiting), max(0, deadline - clock.now())))
        current = dict((name, targets[name]['get']()) for name in waiting)
        objects = [obj for obj in current.values() if obj is not None]
        per_round = max([wire.get('probes') or 1] + [2 * len((obj.get('spec') or {}).get('egressIPs') or []) for obj in objects])
        probes = run_probes(k8s, objects, dict(wire, probes=per_round), False, clock, interval)
        elapsed = clock.now() - started
        for probe in probes:
            item = results[probe['egressip']]
            item['attempts'] += 1
            item['expected'] = sorted(ip for (_name, ip), _node in _drill.assignments([current[probe['egressip']]]).items())
            item['source_ip'] = probe.get('source_ip')
            item['last'] = probe.get('source_ip') or probe.get('reason') or probe.get('log')
            if probe['outcome'] == 'answered' and probe.get('source_ip') in item['expected']:
                item['seen'].setdefault(probe['source_ip'], elapsed)
        for item in results.values():
            if not item['ok'] and all(ip in item['seen'] for ip in item['ips']):
                item.update(ok=True, seconds=max(item['seen'][ip] for ip in item['ips']) if item['ips'] else elapsed)
        if all(item['ok'] for item in results.values()) or clock.now() >= deadline:
            break
        clock.sleep(interval)
    return [results[name] for name in sorted(results)]


# --- labels and waits ------------------------------------------------------------------------------

def patch_nodes(k8s, names, body, check_mode):
    """The same merge patch on several nodes, in parallel; fails naming each node that failed."""
    results, failures = parallel.run_parallel([lambda name=name: kube.patch(k8s, kube.NODES, name, body, check_mode) for name in names])
    parallel.raise_failures(failures, len([result for result in results if result is not None]), 'node label writes')


def watch_moves(k8s, tracker, started, timeout, interval, clock):
    """Poll the EgressIPs until every watched IP is on another node, or the timeout; returns the last list read."""
    deadline = started + timeout
    while True:
        egressips = list_egressips(k8s)
        now = clock.now()
        if tracker.observe(_drill.assignments(egressips), now - started) or now >= deadline:
            return egressips
        progress.note('%s to move to another node (wait_timeout %d s)'
                      % (progress.shown('%s of EgressIP %s (on %s)' % (ip, name, tracker.watched[(name, ip)])
                                        for name, ip in tracker.pending()), timeout))
        clock.sleep(interval)


def watch_still(k8s, before, seconds, interval, clock, keys=None):
    """Poll the EgressIPs for ``seconds`` and return (moves seen, seconds watched): nothing should move."""
    started = clock.now()
    moves = {}
    progress.note('%d s of EgressIP assignments that should not change (observe_seconds)' % seconds)
    while True:
        current = _drill.assignments(list_egressips(k8s))
        for move in _drill.unexpected_moves(before, current, keys):
            moves.setdefault((move['egressip'], move['ip']), move)
        elapsed = clock.now() - started
        if elapsed >= seconds:
            return [moves[key] for key in sorted(moves)], elapsed
        clock.sleep(min(interval, max(seconds - elapsed, 0.0)))
