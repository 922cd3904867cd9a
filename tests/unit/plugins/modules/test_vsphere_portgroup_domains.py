"""vsphere_portgroup with failure domains: each domain's parameters are the module's, with the domain's datacenter,
cluster and merged port group, and are validated by the same rules (a bad override names its domain)."""

from ansible_collections.ocp.egressip.plugins.modules import vsphere_portgroup as module
from ansible_collections.ocp.egressip.plugins.module_utils.model import failure_domains as fd

PARAMS = {'datacenter': 'DC0', 'cluster': None, 'hosts': [], 'name': 'ocp-egress-a', 'switch_type': 'standard', 'switch': 'vSwitch1',
          'vlan_id': 120, 'security': None, 'port_binding': None, 'num_ports': None, 'elastic': None, 'state': 'present',
          'force': False, 'timeout': 300, 'failure_domains': [{'name': 'domain-b', 'portgroup': {'name': 'ocp-egress-b', 'vlan_id': 121}}]}
INFRA = {'spec': {'platformSpec': {'vsphere': {'failureDomains': [
    {'name': name, 'region': 'r', 'zone': name, 'server': 'vc', 'topology': {'datacenter': 'DC0', 'computeCluster': '/DC0/host/%s' % cluster}}
    for name, cluster in (('domain-a', 'DC0_C0'), ('domain-b', 'DC0_C1'))]}}}}


def domain_params(params=None):
    params = params or PARAMS
    domains, findings = fd.resolve(INFRA, params['failure_domains'], module.defaults(params))
    assert findings == []
    return [module.domain_params(params, domain) for domain in domains]


def test_each_domain_gets_its_cluster_and_port_group_over_the_module_options():
    first, second = domain_params()
    assert (first['datacenter'], first['cluster'], first['name'], first['vlan_id']) == ('DC0', 'DC0_C0', 'ocp-egress-a', 120)
    assert (second['datacenter'], second['cluster'], second['name'], second['vlan_id']) == ('DC0', 'DC0_C1', 'ocp-egress-b', 121)
    assert all(module.validate(item) == [] for item in (first, second))


def test_an_override_that_does_not_fit_its_switch_type_is_a_problem_of_that_domain():
    params = dict(PARAMS, failure_domains=[{'name': 'domain-b', 'portgroup': {'num_ports': 8}}])
    first, second = domain_params(params)
    assert module.validate(first) == []
    assert module.validate(second) == ['num_ports=8 applies to distributed port groups only: remove it, or set switch_type=distributed.']
