"""The support report renders from a snapshot of the running twin (the read preflight makes) with no secrets.

The support_report playbook wires the modules; this checks the pure renderer on real reads: the
Kubernetes emulator through the kubernetes client and vcsim through pyVmomi, as the module reads them.
"""

import json

from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import K8sClient
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight import run_checks
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot.cluster import read_cluster, read_vcenter
from ansible_collections.ocp.egressip.plugins.module_utils.reports.support import build, render
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere import connect_vsphere

from twin.fixture import kube_writes

CONFIG = {
    'acknowledge_unsupported': True,
    'vsphere': {'datacenter': 'DC0', 'cluster': 'DC0_C0',
                'portgroup': {'name': 'ocp-egress-120', 'switch_type': 'standard', 'switch': 'vSwitch1', 'vlan_id': 120}},
    'network': {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99', 'route_metric': 200},
    'nodes': {'selector': {'node-role.kubernetes.io/worker': ''}},
    'objects': [{'name': 'payments', 'egress_ips': ['10.20.0.200', '10.20.0.201'],
                 'namespace_selector': {'matchLabels': {'team': 'payments'}}}],
}


def snapshot_of(twin):
    k8s = K8sClient.from_params({'kubeconfig': twin.kube_state['kubeconfig']})
    snapshot = read_cluster(k8s)
    state = twin.vcsim_state
    client = connect_vsphere({'hostname': state['host'], 'port': int(state['port']), 'username': state['username'],
                              'password': state['password'], 'validate_certs': False})
    snapshot['vsphere'] = read_vcenter(client, 'DC0', 'DC0_C0', snapshot['nodes'])
    snapshot['config'] = CONFIG
    return snapshot


def test_support_report_renders_on_the_twin(twin):
    twin.reset_kube_requests()
    snapshot = snapshot_of(twin)
    report = build(snapshot, run_checks(snapshot, 'audit'), about={'generated_at': 'now', 'collection_version': '0.1.0'})
    json_text, markdown_text = render(report)
    assert report['status'] == 'failing'   # nothing is configured on a fresh twin: audit mode says what is missing
    assert report['verdict'].startswith('Not healthy:') and report['verdict'].endswith('outside Red Hat support: secondary-network '
                                                                                       'EgressIP on vSphere')
    assert report['versions']['vcenter'] and report['versions']['openshift'].startswith('4.')
    assert [row['name'] for row in report['nodes']] == ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
    assert all(row['esxi_host'] and row['vm'] for row in report['nodes'])
    assert '# EgressIP support report' in markdown_text and '```mermaid' in markdown_text
    assert json.loads(json_text)['kind'] == 'support'
    for secret in (twin.kube_state['token'], twin.vcsim_state['password']):
        assert secret not in json_text and secret not in markdown_text
    assert kube_writes(twin) == 0
