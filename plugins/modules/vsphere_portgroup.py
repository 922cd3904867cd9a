#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: vsphere_portgroup
short_description: The egress port group on every host of a vSphere cluster, or on a distributed switch
version_added: 0.1.0
description:
  - With O(switch_type=standard), ensures the port group on the named standard vSwitch of B(every host) of the
    vSphere cluster (or of the hosts listed in O(hosts)), with the same name and VLAN everywhere. DRS, vMotion
    and HA can move a node VM to any host of the cluster; a host without the port group leaves the moved NIC
    without a network. A host that lacks the vSwitch is an error naming the host, and then nothing is written on any host.
  - With O(switch_type=distributed), ensures a distributed port group on the named distributed switch; changes
    are sent with the port group's C(configVersion), so a concurrent edit in vCenter fails instead of being overwritten.
  - Only the options you set are compared and changed. The security policy (promiscuous mode, MAC address changes,
    forged transmits) stays as the switch has it unless you set it, and settings made by hand (teaming, traffic
    shaping, number of ports, ...) are kept. This avoids the trap of modules whose defaults overwrite hand-made settings.
  - With O(state=absent) the port group is removed, but only when no VM NIC uses it, unless O(force=true); the
    refusal lists the VMs.
  - With O(failure_domains), the port group of each failure domain (the top-level options merged with the domain's
    overrides) on the hosts of that domain's vSphere cluster (standard) or on that domain's switch (distributed), all
    in one vCenter session; every domain is planned and checked before anything is written on any.
requirements:
  - pyvmomi >= 9.0.0
options:
  name:
    description:
      - Name of the port group.
    type: str
    required: true
    aliases: [portgroup]
  switch_type:
    description:
      - V(standard) for a port group on a standard vSwitch of each host, V(distributed) for a distributed port group.
    type: str
    choices: [standard, distributed]
    required: true
  switch:
    description:
      - Name of the standard vSwitch (for example C(vSwitch1)) or of the distributed switch.
    type: str
    required: true
  cluster:
    description:
      - The vSphere cluster whose every host gets the standard port group.
      - With O(hosts), the hosts must belong to this cluster.
      - One of O(cluster) or O(hosts) is required with O(switch_type=standard).
    type: str
  hosts:
    description:
      - ESXi host names to place the standard port group on, instead of (or within) every host of O(cluster).
    type: list
    elements: str
    default: []
  vlan_id:
    description:
      - VLAN id, 0 to 4094 (0 is untagged). Compared and changed only when set; a new port group gets 0 when it is not set.
    type: int
  security:
    description:
      - Security policy of the port group. Each option is compared and changed only when set; unset options stay as
        they are (a new port group inherits them from its switch).
      - The egress IP is an extra address on the vNIC's own MAC, so the default Reject/Reject/Reject is expected to work.
    type: dict
    suboptions:
      promiscuous:
        description: Allow promiscuous mode.
        type: bool
      mac_changes:
        description: Allow MAC address changes.
        type: bool
      forged_transmits:
        description: Allow forged transmits.
        type: bool
  port_binding:
    description:
      - Port binding of a distributed port group (V(static) is vSphere's default). Distributed only.
    type: str
    choices: [static, ephemeral]
  num_ports:
    description:
      - Number of ports of a distributed port group (a new one gets 8). Distributed only.
    type: int
  elastic:
    description:
      - Whether vSphere adds ports to a static distributed port group as needed (a new one is elastic). Distributed only.
    type: bool
  state:
    description:
      - V(present) creates or updates the port group; V(absent) removes it.
    type: str
    choices: [present, absent]
    default: present
  force:
    description:
      - With O(state=absent), remove the port group even while VM NICs use it (those NICs lose their network).
    type: bool
    default: false
  timeout:
    description:
      - Seconds to wait for a distributed port group task.
    type: int
    default: 300
extends_documentation_fragment:
  - ocp.egressip.vsphere_datacenter
  - ocp.egressip.cluster_lock.nested
  - ocp.egressip.failure_domains
  - ocp.egressip.vsphere_auth
  - ocp.egressip.k8s_auth.nested
  - ocp.egressip.progress.notes
  - ocp.egressip.common
attributes:
  check_mode:
    details: Reads vCenter, reports what would change, writes nothing.
  diff_mode:
    support: full
    details: The port group before and after, per host (standard) or on its switch (distributed).
notes:
  - Standard port groups are read from each host's network system (C(networkInfo)).
  - For a standard port group the security values compared are the effective ones (C(computedPolicy)); a changed
    value is written into the port group's own policy, everything else in that policy is sent back unchanged.
seealso:
  - module: ocp.egressip.vsphere_vm_nic
  - module: ocp.egressip.vsphere_network_info
'''

EXAMPLES = r'''
- name: Distributed port group for the egress network, VLAN 120
  ocp.egressip.vsphere_portgroup:
    datacenter: DC1
    name: ocp-egress-120
    switch_type: distributed
    switch: DSwitch1
    vlan_id: 120

- name: The same as a standard port group on vSwitch1 of every host of the cluster
  ocp.egressip.vsphere_portgroup:
    datacenter: DC1
    cluster: Cluster1
    name: ocp-egress-120
    switch_type: standard
    switch: vSwitch1
    vlan_id: 120
    security:
      forged_transmits: false

- name: Remove it once no VM uses it
  ocp.egressip.vsphere_portgroup:
    datacenter: DC1
    cluster: Cluster1
    name: ocp-egress-120
    switch_type: standard
    switch: vSwitch1
    state: absent
'''

RETURN = r'''
changed:
  description: Whether the port group was (or, in check mode, would be) created, changed or removed.
  returned: always
  type: bool
portgroup:
  description: What was done.
  returned: always
  type: dict
  contains:
    name:
      description: Port group name.
      type: str
    switch_type:
      description: C(standard) or C(distributed).
      type: str
    switch:
      description: vSwitch or distributed switch name.
      type: str
    action:
      description: C(create), C(update), C(remove), C(none) (distributed, or overall for standard).
      type: str
    changes:
      description: The options changed and their new values (distributed).
      type: dict
    hosts:
      description: Per host, C(host), C(action) and C(changes) (standard).
      type: list
      elements: dict
    key:
      description: The distributed port group key (also its moid), when it exists.
      type: str
    attached:
      description: With O(state=absent), the VM NICs (C(vm), C(mac), C(connected)) that use the port group.
      type: list
      elements: dict
domains:
  description: >-
    With O(failure_domains), per failure domain its C(name), C(datacenter), C(cluster) and C(portgroup) (what was done
    there, as RV(portgroup)); RV(portgroup) is then the first domain's.
  returned: with failure_domains
  type: list
  elements: dict
findings:
  description: Refusals as findings (C(id), C(severity), C(message), C(remedy), C(docs), C(objects)).
  returned: always
  type: list
  elements: dict
diff:
  description: >-
    The port group before and after: per host name (standard) or the distributed port group, with C(vlan_id),
    the security options (null means inherited from the switch) and, for distributed, C(port_binding), C(num_ports), C(elastic);
    with O(failure_domains) one such entry per domain name.
  returned: when diff mode is on
  type: dict
'''

from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import k8s_nested_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.core.option_specs import failure_domains_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot.failure_domains import read_domains
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import VCENTER_WRITER, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.plan import vsphere_network as plan
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vcenter
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vsphere_network_io as io
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import names_text

WHAT = 'vsphere_portgroup'


def argument_spec():
    spec = dict(
        datacenter=dict(type='str', required=True),
        name=dict(type='str', required=True, aliases=['portgroup']),
        switch_type=dict(type='str', required=True, choices=['standard', 'distributed']),
        switch=dict(type='str', required=True),
        cluster=dict(type='str'),
        hosts=dict(type='list', elements='str', default=[]),
        vlan_id=dict(type='int'),
        security=dict(type='dict', options=dict(promiscuous=dict(type='bool'), mac_changes=dict(type='bool'),
                                                forged_transmits=dict(type='bool'))),
        port_binding=dict(type='str', choices=['static', 'ephemeral']),
        num_ports=dict(type='int'),
        elastic=dict(type='bool'),
        state=dict(type='str', choices=['present', 'absent'], default='present'),
        force=dict(type='bool', default=False),
        timeout=dict(type='int', default=300),
        failure_domains=failure_domains_argument_spec(),
    )
    spec.update(k8s_nested_argument_spec())  # the cluster lock's Lease, and the Infrastructure with failure_domains
    return spec


def user_options(params):
    options = dict((key, params[key]) for key in ('vlan_id', 'port_binding', 'num_ports', 'elastic', 'hosts'))
    options.update(params['security'] or {})
    return options


def validate(params):
    problems = plan.validate_portgroup_options(params['switch_type'], user_options(params))
    if params['switch_type'] == plan.STANDARD and not (params['cluster'] or params['hosts']):
        problems.append('switch_type=standard needs the hosts to place the port group on: set cluster (every host of it) or hosts.')
    if params['timeout'] < 1:
        problems.append('timeout=%s must be at least 1 second.' % params['timeout'])
    return problems


def attached_nics(client, datacenter, network):
    """VM NICs whose backing is the port group (two reads: VM index, devices of every VM)."""
    if network is None:
        return []
    vms = vcenter.read_vm_devices(client, vcenter.index_vms(client, datacenter), [network])
    return [{'vm': vm['name'], 'mac': nic['mac'], 'connected': nic['connected']}
            for vm in vms for nic in vm['nics'] if plan.nic_on_network(nic, network)]


def refuse(findings):
    raise Refused(findings)


# --- standard ------------------------------------------------------------------------------------------
# Each handler plans and returns (changed, result, diff, write): write() makes the change (never called in check mode),
# so every failure domain is planned, and refused if need be, before anything is written on any.

def standard(client, datacenter, params):
    name = params['name']
    hosts = vcenter.read_hosts(client, datacenter, params['cluster'], params['hosts'])
    result = {'name': name, 'switch_type': plan.STANDARD, 'switch': params['switch']}
    if params['state'] == 'absent':
        return standard_absent(client, datacenter, hosts, result, params)
    wanted = plan.wanted_options(user_options(params), plan.STANDARD)
    host_plan = plan.plan_standard_portgroup(name, params['switch'], wanted, hosts)
    if host_plan['findings']:
        refuse(host_plan['findings'])
    changing = [entry for entry in host_plan['hosts'] if entry['action'] != 'none']
    result.update(action=_overall(changing), hosts=[_host_row(entry) for entry in host_plan['hosts']])
    diff = {'before': dict((entry['host'], entry['before']) for entry in host_plan['hosts']),
            'after': dict((entry['host'], entry['after']) for entry in host_plan['hosts'])}
    by_name = dict((host['name'], host) for host in hosts)

    def write():
        write_hosts(client, changing, lambda entry: (
            io.add_standard_portgroup(client, by_name[entry['host']], name, entry['after']) if entry['action'] == 'create'
            else io.update_standard_portgroup(client, by_name[entry['host']], name, entry['changes'])))
    return bool(changing), result, diff, write


def standard_absent(client, datacenter, hosts, result, params):
    name = params['name']
    located = [host for host in hosts if name in host['portgroups']]
    networks = vcenter.read_networks(client, datacenter) if located else []
    network = next((item for item in networks if item['type'] == plan.STANDARD and item['name'] == name), None)
    removal = plan.plan_portgroup_removal(name, [host['name'] for host in located], attached_nics(client, datacenter, network),
                                          params['force'])
    if removal['findings']:
        refuse(removal['findings'])
    result.update(action=removal['action'], attached=removal['attached'],
                  hosts=[{'host': host['name'], 'action': 'remove' if host in located else 'none', 'changes': {}} for host in hosts])
    diff = {'before': dict((host['name'], host['portgroups'].get(name)) for host in hosts),
            'after': dict((host['name'], None) for host in hosts)}
    by_name = dict((host['name'], host) for host in hosts)

    def write():
        write_hosts(client, [{'host': host['name'], 'action': 'remove'} for host in located],
                    lambda entry: io.remove_standard_portgroup(client, by_name[entry['host']], name))
    return bool(located), result, diff, write


def write_hosts(client, entries, write):
    """Write host by host; a host that fails does not stop the others, the module then fails listing them."""
    failed, done = [], []
    for entry in entries:
        try:
            write(entry)
            done.append(entry['host'])
        except ModuleFailure as failure:
            failed.append('%s: %s' % (entry['host'], failure.msg))
    if failed:
        raise ModuleFailure('The port group change failed on %d of %d host(s): %s. Done on: %s. Fix the cause and rerun.'
                            % (len(failed), len(entries), '; '.join(failed), names_text(done)), changed=bool(done))


def _host_row(entry):
    return {'host': entry['host'], 'action': entry['action'], 'changes': entry['changes']}


def _overall(changing):
    actions = set(entry['action'] for entry in changing)
    if not actions:
        return 'none'
    return 'create' if actions == set(['create']) else 'update'


# --- distributed ---------------------------------------------------------------------------------------

def distributed(client, datacenter, params):
    name, switch = params['name'], params['switch']
    networks = vcenter.read_networks(client, datacenter)
    switches = vcenter.switch_records(networks)
    if switch not in switches:
        refuse([catalogue_finding('switch_missing', 'switch=%s: no distributed switch of that name in datacenter %s (there: %s).'
                                  % (switch, datacenter.props['name'], names_text(switches)),
                                  objects=[{'kind': 'DistributedVirtualSwitch', 'name': switch}])])
    network = next((item for item in networks if item['type'] == plan.DISTRIBUTED and item['name'] == name
                    and item['switch'] == switch and not item['uplink']), None)
    current = io.distributed_view(network) if network else None
    result = {'name': name, 'switch_type': plan.DISTRIBUTED, 'switch': switch, 'key': network['portgroup_key'] if network else None}
    if params['state'] == 'absent':
        removal = plan.plan_portgroup_removal(name, [switch] if network else [], attached_nics(client, datacenter, network),
                                              params['force'])
        if removal['findings']:
            refuse(removal['findings'])
        result.update(action=removal['action'], attached=removal['attached'], changes={})

        def remove():
            if network:
                io.wait_task(client, io.destroy_distributed_portgroup(client, network), params['timeout'],
                             'removing port group %s' % name, 'port group %s' % name)
        return bool(network), result, {'before': current, 'after': None}, remove
    wanted = plan.wanted_options(user_options(params), plan.DISTRIBUTED)
    pg_plan = plan.plan_distributed_portgroup(name, switch, wanted, current)
    result.update(action=pg_plan['action'], changes=pg_plan['changes'])

    def write():
        if pg_plan['action'] == 'none':
            return
        if pg_plan['action'] == 'create':
            task = io.add_distributed_portgroup(client, switches[switch], name, pg_plan['after'])
        else:
            task = io.reconfigure_distributed_portgroup(client, network, pg_plan['changes'])
        io.wait_task(client, task, params['timeout'], '%s of port group %s' % (pg_plan['action'], name), 'port group %s' % name)
        if pg_plan['action'] == 'create':
            created = [item for item in vcenter.read_networks(client, datacenter)
                       if item['type'] == plan.DISTRIBUTED and item['name'] == name and item['switch'] == switch]
            result['key'] = created[0]['portgroup_key'] if created else None
    return pg_plan['action'] != 'none', result, {'before': pg_plan['before'], 'after': pg_plan['after']}, write


# --- failure domains -----------------------------------------------------------------------------------

PORTGROUP_KEYS = ('name', 'switch_type', 'switch', 'vlan_id', 'security', 'port_binding', 'num_ports', 'elastic')


def domain_params(params, domain):
    """The module's parameters for one failure domain: its datacenter, cluster and merged port group."""
    portgroup = domain['portgroup']
    merged = dict(params, datacenter=domain['datacenter'], cluster=domain['cluster'], hosts=[])
    merged.update((key, portgroup.get(key)) for key in PORTGROUP_KEYS)
    return merged


def defaults(params):
    return {'datacenter': params['datacenter'], 'cluster': params['cluster'],
            'portgroup': dict((key, params[key]) for key in PORTGROUP_KEYS)}


def run_domains(module):
    """Every failure domain validated and planned first, then written domain by domain (one vCenter session)."""
    params = module.params
    if params['hosts']:
        raise ModuleFailure('hosts=%s cannot be combined with failure_domains: each domain\'s port group goes on every host '
                            'of its vSphere cluster. Remove hosts. Nothing was written.' % ', '.join(params['hosts']))
    domains = read_domains(module.k8s, params['failure_domains'], defaults(params))
    planned, problems = [], []
    for domain in domains:
        own = domain_params(params, domain)
        problems += ['failure domain %s: %s' % (domain['name'], problem) for problem in validate(own)]
        planned.append((domain, own))
    if problems:
        raise ModuleFailure(' '.join(problems) + ' Nothing was written.')
    client = module.vsphere
    results = []
    for domain, own in planned:
        datacenter = vcenter.find_datacenter(client, own['datacenter'], 'failure domain %s datacenter' % domain['name'])
        handler = standard if own['switch_type'] == plan.STANDARD else distributed
        results.append((domain, own) + handler(client, datacenter, own))
    if not module.check_mode:
        for _domain, _own, _changed, _portgroup, _diff, write in results:
            write()
    rows = [{'name': domain['name'], 'datacenter': own['datacenter'], 'cluster': own['cluster'], 'portgroup': portgroup}
            for domain, own, _changed, portgroup, _diff, _write in results]
    diff = dict((side, dict((domain['name'], domain_diff[side]) for domain, _own, _changed, _pg, domain_diff, _write in results))
                for side in ('before', 'after'))
    return any(item[2] for item in results), rows, diff


def run(module, _result=None):
    params = module.params
    if params['failure_domains']:
        changed, rows, diff = run_domains(module)
        result = {'changed': changed, 'portgroup': rows[0]['portgroup'] if rows else {}, 'domains': rows, 'findings': []}
    else:
        problems = validate(params)
        if problems:
            raise ModuleFailure(' '.join(problems) + ' Nothing was written.')
        client = module.vsphere
        datacenter = vcenter.find_datacenter(client, params['datacenter'], 'datacenter')
        handler = standard if params['switch_type'] == plan.STANDARD else distributed
        changed, portgroup, diff, write = handler(client, datacenter, params)
        if not module.check_mode:
            write()
        result = {'changed': changed, 'portgroup': portgroup, 'findings': []}
    if module._diff:  # pylint: disable=protected-access
        result['diff'] = diff
    return result


def main():
    EgressModule(WHAT, argument_spec=argument_spec(), **VCENTER_WRITER).run(run)


if __name__ == '__main__':
    main()
