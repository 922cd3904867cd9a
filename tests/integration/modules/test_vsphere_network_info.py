"""vsphere_network_info against the twin: inventory, VM selection, constant request cost, every bad input."""

import json

import pytest

from twin.fixture import kube_writes, vcsim_writes

MODULE = 'vsphere_network_info'


def args(twin, **extra):
    result = {'datacenter': twin.vcsim_state['datacenter'], 'cluster': twin.vcsim_state['cluster']}
    result.update(extra)
    return result


def ok(result):
    assert not result.get('failed'), result.get('msg')
    assert result['_rc'] == 0 and result['changed'] is False
    return result


def failed(result, twin=None):
    """A failure: non-zero exit, one message, and no secret anywhere in the output."""
    assert result.get('failed') is True, result
    assert result['_rc'] != 0
    assert result['msg'] and '\n' not in result['msg']
    if twin is not None:
        output = json.dumps(result)
        for secret in (twin.vcsim_state['password'], twin.kube_state['token']):
            assert secret not in output and secret not in result['_stderr']
    return result['msg']


def vms_by_role(twin, role):
    return [vm for vm in twin.vcsim_state['vms'] if vm['role'] == role]


# --- happy paths ---------------------------------------------------------------------------------

def test_hosts_switches_and_port_groups_match_the_inventory(twin, run_module):
    result = ok(run_module(MODULE, args(twin)))
    inventory = twin.inventory()
    assert result['datacenter']['name'] == twin.vcsim_state['datacenter'] and result['datacenter']['moid']
    assert result['cluster']['name'] == twin.vcsim_state['cluster'] and result['cluster']['moid']
    assert result['vms'] == []

    expected_hosts = sorted((host for host in inventory['hosts'] if host.get('cluster') == twin.vcsim_state['cluster']), key=lambda h: h['name'])
    assert [(host['name'], host['moid']) for host in result['hosts']] == [(host['name'], host['moid']) for host in expected_hosts]
    for host, expected in zip(result['hosts'], expected_hosts):
        assert host['connection_state'] == 'connected'
        assert [switch['name'] for switch in host['standard_switches']] == sorted(expected['vswitches'])
        assert sorted((pg['name'], pg['vswitch'], pg['vlan_id']) for pg in host['standard_portgroups']) == \
            sorted((pg['name'], pg['vswitch'], pg['vlan']) for pg in expected['portgroups'])
        vswitch1 = [switch for switch in host['standard_switches'] if switch['name'] == 'vSwitch1'][0]
        assert vswitch1['portgroups'] == []

    assert [dvs['name'] for dvs in result['distributed_switches']] == sorted(dvs['name'] for dvs in inventory['dvs'])
    for dvs, expected in zip(result['distributed_switches'], sorted(inventory['dvs'], key=lambda d: d['name'])):
        assert (dvs['uuid'], dvs['moid']) == (expected['uuid'], expected['moid'])
        assert dvs['hosts'] == sorted(expected['hosts'])
        # vcsim 0.24 sets neither config.uplink nor uplinkPortgroup on its uplink port group, so compare the others by name
        portgroups = [(pg['name'], pg['key'], pg['vlan_id']) for pg in dvs['portgroups'] if pg['name'] not in expected['uplink_portgroups']]
        assert portgroups == sorted((pg['name'], pg['key'], pg['vlan']) for pg in expected['portgroups'])
    primary_dpg = [pg for dvs in result['distributed_switches'] for pg in dvs['portgroups'] if pg['name'] == 'ocp-primary-dpg'][0]
    assert primary_dpg['vlan_type'] == 'vlan' and primary_dpg['moid'] == primary_dpg['key']


def test_nics_of_vms_chosen_by_name_uuid_and_moid(twin, run_module):
    master, worker0, worker1 = vms_by_role(twin, 'master')[0], vms_by_role(twin, 'worker')[0], vms_by_role(twin, 'worker')[1]
    result = ok(run_module(MODULE, args(twin, vm_names=[master['name']], vm_uuids=[worker0['uuid'].upper()], vm_moids=[worker1['moid']])))
    assert [vm['name'] for vm in result['vms']] == [master['name'], worker0['name'], worker1['name']]
    inventory_vms = dict((vm['moid'], vm) for vm in twin.inventory()['vms'])
    for vm in result['vms']:
        expected = inventory_vms[vm['moid']]
        assert (vm['uuid'], vm['host'], vm['power_state'], vm['node']) == (expected['uuid'], expected['host'], 'poweredOn', None)
        assert len(vm['nics']) == len(expected['nics']) == 1
        nic, expected_nic = vm['nics'][0], expected['nics'][0]
        assert nic['mac'] == expected_nic['mac'].lower() and nic['mac'] == nic['mac'].lower()
        assert (nic['key'], nic['adapter'], nic['network'], nic['connected'], nic['start_connected']) == \
            (expected_nic['key'], 'vmxnet3', 'VM Network', expected_nic['connected'], expected_nic['start_connected'])
        assert nic['portgroup_key'] is None and nic['switch_uuid'] is None and nic['network_moid']


def test_vms_chosen_by_node_name_through_provider_id(twin, run_module):
    workers = vms_by_role(twin, 'worker')
    nodes = dict((node.metadata.name, node.spec.provider_id) for node in twin.core_v1().list_node().items)
    twin.reset_kube_requests()
    result = ok(run_module(MODULE, args(twin, node_names=[workers[1]['name'], workers[0]['name']])))
    assert [(vm['node'], vm['name']) for vm in result['vms']] == [(workers[1]['name'], workers[1]['name']), (workers[0]['name'], workers[0]['name'])]
    for vm in result['vms']:
        assert nodes[vm['node']] == 'vsphere://%s' % vm['uuid']
    log = twin.kube_requests()
    assert [(entry['verb'], entry['path']) for entry in log['requests']] == [('list', '/api/v1/nodes')]


def test_vms_chosen_by_node_selector(twin, run_module):
    result = ok(run_module(MODULE, args(twin, node_selector='node-role.kubernetes.io/worker')))
    assert sorted(vm['node'] for vm in result['vms']) == sorted(vm['name'] for vm in vms_by_role(twin, 'worker'))


def test_request_count_does_not_grow_with_the_number_of_vms(twin, run_module):
    all_vms = [vm['name'] for vm in twin.vcsim_state['vms']]
    assert len(all_vms) == 6
    counts = {}
    for label, names in (('none', []), ('one', all_vms[:1]), ('all', all_vms)):
        twin.reset_vcsim_requests()
        result = ok(run_module(MODULE, args(twin, vm_names=names)))
        assert len(result['vms']) == len(names)
        counts[label] = twin.vcsim_requests()['counts']
    assert counts['one'] == counts['all']
    # selecting VMs costs one VM index read and one device read, whatever the number of VMs
    assert counts['one']['RetrievePropertiesEx'] == counts['none']['RetrievePropertiesEx'] + 2
    for label, count in counts.items():
        assert count.get('CreateContainerView', 0) == count.get('DestroyView', 0), label  # every view destroyed
        assert count.get('Logout') == 1, label  # the session is closed
        assert not [method for method in count if method.startswith(('FindBy', 'ContinueRetrieve')) or method == 'RetrieveProperties'], label


def test_check_mode_reads_the_same_and_writes_nothing(twin, run_module):
    normal = ok(run_module(MODULE, args(twin, node_selector='node-role.kubernetes.io/worker')))
    twin.reset_vcsim_requests()
    twin.reset_kube_requests()
    checked = ok(run_module(MODULE, args(twin, node_selector='node-role.kubernetes.io/worker'), check=True))
    for key in ('hosts', 'distributed_switches', 'vms'):
        assert checked[key] == normal[key]
    assert vcsim_writes(twin) == {} and kube_writes(twin) == 0


# --- bad inputs ------------------------------------------------------------------------------------

def test_unknown_datacenter(twin, run_module):
    msg = failed(run_module(MODULE, args(twin, datacenter='DC9')), twin)
    assert msg == "datacenter 'DC9' not found in vCenter %s:%s; datacenters there: %s" % (
        twin.vcsim_state['host'], twin.vcsim_state['port'], twin.vcsim_state['datacenter'])


def test_unknown_cluster(twin, run_module):
    msg = failed(run_module(MODULE, args(twin, cluster='Cluster9')), twin)
    assert msg == "vSphere cluster 'Cluster9' not found in datacenter %s; vSphere clusters there: %s" % (
        twin.vcsim_state['datacenter'], twin.vcsim_state['cluster'])


def test_unknown_vms(twin, run_module):
    msg = failed(run_module(MODULE, args(twin, vm_names=['ghost'], vm_uuids=['00000000-0000-0000-0000-000000000000'], vm_moids=['vm-9999'])), twin)
    assert msg.startswith("No VM in datacenter %s with name 'ghost', BIOS UUID '00000000-0000-0000-0000-000000000000', moid 'vm-9999'; VMs there: "
                          % twin.vcsim_state['datacenter'])
    assert twin.vcsim_state['vms'][0]['name'] in msg


def test_unknown_node(twin, run_module):
    twin.reset_vcsim_requests()
    msg = failed(run_module(MODULE, args(twin, node_names=['ocp1-worker-9'])), twin)
    assert msg.startswith("node 'ocp1-worker-9' not found in the Kubernetes API %s; nodes there: " % twin.kube_state['url'])
    assert 'ocp1-worker-0' in msg
    assert twin.vcsim_requests()['counts'] == {}  # nodes are checked before vCenter is contacted


def test_wrong_vcenter_password(twin, run_module):
    result = run_module(MODULE, args(twin, password='Wr0ng-Passw0rd-!'))
    msg = failed(result, twin)
    assert msg == ('vCenter %s:%s refused the login of user %s: Login failure. Check the username and password (VMWARE_USER, VMWARE_PASSWORD).'
                   % (twin.vcsim_state['host'], twin.vcsim_state['port'], twin.vcsim_state['username']))
    assert 'Wr0ng-Passw0rd-!' not in json.dumps(result) and 'Wr0ng-Passw0rd-!' not in result['_stderr']
    assert result['pyvmomi_version']


def test_unreachable_vcenter(twin, run_module, closed_port):
    msg = failed(run_module(MODULE, args(twin), env={'VMWARE_PORT': str(closed_port)}), twin)
    assert msg == 'Cannot reach vCenter 127.0.0.1:%d: Connection refused (check hostname, port and firewall)' % closed_port


def test_the_vcenter_certificate_is_checked_against_the_ca_bundle(twin, run_module):
    """The twin's vCenter presents a certificate signed by a CA of its own (as a real one by its VMCA): trusted with the bundle."""
    assert twin.env['VMWARE_VALIDATE_CERTS'] == 'true' and twin.env['OCP_EGRESSIP_VCENTER_CA_BUNDLE']
    result = run_module(MODULE, args(twin, validate_certs=True))
    assert result['_rc'] == 0, result


def test_untrusted_vcenter_certificate(twin, run_module):
    msg = failed(run_module(MODULE, args(twin, validate_certs=True), env={'OCP_EGRESSIP_VCENTER_CA_BUNDLE': ''}), twin)
    assert msg.startswith('The TLS certificate of vCenter %s:%s is not trusted: ' % (twin.vcsim_state['host'], twin.vcsim_state['port']))
    assert 'validate_certs: false (VMWARE_VALIDATE_CERTS=false)' in msg


def test_vcenter_fault_keeps_its_type_and_message(twin, run_module):
    twin.inject_vcsim_fault(method='RetrievePropertiesEx', count=1, fault='The object has already been deleted or has not been completely created')
    twin.reset_vcsim_requests()
    try:
        msg = failed(run_module(MODULE, args(twin)), twin)
    finally:
        twin.clear_vcsim_faults()
    assert msg == ('vCenter %s:%s: reading the datacenters (RetrievePropertiesEx) failed: '
                   'SystemError: The object has already been deleted or has not been completely created'
                   % (twin.vcsim_state['host'], twin.vcsim_state['port']))
    counts = twin.vcsim_requests()['counts']
    assert counts['CreateContainerView'] == counts['DestroyView'] == 1


def test_missing_kubeconfig_for_node_selection(twin, run_module):
    result = run_module(MODULE, args(twin, node_names=['ocp1-worker-0']), env={'K8S_AUTH_KUBECONFIG': '/nonexistent/kubeconfig'})
    assert failed(result, twin) == 'kubeconfig /nonexistent/kubeconfig (from the kubeconfig option or K8S_AUTH_KUBECONFIG) does not exist'
    assert result['kubernetes_version']


def test_bad_token_for_node_selection(twin, run_module):
    bad_token = 'sha256~not-the-right-token'
    result = run_module(MODULE, args(twin, node_names=['ocp1-worker-0'], kubernetes={
        'host': twin.kube_state['url'], 'api_key': bad_token, 'ca_cert': twin.kube_state['ca_file']}))
    msg = failed(result, twin)
    assert msg.startswith('list nodes (GET %s/api/v1/nodes?limit=500) failed: HTTP 401 Unauthorized' % twin.kube_state['url'])
    assert 'the host option (K8S_AUTH_HOST)' in msg
    assert bad_token not in json.dumps(result) and bad_token not in result['_stderr']


def test_node_options_are_mutually_exclusive(twin, run_module):
    assert failed(run_module(MODULE, args(twin, node_names=['a'], node_selector='b'))) == 'parameters are mutually exclusive: node_names|node_selector'


@pytest.mark.parametrize('missing', ['datacenter', 'cluster'])
def test_required_options(twin, run_module, missing):
    values = args(twin)
    del values[missing]
    assert failed(run_module(MODULE, values)) == 'missing required arguments: %s' % missing
