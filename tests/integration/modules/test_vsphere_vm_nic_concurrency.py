"""Three vsphere_vm_nic runs at once: with the cluster lock they write one after the other; writers that ignore it
(each its own Lease, as a writer without the lock) still leave one egress NIC per VM.

The twin holds each reconfigure for five seconds (a slow vCenter) so the three runs read every VM before any of
them writes. With the ReconfigVM_Task guarded by changeVersion, vCenter refuses the stale writes (ConcurrentAccess) and the
losers read again and find the NIC; on a server that ignores changeVersion the duplicate is caught right after the
write and removed by the run that added it.
"""

import json
import os
import subprocess
import sys

import pytest

import _twin_reads as reads
import _vsphere_objects as vo

TWIN_OPTIONS = {'workers': 4}
WORKERS = ['ocp1-worker-%d' % i for i in range(4)]
WRITERS = 3  # module processes started at once
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
COLLECTIONS_DIR = os.path.join(REPO_ROOT, '.build')  # as tests/conftest.py lays it out


def _portgroup(twin, name, vlan):
    return vo.add_distributed_portgroup(twin, name, vlan=vlan, auto_expand=True)


def _nics_on(twin, name, portgroup):
    return [nic for nic in vo.inventory_vm(twin, name)['nics'] if nic['portgroup_key'] == portgroup['key']]


def _run_at_once(twin, tmp_path, network, shared_lock=False):
    """Start WRITERS vsphere_vm_nic processes together (each with its own Lease unless `shared_lock`); their parsed results."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_DIR, PYTHONPATH=COLLECTIONS_DIR)
    env.pop('KUBECONFIG', None)
    env.update(dict((key, str(value)) for key, value in twin.env.items() if value is not None))
    args = {'datacenter': 'DC0', 'network': network, 'switch': 'DSwitch1',
            'node_selector': {'node-role.kubernetes.io/worker': ''}, '_ansible_check_mode': False, '_ansible_diff': False}
    procs = []
    for index in range(WRITERS):
        path = tmp_path / ('args-%s-%d.json' % (network, index))
        lock = {} if shared_lock else {'lock_name': 'ignores-the-lock-%d' % index}
        path.write_text(json.dumps({'ANSIBLE_MODULE_ARGS': dict(args, **lock)}))
        procs.append(subprocess.Popen([sys.executable, '-m', 'ansible_collections.ocp.egressip.plugins.modules.vsphere_vm_nic', str(path)],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        try:
            result = json.loads(out)
        except ValueError:
            pytest.fail('vsphere_vm_nic printed no JSON (rc %s):\n%s\n%s' % (proc.returncode, out, err))
        result['_rc'] = proc.returncode
        results.append(result)
    return results


@pytest.fixture
def slow_vcenter(twin):
    # every reconfigure takes a second (a slow vCenter) and none is applied before each of the three writers has sent
    # its first (the twin's reconfigure_barrier): each writer has read the VMs before any write lands, however far apart
    # a loaded machine starts the three processes. The shared-lock test sets no barrier (its writers run in turn).
    twin._vcsim('POST', '/_twin/options', {'reconfigure_delay': 1.0})  # pylint: disable=protected-access
    yield
    twin._vcsim('POST', '/_twin/options',  # pylint: disable=protected-access
                {'reconfigure_delay': 0, 'change_version_check': True, 'reconfigure_overlap': 'fail'})


@pytest.fixture
def writers_meet(twin):
    twin._vcsim('POST', '/_twin/options', {'reconfigure_barrier': WRITERS})  # pylint: disable=protected-access
    yield
    twin._vcsim('POST', '/_twin/options', {'reconfigure_barrier': 0})  # pylint: disable=protected-access


def _assert_one_nic_per_vm(twin, results, portgroup, refusal_allowed=False):
    for result in results:
        # a run that read a VM between another run's write and its clean-up refuses the two NICs it saw, writing nothing
        refused = refusal_allowed and result['findings'] and all(item['id'] == 'vsphere_vm_nic_ambiguous' for item in result['findings'])
        assert result['_rc'] == 0 or refused, (result.get('msg'), result.get('vms'))
    results = [result for result in results if result['_rc'] == 0]
    for name in WORKERS:
        [nic] = _nics_on(twin, name, portgroup)
        reported = set(vm['mac'] for result in results for vm in result['vms'] if vm['name'] == name)
        assert reported == {nic['mac'].lower()}, (name, reported, nic)


def test_three_writers_at_once_give_each_vm_one_nic(twin, tmp_path, slow_vcenter, writers_meet):
    portgroup = _portgroup(twin, 'ocp-egress-120', 120)
    twin.reset_vcsim_requests()
    results = _run_at_once(twin, tmp_path, 'ocp-egress-120')
    _assert_one_nic_per_vm(twin, results, portgroup)
    # each VM was changed by exactly one run; the other two found its NIC after their stale write was refused
    for name in WORKERS:
        changed = [vm for result in results for vm in result['vms'] if vm['name'] == name and vm['changed']]
        assert [vm['action'] for vm in changed] == ['add'], (name, changed)
    assert twin.vcsim_requests()['counts']['ReconfigVM_Task'] > len(WORKERS), 'the writers did not overlap'
    assert not [item for result in results for item in result['findings']]


def test_a_server_ignoring_change_version_still_ends_with_one_nic(twin, tmp_path, slow_vcenter, writers_meet):
    # vcsim's own leniency: changeVersion ignored and overlapping reconfigures of a VM queued (no TaskInProgress)
    twin._vcsim('POST', '/_twin/options', {'change_version_check': False, 'reconfigure_overlap': 'queue'})  # pylint: disable=protected-access
    portgroup = _portgroup(twin, 'ocp-egress-130', 130)
    results = _run_at_once(twin, tmp_path, 'ocp-egress-130')
    _assert_one_nic_per_vm(twin, results, portgroup, refusal_allowed=True)
    duplicates = [item for result in results for item in result['findings'] if item['id'] == 'vsphere_vm_nic_duplicate_removed']
    assert duplicates and all(item['severity'] == 'warning' for item in duplicates), results
    # which VMs two runs wrote at once depends on timing: the clean-up ran, and only on worker VMs
    cleaned = set(obj['name'] for item in duplicates for obj in item['objects'] if obj['kind'] == 'VirtualMachine')
    assert cleaned and cleaned <= set(WORKERS)


def test_three_writers_sharing_the_cluster_lock_write_one_after_the_other(twin, tmp_path, slow_vcenter):
    portgroup = _portgroup(twin, 'ocp-egress-140', 140)
    twin.reset_vcsim_requests()
    results = _run_at_once(twin, tmp_path, 'ocp-egress-140', shared_lock=True)
    _assert_one_nic_per_vm(twin, results, portgroup)
    assert sorted(result['changed'] for result in results) == [False, False, True], 'the first holder added every NIC'
    assert twin.vcsim_requests()['counts']['ReconfigVM_Task'] == len(WORKERS), 'no stale write: the others read after it'
    assert not [item for result in results for item in result['findings']]
    lease = reads.lease(twin)
    assert lease is not None and lease.spec.holder_identity is None and lease.spec.lease_transitions == 2, 'taken by each run in turn, released by the last'
