"""egressip_info against the twin: seeded cluster, two list requests, primary and secondary egress IPs, query, bad inputs.

Tests run in file order on one twin: the read-only and failure cases first, then the ones that
label nodes, add NICs and create EgressIP objects.
"""

import json

import pytest
from pyVim.task import WaitForTask
from pyVmomi import vim

from twin.fixture import kube_writes

MODULE = 'egressip_info'
EGRESSIP_API = ('k8s.ovn.org', 'v1', 'egressips')
NNCP_API = ('nmstate.io', 'v1', 'nodenetworkconfigurationpolicies')
HOST_CIDRS = 'k8s.ovn.org/host-cidrs'


def ok(result):
    assert not result.get('failed'), result.get('msg')
    assert result['_rc'] == 0 and result['changed'] is False
    return result


def failed(result, twin, *secrets):
    """A failure: non-zero exit, one message, no token or password anywhere in the output."""
    assert result.get('failed') is True, result
    assert result['_rc'] != 0
    assert result['msg'] and '\n' not in result['msg']
    output = json.dumps(result)
    for secret in (twin.kube_state['token'], twin.vcsim_state['password']) + secrets:
        assert secret not in output and secret not in result['_stderr']
    return result['msg']


def token_env(twin, token=None, ca=True, host=None):
    """Connect with host + api_key instead of the kubeconfig."""
    env = {'K8S_AUTH_KUBECONFIG': None, 'K8S_AUTH_HOST': host or twin.kube_state['url'], 'K8S_AUTH_API_KEY': token or twin.kube_state['token']}
    if ca:
        env['K8S_AUTH_SSL_CA_CERT'] = twin.kube_state['ca_file']
    return env


def workers(twin):
    return [vm['name'] for vm in twin.vcsim_state['vms'] if vm['role'] == 'worker']


# --- seeded cluster, read only -------------------------------------------------------------------

def test_seeded_cluster(twin, run_module):
    result = ok(run_module(MODULE, {}))
    assert result['egressips'] == [] and result['egress_assignable_nodes'] == [] and result['notes'] == []
    nodes = dict((node.metadata.name, node) for node in twin.core_v1().list_node().items)
    assert [node['name'] for node in result['nodes']] == sorted(nodes)
    for node in result['nodes']:
        api = nodes[node['name']]
        annotations = api.metadata.annotations
        assert node['provider_id'] == api.spec.provider_id
        assert node['ready'] is True and node['egress_assignable'] is False
        assert node['host_cidrs'] == json.loads(annotations[HOST_CIDRS])
        assert node['primary_ifaddr'] == json.loads(annotations['k8s.ovn.org/node-primary-ifaddr'])
        assert node['primary_subnets'] == ['192.168.10.0/24']
        # keepalived's VIPs are /32 host addresses of the nodes holding them: OVN-K sees a /32 "secondary" network there
        vips = [cidr for cidr in json.loads(annotations[HOST_CIDRS]) if cidr.endswith('/32')]
        assert node['secondary_subnets'] == vips and node['assigned_egress_ips'] == [] and node['notes'] == []
    assert sorted(cidr for node in result['nodes'] for cidr in node['secondary_subnets']) == ['192.168.10.5/32', '192.168.10.6/32']


def test_costs_two_list_requests_and_no_write(twin, run_module):
    twin.reset_kube_requests()
    ok(run_module(MODULE, {}, check=True))
    log = twin.kube_requests()
    assert sorted((entry['verb'], entry['path']) for entry in log['requests']) == [
        ('list', '/api/v1/nodes'), ('list', '/apis/k8s.ovn.org/v1/egressips')]
    assert kube_writes(twin) == 0


def test_connection_with_host_and_token(twin, run_module):
    result = ok(run_module(MODULE, {}, env=token_env(twin)))
    assert len(result['nodes']) == len(twin.vcsim_state['vms'])
    assert twin.kube_state['token'] not in json.dumps(result)


def test_query(twin, run_module):
    result = ok(run_module(MODULE, {'query': 'nodes[?starts_with(name, `ocp1-worker`)].name'}))
    assert result['query_result'] == workers(twin)
    assert 'nodes' not in result and 'egressips' not in result


def test_query_syntax_error_fails_before_any_request(twin, run_module):
    twin.reset_kube_requests()
    msg = failed(run_module(MODULE, {'query': 'nodes[?name == `ocp1'}), twin)
    assert msg == "query 'nodes[?name == `ocp1' is not a valid JMESPath expression: Unclosed ` delimiter at column 15"
    assert twin.kube_requests()['requests'] == []


def test_egressip_api_absent(twin, run_module):
    twin.inject_kube_fault(verb='list', path='/apis/k8s.ovn.org/v1/egressips', code=404, count=1)
    try:
        msg = failed(run_module(MODULE, {}), twin)
    finally:
        twin.clear_kube_faults()
    assert msg.startswith('EgressIP API (k8s.ovn.org/v1) not found on %s: ' % twin.kube_state['url'])
    assert 'network plugin is not OVN-Kubernetes' in msg


def test_server_error_names_verb_resource_status_and_message(twin, run_module):
    twin.inject_kube_fault(verb='list', path='/api/v1/nodes', code=500, count=1)
    try:
        result = run_module(MODULE, {})
    finally:
        twin.clear_kube_faults()
    msg = failed(result, twin)
    assert msg.startswith('list nodes (GET %s/api/v1/nodes?limit=500) failed: HTTP 500 InternalError: ' % twin.kube_state['url'])
    assert 'injected fault' in msg
    assert result['status'] == 500 and result['kubernetes_version']


def test_missing_kubeconfig(twin, run_module):
    result = run_module(MODULE, {}, env={'K8S_AUTH_KUBECONFIG': '/nonexistent/kubeconfig'})
    assert failed(result, twin) == 'kubeconfig /nonexistent/kubeconfig (from the kubeconfig option or K8S_AUTH_KUBECONFIG) does not exist'


def test_no_connection_configured(twin, run_module, tmp_path):
    result = run_module(MODULE, {}, env={'K8S_AUTH_KUBECONFIG': None, 'KUBECONFIG': None, 'HOME': str(tmp_path), 'KUBERNETES_SERVICE_HOST': None})
    assert failed(result, twin).startswith('No Kubernetes connection configured: set kubeconfig (K8S_AUTH_KUBECONFIG)')


def test_bad_token(twin, run_module):
    bad = 'sha256~definitely-not-the-token'
    result = run_module(MODULE, {}, env=token_env(twin, token=bad))
    msg = failed(result, twin, bad)
    assert msg.startswith('list egressips.k8s.ovn.org (GET %s/apis/k8s.ovn.org/v1/egressips?limit=500) failed: HTTP 401 Unauthorized' % twin.kube_state['url'])
    assert 'refused the credentials from the host option (K8S_AUTH_HOST)' in msg
    assert result['status'] == 401


def test_bad_token_in_the_task_is_masked(twin, run_module):
    bad = 'sha256~also-not-the-token'
    result = run_module(MODULE, {'host': twin.kube_state['url'], 'api_key': bad, 'ca_cert': twin.kube_state['ca_file']},
                        env={'K8S_AUTH_KUBECONFIG': None})
    failed(result, twin, bad)
    assert result['invocation']['module_args']['api_key'] == 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'


def test_untrusted_api_certificate(twin, run_module):
    msg = failed(run_module(MODULE, {}, env=token_env(twin, ca=False)), twin)
    assert 'the TLS certificate of the Kubernetes API at %s is not trusted' % twin.kube_state['url'] in msg
    assert 'K8S_AUTH_SSL_CA_CERT' in msg


def test_unreachable_api(twin, run_module, closed_port):
    url = 'https://127.0.0.1:%d' % closed_port
    msg = failed(run_module(MODULE, {}, env=token_env(twin, host=url)), twin)
    assert msg.startswith('list egressips.k8s.ovn.org (GET %s/apis/k8s.ovn.org/v1/egressips?limit=500) failed: cannot reach the Kubernetes API at %s'
                          % (url, url))
    assert 'Connection refused' in msg


# --- scenarios that change the twin ---------------------------------------------------------------

def label_egress_assignable(twin, *nodes):
    for node in nodes:
        twin.core_v1().patch_node(node, {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': ''}}})


def create_egressip(twin, name, ips):
    body = {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': {'name': name},
            'spec': {'egressIPs': list(ips), 'namespaceSelector': {'matchLabels': {'team': name}}}}
    twin.custom_objects().create_cluster_custom_object(*EGRESSIP_API, body)


def assigned(twin, name, count):
    def check():
        obj = twin.custom_objects().get_cluster_custom_object(*EGRESSIP_API, name)
        items = (obj.get('status') or {}).get('items') or []
        return items if len(items) == count else None
    return check


def test_primary_network_egress_ip(twin, run_module):
    w0, w1 = workers(twin)[:2]
    label_egress_assignable(twin, w0, w1)
    create_egressip(twin, 'primary', ['192.168.10.200'])
    create_egressip(twin, 'nowhere', ['10.99.0.5'])
    items = twin.wait_for(assigned(twin, 'primary', 1), timeout=20, what='the primary egress IP to be assigned')

    result = ok(run_module(MODULE, {}))
    assert result['egress_assignable_nodes'] == [w0, w1]
    by_name = dict((item['name'], item) for item in result['egressips'])
    primary = by_name['primary']['ips'][0]
    assert primary['network'] == 'primary' and primary['subnet'] == '192.168.10.0/24'
    assert primary['candidate_nodes'] == [w0, w1]
    assert primary['assigned_node'] == items[0]['node'] and primary['assigned_node'] in (w0, w1)
    assert by_name['primary']['all_assigned'] is True
    nowhere = by_name['nowhere']
    assert nowhere['ips'][0]['network'] == 'none' and nowhere['ips'][0]['candidate_nodes'] == []
    assert nowhere['all_assigned'] is False and nowhere['status_items'] == []
    host = [node for node in result['nodes'] if node['name'] == primary['assigned_node']][0]
    assert host['assigned_egress_ips'] == [{'egressip': 'primary', 'ip': '192.168.10.200'}]
    assert host['secondary_host_egress_ips'] is None  # primary egress IPs live on br-ex, not on a secondary link


def add_secondary_nic(twin, vm_name):
    """Hot-add a connected vmxnet3 NIC on VM Network; returns its MAC."""
    content = twin.vsphere().RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
    try:
        vm = [item for item in view.view if item.name == vm_name][0]
    finally:
        view.DestroyView()
    network = [net for net in vm.runtime.host.network if net.name == 'VM Network'][0]
    before = set(device.macAddress for device in vm.config.hardware.device if hasattr(device, 'macAddress'))
    nic = vim.vm.device.VirtualVmxnet3(
        key=-1, backing=vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName='VM Network', network=network),
        connectable=vim.vm.device.VirtualDevice.ConnectInfo(connected=True, startConnected=True, allowGuestControl=True))
    WaitForTask(vm.ReconfigVM_Task(spec=vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='add', device=nic)])))
    after = set(device.macAddress for device in vm.config.hardware.device if hasattr(device, 'macAddress'))
    return (after - before).pop()


def give_address(twin, node, mac, address):
    policy = {'apiVersion': 'nmstate.io/v1', 'kind': 'NodeNetworkConfigurationPolicy', 'metadata': {'name': 'egress-%s' % node},
              'spec': {'nodeSelector': {'kubernetes.io/hostname': node},
                       'desiredState': {'interfaces': [{'name': 'secondary0', 'type': 'ethernet', 'state': 'up', 'identifier': 'mac-address',
                                                        'mac-address': mac,
                                                        'ipv4': {'enabled': True, 'dhcp': False,
                                                                 'address': [{'ip': address, 'prefix-length': 24}]}}]}}}
    twin.custom_objects().create_cluster_custom_object(*NNCP_API, policy)


def test_secondary_network_egress_ip(twin, run_module):
    w0, w1, w2 = workers(twin)[:3]
    for node, address in ((w0, '10.20.0.11'), (w1, '10.20.0.12')):
        give_address(twin, node, add_secondary_nic(twin, node), address)
    core = twin.core_v1()

    def has_secondary(node, cidr):
        return lambda: cidr in json.loads(core.read_node(node).metadata.annotations.get(HOST_CIDRS, '[]'))
    twin.wait_for(has_secondary(w0, '10.20.0.11/24'), timeout=20, what='10.20.0.11/24 in host-cidrs of %s' % w0)
    twin.wait_for(has_secondary(w1, '10.20.0.12/24'), timeout=20, what='10.20.0.12/24 in host-cidrs of %s' % w1)
    create_egressip(twin, 'payments', ['10.20.0.200', '10.20.0.201'])
    items = twin.wait_for(assigned(twin, 'payments', 2), timeout=20, what='both secondary egress IPs to be assigned')
    placed = dict((item['egressIP'], item['node']) for item in items)
    twin.wait_for(lambda: all(ip in json.loads(core.read_node(node).metadata.annotations.get('k8s.ovn.org/secondary-host-egress-ips', '[]'))
                              for ip, node in placed.items()), timeout=20, what='the egress IPs on the secondary links')

    twin.reset_kube_requests()
    result = ok(run_module(MODULE, {}))
    assert twin.kube_requests()['counts']['list'] == 2
    payments = [item for item in result['egressips'] if item['name'] == 'payments'][0]
    assert payments['all_assigned'] is True
    for ip in payments['ips']:
        assert ip['network'] == 'secondary' and ip['subnet'] == '10.20.0.0/24'
        assert ip['candidate_nodes'] == [w0, w1]  # labelled and holding the subnet
        assert ip['assigned_node'] == placed[ip['ip']]
        assert ip['node_address_conflicts'] == []
    assert sorted(ip['assigned_node'] for ip in payments['ips']) == [w0, w1]  # never two IPs of one object on one node
    nodes = dict((node['name'], node) for node in result['nodes'])
    for node, address in ((w0, '10.20.0.11/24'), (w1, '10.20.0.12/24')):
        assert address in nodes[node]['host_cidrs']
        assert nodes[node]['secondary_subnets'] == ['10.20.0.0/24']
        hosted = [item['ip'] for item in nodes[node]['assigned_egress_ips'] if item['egressip'] == 'payments']
        assert nodes[node]['secondary_host_egress_ips'] == hosted
    # w2 holds no secondary address, only keepalived's ingress VIP (a /32 OVN-K counts as a host network)
    assert nodes[w2]['secondary_subnets'] == [c for c in nodes[w2]['host_cidrs'] if c.endswith('/32')]

    answer = ok(run_module(MODULE, {'query': "egressips[?name=='payments'].ips[].[ip, network, subnet]"}))
    assert sorted(answer['query_result']) == [['10.20.0.200', 'secondary', '10.20.0.0/24'], ['10.20.0.201', 'secondary', '10.20.0.0/24']]


def test_egress_ip_equal_to_a_node_address_is_flagged(twin, run_module):
    create_egressip(twin, 'clash', ['10.20.0.12'])
    result = ok(run_module(MODULE, {'query': "egressips[?name=='clash'].ips[0] | [0]"}))
    assert result['query_result']['node_address_conflicts'] == [workers(twin)[1]]


def _nodes_list_codes(twin):
    return [entry['code'] for entry in twin.kube_requests()['requests'] if entry['verb'] == 'list' and entry['path'] == '/api/v1/nodes']


@pytest.mark.parametrize('code', [429, 503])
def test_a_throttled_or_unavailable_read_is_repeated_like_kubectl(twin, run_module, code):
    """kube-apiserver's flow control answers 429 with Retry-After: 1 (a plain-text body); client-go waits and repeats.
    A read answered 503 is repeated with a backoff."""
    twin.reset_kube_requests()
    twin.inject_kube_fault(verb='list', path='/api/v1/nodes', code=code, count=2)
    try:
        result = run_module(MODULE, {})
    finally:
        twin.clear_kube_faults()
    assert result['_rc'] == 0, result
    assert _nodes_list_codes(twin) == [code, code, 200]


def test_impersonation_reaches_the_api_server_like_kubectl_as(twin, run_module):
    """impersonate_user (kubectl --as): the twin's impersonation filter lets the admin act as bob, who may not list nodes."""
    twin.reset_kube_requests()
    result = run_module(MODULE, {'impersonate_user': 'bob', 'impersonate_groups': ['ops']})
    assert result['_rc'] != 0 and 'User "bob" cannot list resource' in result['msg'], result
    entries = twin.kube_requests()['requests']
    assert entries and all(entry.get('user') == 'bob' and entry.get('impersonated_by') == 'system:admin' for entry in entries)
