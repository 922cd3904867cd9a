# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one read preflight (and the support report) makes: the snapshot `_preflight.run_checks` takes.

``config_argument_spec()`` is the requested configuration as module options (documented by the doc
fragment ``ocp.egressip.egressip_config``), ``requested_config(params)`` turns them back into the shape of
the public variables, and ``read_snapshot(module)`` makes the whole read for a module that has them.

Kubernetes: the one reader (kubernetes.read), one list request per kind whatever the cluster size.
vCenter: a fixed number of batched PropertyCollector reads (datacenters; cluster, hosts and switches; host network systems; the
VM index; the node VMs' devices; opaque networks and port group backing), never one per VM.

Every kind but the Nodes is optional to preflight: a kind whose API is not served (HTTP 404: CRD absent) is None,
a kind the credentials may not read (HTTP 403) is left out and named in `unreadable`, so the checks that
need it are skipped with a finding instead of failing the whole preflight.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.ocp.egressip.plugins.module_utils.clients.pyvmomi import vim  # pyVmomi on first use

from ansible_collections.ocp.egressip.plugins.module_utils.clients import parallel
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.core.option_specs import (
    failure_domains_argument_spec,
    objects_argument_spec,
    portgroup_argument_spec,
)
from ansible_collections.ocp.egressip.plugins.module_utils.model import failure_domains as _failure_domains
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import kubernetes
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import vm_uuid_from_provider_id
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import argument_spec as network_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vcenter import (
    find_datacenter,
    index_vms,
    read_cluster_network,
    read_privileges,
    read_vm_nics,
    select_vms,
)

# what preflight reads, in this order (keys of kube.KINDS); every kind but the Nodes may be absent or unreadable
PREFLIGHT_KINDS = ('nodes', 'namespaces', 'pods', 'infrastructure', 'network_config', 'network_operator', 'cluster_version',
                   'egressips', 'nncps', 'nmstates', 'nns', 'tuneds', 'machinesets', 'machines')
REQUIRED = ('nodes',)
VCENTER_NEEDS = ('nodes', 'infrastructure')  # read before vCenter: its VMs are the Nodes', its failure domains the Infrastructure's


def read_cluster(k8s, skip=(), only=None):
    """The Kubernetes part of the snapshot: one list per kind; `skip` names snapshot keys not to read, `only` the keys to
    read (all of PREFLIGHT_KINDS by default)."""
    kinds = [key for key in PREFLIGHT_KINDS if key not in skip and (only is None or key in only)]
    optional = [key for key in kinds if key not in REQUIRED]
    return kubernetes.read(k8s, kinds, optional=optional, forbidden_ok=optional)


def _node_selectors(nodes):
    selectors = []
    for node in nodes or []:
        uuid = vm_uuid_from_provider_id((node.get('spec') or {}).get('providerID'))
        if uuid:
            selectors.append({'by': 'uuid', 'value': uuid, 'node': (node.get('metadata') or {}).get('name')})
    return selectors


def _nsx_facts(client, datacenter):
    """Opaque (NSX-T) networks and the backing type of every distributed port group, in one read."""
    records = client.retrieve_view(datacenter.ref, [(vim.OpaqueNetwork, ['name', 'summary']),
                                                    (vim.dvs.DistributedVirtualPortgroup, ['config'])],
                                   'reading the NSX backing of the networks of datacenter %s' % datacenter.props.get('name'))
    opaque, backing = [], {}
    for record in records:
        if isinstance(record.ref, vim.OpaqueNetwork):
            summary = record.props.get('summary')
            opaque.append({'name': record.props.get('name'), 'type': getattr(summary, 'opaqueNetworkType', None)})
        else:
            config = record.props.get('config')
            if config is not None and getattr(config, 'backingType', None):
                backing[config.key] = config.backingType
    return opaque, backing


def read_vcenter(client, datacenter_name, cluster_name, nodes, privileges=None):
    """The vCenter part of the snapshot for one datacenter and vSphere cluster and the VMs behind `nodes`; with
    `privileges` ({'datacenter'|'host'|'vm': privilege ids}, checks/permissions.vcenter_privileges) whether this session holds them.

    A datacenter or cluster that does not exist is reported in `not_found` (a finding), not raised.
    """
    try:
        datacenter = find_datacenter(client, datacenter_name)
        network = read_cluster_network(client, datacenter, cluster_name)
    except ModuleFailure as failure:
        if failure.details.get('reason') != 'not_found':
            raise
        return {'datacenter': None, 'cluster': None, 'not_found': failure.msg}
    selected, _missing = select_vms(index_vms(client, datacenter), _node_selectors(nodes))
    vms = read_vm_nics(client, datacenter, selected, network['portgroups_by_key'], network['host_names']) if selected else []
    opaque, backing = _nsx_facts(client, datacenter)
    switches = network['distributed_switches']
    for switch in switches:
        for portgroup in switch.get('portgroups') or []:
            portgroup['backing_type'] = backing.get(portgroup.get('key'))
    about = getattr(client.content, 'about', None)
    checked = read_privileges(client, privileges, _entities(client, datacenter, network['hosts'], vms)) if privileges else None
    return {
        'privileges': checked,
        'about': getattr(about, 'fullName', None),
        'datacenter': datacenter.props.get('name'),
        'cluster': network['cluster']['name'],
        'not_found': None,
        'hosts': network['hosts'],
        'distributed_switches': switches,
        'opaque_networks': opaque,
        'vms': vms,
    }


def _entities(client, datacenter, hosts, vms):
    stub = getattr(client.service_instance, '_stub', None)
    return {'datacenter': [(datacenter.props.get('name'), datacenter.ref)],
            'host': [(host['name'], vim.HostSystem(host['moid'], stub)) for host in hosts],
            'vm': [(vm['name'], vim.VirtualMachine(vm['moid'], stub)) for vm in vms]}


# --- the requested configuration as module options, and the whole read ------------------------------

# The EgressModule options of a module whose options are config_argument_spec()'s (preflight, egressip_support_report):
# the vCenter checks need both names, the address checks netaddr, and the run only reads.
CONFIG_MODULE = dict(required_together=[('datacenter', 'cluster')], libraries=('netaddr',), supports_check_mode=True)


def config_argument_spec():
    """The options of the public variables file (doc fragment ``ocp.egressip.egressip_config``)."""
    return dict(
        acknowledge_unsupported=dict(type='bool', default=False),
        datacenter=dict(type='str'),
        cluster=dict(type='str'),
        portgroup=portgroup_argument_spec(),
        accept_untested_nsx=dict(type='bool', default=False),
        failure_domains=failure_domains_argument_spec(),
        network=network_argument_spec(),
        nodes=dict(type='dict', options=dict(selector=dict(type='dict', default={}))),
        objects=objects_argument_spec(required=('egress_ips', 'namespace_selector'), default=[]),
        read_pods=dict(type='bool', default=True),
    )


def options_from_variables(variables):
    """The configuration options of ``config_argument_spec()`` from the public variables (already checked and
    converted by ``_variables_schema.check``): the shape Ansible would give those options, defaults included."""
    vsphere = variables.get('egressip_vsphere') or {}
    portgroup = vsphere.get('portgroup') or None
    if portgroup is not None:
        portgroup = dict((key, portgroup.get(key)) for key in ('name', 'switch', 'vlan_id'))
        portgroup['switch_type'] = (vsphere.get('portgroup') or {}).get('switch_type') or 'standard'
    network = variables.get('egressip_network') or None
    if network is not None:
        network = dict((key, network.get(key)) for key in ('cidr', 'gateway', 'node_address_range', 'route_metric', 'ipv6'))
        network['ip_forwarding'] = (variables['egressip_network'].get('ip_forwarding') or 'per_interface')
    nodes = variables.get('egressip_nodes') or {}
    objects = [dict((key, entry.get(key)) for key in ('name', 'egress_ips', 'namespace_selector', 'pod_selector'))
               for entry in variables.get('egressip_objects') or []]
    return {
        'acknowledge_unsupported': bool(variables.get('egressip_acknowledge_unsupported')),
        'datacenter': vsphere.get('datacenter'), 'cluster': vsphere.get('cluster'), 'portgroup': portgroup,
        'accept_untested_nsx': bool(vsphere.get('accept_untested_nsx')), 'network': network,
        'nodes': {'selector': nodes['selector']} if 'selector' in nodes else None, 'objects': objects,
        'failure_domains': [dict((key, entry.get(key)) for key in ('name', 'datacenter', 'cluster', 'portgroup'))
                            for entry in vsphere.get('failure_domains') or []],
    }


def requested_config(params):
    """The requested configuration in the shape of the public variables schema (without the egressip_ prefix)."""
    return {
        'acknowledge_unsupported': params['acknowledge_unsupported'],
        'vsphere': {'datacenter': params['datacenter'], 'cluster': params['cluster'], 'portgroup': params['portgroup'] or {},
                    'accept_untested_nsx': params['accept_untested_nsx'], 'failure_domains': params.get('failure_domains') or []},
        'network': dict((key, value) for key, value in (params['network'] or {}).items() if value is not None),
        'nodes': params['nodes'] or {},
        'objects': params['objects'],
        'variables': params.get('variables'),
    }


def read_snapshot(module, privileges=None):
    """The whole snapshot for a module with ``config_argument_spec()`` and the nested ``vsphere`` connection.

    Pods are read only when objects are requested (and read_pods); vCenter only with datacenter and cluster, and with
    ``privileges`` ({'datacenter'|'host'|'vm': privilege ids}) whether the session holds them.
    """
    params = module.params
    skip = () if params['read_pods'] and params['objects'] else ('pods',)
    reads_vcenter = bool(params.get('failure_domains') or (params['datacenter'] and params['cluster']))
    if not reads_vcenter:
        snapshot = read_cluster(module.k8s, skip=skip)
        snapshot.update(vsphere=None, config=requested_config(params))
        return snapshot
    # the vCenter read needs the Nodes (which VMs) and the Infrastructure (failure domains): those first, then the
    # vCenter read in a thread beside the other kinds (two servers answering at once; each client stays in one thread)
    snapshot = read_cluster(module.k8s, only=VCENTER_NEEDS)
    if params.get('failure_domains'):
        vcenter = domains_vcenter_reader(module, params, snapshot, privileges)
    else:
        client = module.vcenter(reason='to check vCenter (datacenter and cluster given)')

        def vcenter():
            return read_vcenter(client, params['datacenter'], params['cluster'], snapshot['nodes'], privileges)
    vsphere, others = parallel.run_beside(vcenter, lambda: read_cluster(module.k8s, skip=tuple(skip) + VCENTER_NEEDS))
    unreadable = dict(snapshot['unreadable'], **others.pop('unreadable'))
    snapshot.update(others, unreadable=unreadable, vsphere=vsphere, config=requested_config(params))
    return snapshot


def domains_vcenter_reader(module, params, snapshot, privileges=None):
    """With failure domains: a function (no arguments) that reads each domain's datacenter and cluster (one session)
    and returns the union as the snapshot's ``vsphere`` (hosts, switches, VMs), with ``domains`` [{name, datacenter,
    cluster, portgroup, vsphere: its own read}] and ``domain_findings`` (failure domains unknown or incomplete); it
    returns None when no domain can be read. The domains are resolved and the session opened here, before it is called."""
    defaults = {'datacenter': params['datacenter'], 'cluster': params['cluster'], 'portgroup': params['portgroup'] or {}}
    domains, findings = _failure_domains.resolve(snapshot.get('infrastructure'), params['failure_domains'], defaults)
    readable = [domain for domain in domains if domain['datacenter'] and domain['cluster']]
    if not readable:
        nothing = None if not findings else {'not_found': None, 'domains': [], 'domain_findings': findings, 'hosts': [], 'vms': []}
        return lambda: nothing
    client = module.vcenter(reason='to check vCenter (failure domains given)')
    return lambda: _read_domains(client, readable, findings, snapshot['nodes'], privileges)


def _read_domains(client, readable, findings, nodes, privileges):
    merged = {'privileges': None, 'about': None, 'datacenter': None, 'cluster': None, 'not_found': None, 'hosts': [],
              'distributed_switches': [], 'opaque_networks': [], 'vms': [], 'domains': [], 'domain_findings': findings}
    seen = {'hosts': set(), 'distributed_switches': set(), 'opaque_networks': set(), 'vms': set()}
    keys = {'hosts': 'name', 'distributed_switches': 'name', 'opaque_networks': 'name', 'vms': 'moid'}
    for domain in readable:
        read = read_vcenter(client, domain['datacenter'], domain['cluster'], nodes, privileges)
        merged['domains'].append(dict(domain, vsphere=read))
        if read.get('not_found'):
            continue
        for key in keys:
            for item in read.get(key) or []:
                if item.get(keys[key]) not in seen[key]:
                    seen[key].add(item.get(keys[key]))
                    merged[key].append(item)
        if read.get('privileges'):
            merged['privileges'] = merged['privileges'] or {'user': read['privileges'].get('user'), 'missing': []}
            merged['privileges']['missing'] += [item for item in read['privileges'].get('missing') or []
                                                if item not in merged['privileges']['missing']]
        merged['about'] = merged['about'] or read.get('about')
    found = [item['vsphere'] for item in merged['domains'] if not item['vsphere'].get('not_found')]
    merged['datacenter'] = ', '.join(sorted(set(read['datacenter'] for read in found))) or None
    merged['cluster'] = ', '.join(read['cluster'] for read in found) or None
    if not found:
        merged['not_found'] = '; '.join('failure domain %s: %s' % (item['name'], item['vsphere']['not_found']) for item in merged['domains'])
    return merged
