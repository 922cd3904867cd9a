# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The argument specs of the options several modules share, and the input checks that go with them.

``objects_argument_spec()`` is the EgressIP objects as in ``egressip_objects`` of the variables file,
``portgroup_argument_spec()`` the secondary port group as in ``egressip_vsphere.portgroup``, so that the entries
of the variables file pass as they are; each module documents them itself (what it uses of them differs).
The checks return messages naming the field, the value and the fix. Private module_util: no API promise.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def objects_argument_spec(required=(), **option):
    """The ``objects`` option: a list of EgressIP entries (name, egress_ips, namespace_selector, pod_selector).

    ``required`` names the keys besides ``name`` the module cannot do without; ``option`` adds to the list
    option itself (for example ``default=[]``).
    """
    entry = dict(
        name=dict(type='str', required=True),
        egress_ips=dict(type='list', elements='str'),
        namespace_selector=dict(type='dict'),
        pod_selector=dict(type='dict'),
    )
    for key in required:
        entry[key]['required'] = True
    spec = dict(type='list', elements='dict', options=entry)
    spec.update(option)
    return spec


def portgroup_argument_spec():
    """The ``portgroup`` option: name, switch_type (standard or distributed), switch and vlan_id."""
    return dict(type='dict', options=dict(
        name=dict(type='str', required=True),
        switch_type=dict(type='str', choices=['standard', 'distributed'], default='standard'),
        switch=dict(type='str'),
        vlan_id=dict(type='int'),
    ))


def failure_domains_argument_spec():
    """The ``failure_domains`` option (C(egressip_vsphere.failure_domains), doc fragment ``ocp.egressip.failure_domains``):
    per failure domain its name and overrides of datacenter, cluster and any port group key."""
    return dict(type='list', elements='dict', default=[], options=dict(
        name=dict(type='str', required=True),
        datacenter=dict(type='str'),
        cluster=dict(type='str'),
        portgroup=dict(type='dict', options=dict(
            name=dict(type='str'), switch_type=dict(type='str', choices=['standard', 'distributed']), switch=dict(type='str'),
            vlan_id=dict(type='int'), port_binding=dict(type='str', choices=['static', 'ephemeral']), num_ports=dict(type='int'),
            elastic=dict(type='bool'),
            security=dict(type='dict', options=dict(promiscuous=dict(type='bool'), mac_changes=dict(type='bool'),
                                                    forged_transmits=dict(type='bool'))))),
    ))


def portgroup_problems(portgroup):
    """A distributed port group is found by its switch: the message when ``portgroup`` names none."""
    if portgroup and portgroup.get('switch_type') == 'distributed' and not portgroup.get('switch'):
        return ['portgroup.switch is not set for the distributed port group %s; give its distributed switch.' % portgroup['name']]
    return []


def not_positive(params, keys):
    """The messages for the options in ``keys`` (seconds to wait, between two reads) that are not above 0."""
    return ['%s=%s must be above 0.' % (key, params[key]) for key in keys if params[key] <= 0]


DEFAULT_PROBE_IMAGE = 'registry.access.redhat.com/ubi9/ubi-minimal:latest'


def wire_argument_spec():
    """The ``wire`` option of verify and the failover drill (documented by the ``ocp.egressip.wire_probe`` doc fragment)."""
    return dict(wire=dict(type='dict', options=dict(
        echo_target=dict(type='str', required=True),
        echo_target_ipv6=dict(type='str'),
        namespaces=dict(type='dict', default={}),
        create_namespace=dict(type='bool', default=False),
        image=dict(type='str', default=DEFAULT_PROBE_IMAGE),
        timeout=dict(type='int', default=60),
        probes=dict(type='int', default=1),
    )))
