# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vSphere failure domains: one OpenShift cluster over several vSphere clusters (possibly several datacenters).

Pure code, no I/O. The facts (openshift/api config/v1 ``VSpherePlatformFailureDomainSpec``, the CRD in
tests/twin/crds/infrastructures.config.openshift.io.yaml): ``Infrastructure.spec.platformSpec.vsphere.failureDomains[]``
has ``name``, ``region``, ``zone``, ``server`` (the vCenter) and ``topology.{datacenter, computeCluster, networks,
datastore, resourcePool, folder}``; ``computeCluster`` is a path ``/<datacenter>/host/<cluster>``, ``resourcePool``
``/<datacenter>/host/<cluster>/Resources[/...]``. The installer writes each Machine's providerSpec ``workspace``
(``server``, ``datacenter``, ``folder``, ``resourcePool``, ``datastore``) from its failure domain's topology, and the
vSphere cloud provider labels each Node ``topology.kubernetes.io/zone`` / ``region`` from the domain's zone and region
(the openshift-zone / openshift-region vCenter tags).

``resolve(infrastructure, entries, defaults)`` gives the domains the collection works with: every failure domain of the
Infrastructure, each with its datacenter and vSphere cluster from its topology unless its entry in
``egressip_vsphere.failure_domains`` overrides them, and the port group of ``egressip_vsphere.portgroup`` merged with the
entry's ``portgroup``. ``map_nodes`` puts each node in its domain: by its Machine's workspace first, then by its
zone/region labels; a node that matches no domain (or several) is a finding, never a guess.

A domain (dict): {'name', 'region', 'zone', 'server', 'datacenter', 'cluster', 'compute_cluster', 'resource_pool',
'folder', 'portgroup': {...}}.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig

ZONE_LABEL = 'topology.kubernetes.io/zone'
REGION_LABEL = 'topology.kubernetes.io/region'
MACHINE_ANNOTATION = 'machine.openshift.io/machine'
OPTION = 'egressip_vsphere.failure_domains'
OVERRIDES = ('datacenter', 'cluster')


def cluster_of_path(path):
    """The vSphere cluster name of a computeCluster path (``/DC0/host/DC0_C0`` -> ``DC0_C0``, host folders allowed)."""
    parts = [part for part in str(path or '').split('/') if part]
    return parts[-1] if len(parts) >= 3 and 'host' in parts[1:-1] else None


def infrastructure_domains(infrastructure):
    """The Infrastructure's failure domains as domain dicts (without port group), in its order; None when unknown."""
    items = _dig(infrastructure, 'spec', 'platformSpec', 'vsphere', 'failureDomains')
    if items is None:
        return None
    domains = []
    for item in items:
        topology = item.get('topology') or {}
        domains.append({'name': item.get('name'), 'region': item.get('region'), 'zone': item.get('zone'),
                        'server': item.get('server'), 'datacenter': topology.get('datacenter'),
                        'cluster': cluster_of_path(topology.get('computeCluster')),
                        'compute_cluster': topology.get('computeCluster'), 'resource_pool': topology.get('resourcePool'),
                        'folder': topology.get('folder')})
    return domains


def _merged_portgroup(default, override):
    merged = dict((key, value) for key, value in (default or {}).items() if value is not None)
    for key, value in (override or {}).items():
        if value is None:
            continue
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = dict(merged[key], **dict((k, v) for k, v in value.items() if v is not None))
        else:
            merged[key] = value
    return merged


def resolve(infrastructure, entries, defaults):
    """(domains, findings) for egressip_vsphere.failure_domains ``entries`` ([{name, datacenter, cluster, portgroup}]).

    defaults: {'datacenter', 'cluster', 'portgroup'} of egressip_vsphere's top level (the last fallback).
    Every Infrastructure failure domain is a domain (an Infrastructure domain without an entry takes its topology and
    the top-level port group). Without a readable Infrastructure (None) the entries are the domains. An entry the
    Infrastructure lacks is ``failure_domain_unknown``; a domain left without datacenter, cluster or port group name is
    ``failure_domain_incomplete``.
    """
    entries = [entry for entry in entries or [] if isinstance(entry, dict)]
    by_name = dict((entry.get('name'), entry) for entry in entries)
    known = infrastructure_domains(infrastructure)
    findings = []
    if known is None or not known:
        base = [{'name': entry.get('name'), 'region': None, 'zone': None, 'server': None, 'datacenter': None, 'cluster': None,
                 'compute_cluster': None, 'resource_pool': None, 'folder': None} for entry in entries]
    else:
        base = known
        names = set(domain['name'] for domain in known)
        for entry in entries:
            if entry.get('name') not in names:
                findings.append(catalogue_finding(
                    'failure_domain_unknown', '%s names failure domain %r; the Infrastructure has %s.'
                    % (OPTION, entry.get('name'), ', '.join(sorted(str(name) for name in names))),
                    objects=[{'kind': 'option', 'name': OPTION}]))
    domains = []
    for domain in base:
        entry = by_name.get(domain['name']) or {}
        resolved = dict(domain)
        for key in OVERRIDES:
            resolved[key] = entry.get(key) or domain.get(key) or (defaults or {}).get(key)
        resolved['portgroup'] = _merged_portgroup((defaults or {}).get('portgroup'), entry.get('portgroup'))
        if not resolved.get('compute_cluster') and resolved['datacenter'] and resolved['cluster']:
            resolved['compute_cluster'] = '/%s/host/%s' % (resolved['datacenter'], resolved['cluster'])
        missing = [what for what, value in (('datacenter', resolved['datacenter']), ('cluster', resolved['cluster']),
                                            ('portgroup.name', resolved['portgroup'].get('name'))) if not value]
        if missing:
            findings.append(catalogue_finding(
                'failure_domain_incomplete', 'failure domain %s has no %s (not in its %s entry, the Infrastructure topology or '
                'egressip_vsphere).' % (domain['name'], ', '.join(missing), OPTION),
                objects=[{'kind': 'option', 'name': OPTION}]))
        domains.append(resolved)
    return domains, findings


# --- node (and MachineSet) -> domain ---------------------------------------------------------------


def _pool_in_domain(pool, domain):
    pool = str(pool).rstrip('/')
    if domain.get('resource_pool') and pool == str(domain['resource_pool']).rstrip('/'):
        return True
    cluster_path = str(domain.get('compute_cluster') or '').rstrip('/')
    return bool(cluster_path) and pool.startswith(cluster_path + '/')


def workspace_domain(workspace, domains):
    """The one domain a providerSpec workspace (server, datacenter, resourcePool, folder) belongs to, else None.

    Server and datacenter must agree where both are known; the resource pool then decides (the domain's resourcePool,
    or a pool under its computeCluster). Without a resource pool, the datacenter and server decide only when one domain
    has them."""
    if not isinstance(workspace, dict) or not workspace:
        return None
    candidates = [domain for domain in domains
                  if (not workspace.get('server') or not domain.get('server') or workspace['server'] == domain['server'])
                  and (not workspace.get('datacenter') or workspace['datacenter'] == domain.get('datacenter'))]
    if workspace.get('resourcePool'):
        candidates = [domain for domain in candidates if _pool_in_domain(workspace['resourcePool'], domain)]
    return candidates[0] if len(candidates) == 1 else None


def label_domain(labels, domains):
    """The one domain whose zone (and region, where both are known) the node's topology labels name, else None."""
    zone = (labels or {}).get(ZONE_LABEL)
    if not zone:
        return None
    region = (labels or {}).get(REGION_LABEL)
    candidates = [domain for domain in domains if domain.get('zone') == zone
                  and (not region or not domain.get('region') or domain['region'] == region)]
    return candidates[0] if len(candidates) == 1 else None


def node_machine(node, machines):
    """The Machine of a Node: its machine.openshift.io/machine annotation, else the Machine whose nodeRef or
    providerID names it (the nodelink controller sets both)."""
    meta = node.get('metadata') or {}
    annotation = (meta.get('annotations') or {}).get(MACHINE_ANNOTATION) or ''
    provider_id = _dig(node, 'spec', 'providerID')
    for machine in machines or []:
        machine_meta = machine.get('metadata') or {}
        if annotation and annotation == '%s/%s' % (machine_meta.get('namespace'), machine_meta.get('name')):
            return machine
    for machine in machines or []:
        if _dig(machine, 'status', 'nodeRef', 'name') == meta.get('name'):
            return machine
        if provider_id and _dig(machine, 'spec', 'providerID') == provider_id:
            return machine
    return None


def machine_workspace(machine):
    return _dig(machine, 'spec', 'providerSpec', 'value', 'workspace')


def machineset_workspace(machineset):
    return _dig(machineset, 'spec', 'template', 'spec', 'providerSpec', 'value', 'workspace')


def node_domain(node, machines, domains):
    """(domain or None, how: 'workspace' | 'labels' | None) for one Node object."""
    machine = node_machine(node, machines)
    domain = workspace_domain(machine_workspace(machine), domains) if machine else None
    if domain is not None:
        return domain, 'workspace'
    domain = label_domain(_dig(node, 'metadata', 'labels'), domains)
    return (domain, 'labels') if domain is not None else (None, None)


def map_nodes(nodes, machines, domains):
    """({node name: domain name}, findings): each Node object in its domain; one failure_domain_node_unmapped per node
    that matches none."""
    mapping, unmapped = {}, []
    for node in nodes or []:
        name = _dig(node, 'metadata', 'name')
        domain, _how = node_domain(node, machines, domains)
        if domain is None:
            unmapped.append(node)
        else:
            mapping[name] = domain['name']
    names = ', '.join(str(domain['name']) for domain in domains)
    findings = [catalogue_finding(
        'failure_domain_node_unmapped',
        'node %s matches no failure domain of %s: %s' % (_dig(node, 'metadata', 'name'), names, _unmapped_reason(node, machines)),
        objects=[{'kind': 'Node', 'name': _dig(node, 'metadata', 'name')}]) for node in unmapped]
    return mapping, findings


def _unmapped_reason(node, machines):
    machine = node_machine(node, machines)
    labels = _dig(node, 'metadata', 'labels') or {}
    workspace = machine_workspace(machine) if machine else None
    if machine is None:
        where = 'no Machine'
    else:
        where = 'Machine %s with workspace %s' % (_dig(machine, 'metadata', 'name'), dict(
            (key, value) for key, value in sorted((workspace or {}).items()) if key in ('server', 'datacenter', 'resourcePool')))
    return '%s, zone label %r, region label %r.' % (where, labels.get(ZONE_LABEL), labels.get(REGION_LABEL))


def by_name(domains):
    return dict((domain['name'], domain) for domain in domains)


def machine_api_by_domain(machinesets, rows, domains):
    """({domain name: ([MachineSet], [Machine row])}, refusals): each MachineSet and Machine (row['machine']) by the domain
    its providerSpec workspace names; one that names none is a failure_domain_node_unmapped refusal."""
    groups = dict((domain['name'], ([], [])) for domain in domains)
    unmatched = []
    entries = [(0, 'MachineSet', obj, obj, machineset_workspace(obj)) for obj in machinesets]
    entries += [(1, 'Machine', row['machine'], row, machine_workspace(row['machine'])) for row in rows]
    for index, kind, obj, item, workspace in entries:
        domain = workspace_domain(workspace, domains)
        if domain is None:
            unmatched.append((kind, obj['metadata']['name'], workspace))
        else:
            groups[domain['name']][index].append(item)
    return groups, [catalogue_finding(
        'failure_domain_node_unmapped', '%s %s has workspace %s, which matches no failure domain (%s).'
        % (kind, name, dict((key, value) for key, value in sorted((workspace or {}).items())
                            if key in ('server', 'datacenter', 'resourcePool')), ', '.join(d['name'] for d in domains)),
        objects=[{'kind': kind, 'name': name}]) for kind, name, workspace in unmatched]
