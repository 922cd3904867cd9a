# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The VM NIC writes of vsphere_vm_nic: the plans of plan/vsphere_network.py applied to the VMs (bounded and in parallel,
each reconfigure guarded by the VM's changeVersion), a VM another writer changed re-planned and retried, and a duplicate
NIC another writer added at the same time taken out. Private module_util."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.plan import vsphere_network as plan
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vcenter
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vsphere_network_io as io

CHANGING = ('add', 'move', 'connect', 'remove')
RETRIES = 3  # re-plans of a VM another writer changed between our read and our write
BUSY_WAIT = 1.0  # seconds before re-reading a VM another task was running on (doubled per attempt)


def replanner(client, targets, networks, network, params, hosted, owned):
    """Read these VMs again and plan them again (after another writer changed them): [(snapshot, entry)]."""
    by_moid = dict((target['vm']['moid'], target) for target in targets)

    def replan(moids):
        fresh = vcenter.read_vm_devices(client, [by_moid[moid]['vm'] for moid in moids], networks)
        again = [dict(by_moid[vm['moid']], vm=vm) for vm in fresh]
        return list(zip(fresh, plan.plan_vm_nics(again, network, params['state'], params['force'], hosted, owned)))
    return replan


def apply(client, entries, snapshots, network, replan, owned, params):
    """Reconfigure (bounded, in parallel), each spec guarded by the VM's changeVersion; re-plan and retry the VMs another
    writer changed meanwhile; read the changed VMs back and remove a duplicate NIC a writer that ignored both the lock
    and changeVersion added at the same time. params: the module's (parallel, timeout, state, force). Returns
    {moid: (nic, error, count)} and 'findings'."""
    outcomes, pending = {}, [entry for entry in entries if entry['action'] in CHANGING]
    for attempt in range(RETRIES + 1):
        outcomes.update(_reconfigure(client, pending, snapshots, network, params))
        stale = [entry['moid'] for entry in pending if io.concurrent_change(outcomes.get(entry['moid'])) or _busy(outcomes.get(entry['moid']))]
        if not stale or attempt == RETRIES:
            break
        if any(_busy(outcomes.get(moid)) for moid in stale):
            time.sleep(BUSY_WAIT * 2 ** attempt)  # the other task must end before this VM can be read and changed again
        pending = []
        for vm, entry in replan(stale):
            if entry['action'] == 'refused':  # the other writer left the VM in a state this run refuses: a failed write
                outcomes[vm['moid']] = 'the VM changed while this run wrote it (another writer): %s' % ' '.join(item['message'] for item in entry['findings'])
                continue
            snapshots[vm['moid']] = vm
            entries[[item['moid'] for item in entries].index(vm['moid'])] = entry
            outcomes.pop(vm['moid'], None)
            if entry['action'] in CHANGING:
                pending.append(entry)
    changing = [entry for entry in entries if entry['action'] in CHANGING and entry['moid'] in outcomes]
    done = [snapshots[entry['moid']] for entry in changing if outcomes[entry['moid']] is None]
    after = dict((vm['moid'], vm) for vm in vcenter.read_vm_devices(client, done, [network])) if done else {}
    kept, findings = _remove_duplicates(client, entries, snapshots, after, network, params, owned)
    results = {'findings': findings}
    for entry in changing:
        error, vm_after = outcomes[entry['moid']], after.get(entry['moid'])
        nic = kept.get(entry['moid'])
        if nic is None and error is None and entry['action'] != 'remove' and vm_after:
            nic = plan.new_nic(snapshots[entry['moid']]['nics'], vm_after['nics'], network)
        results[entry['moid']] = (nic, error, len(vm_after['nics']) if vm_after else None)
    return results


def _busy(error):
    """Whether a reconfigure was refused because another task was running on the VM (TaskInProgress)."""
    return bool(error) and error.startswith('TaskInProgress')


def _reconfigure(client, entries, snapshots, network, params):
    jobs = []
    for entry in entries:
        vm = snapshots[entry['moid']]
        change = io.nic_device_change(entry, vm, network)
        jobs.append((entry['moid'], lambda vm=vm, change=change: io.start_reconfigure(client, vm, change, guarded=True)))
    names = dict((entry['moid'], 'VM %s' % snapshots[entry['moid']]['name']) for entry in entries)
    return io.run_tasks(client, jobs, params['parallel'], params['timeout'], 'reconfiguring the NICs', names)


def _remove_duplicates(client, entries, snapshots, after, network, params, owned):
    """Take out the NICs on the network this run added next to another one (see plan.duplicate_nics); one finding per VM.

    `after` is updated in place with each cleaned VM as read back. Returns ({moid: kept NIC}, findings).
    """
    findings, jobs, kept_by_moid = [], [], {}
    for entry in entries:
        vm_after = after.get(entry['moid'])
        if entry['action'] not in ('add', 'move') or vm_after is None:
            continue
        kept, extra = plan.duplicate_nics(snapshots[entry['moid']]['nics'], vm_after['nics'], network, owned.get(entry['node'], ()))
        if kept is None:
            continue
        kept_by_moid[entry['moid']] = (kept, extra, len([nic for nic in vm_after['nics'] if plan.nic_on_network(nic, network)]))
        if extra:
            change = io.remove_nics_change(vm_after, extra)
            jobs.append((entry['moid'], lambda vm=vm_after, change=change: io.start_reconfigure(client, vm, change, guarded=True)))
    names = dict((moid, 'VM %s' % after[moid]['name']) for moid, _start in jobs)
    outcomes = io.run_tasks(client, jobs, params['parallel'], params['timeout'], 'removing duplicate NICs', names) if jobs else {}
    if outcomes:
        cleaned = [after[moid] for moid in outcomes]
        after.update((vm['moid'], vm) for vm in vcenter.read_vm_devices(client, cleaned, [network]))
    for entry in entries:
        if entry['moid'] not in kept_by_moid:
            continue
        kept, extra, count = kept_by_moid[entry['moid']]
        error = outcomes.get(entry['moid'])
        removed = ', '.join(plan.normalize_mac(nic['mac']) for nic in extra) or 'none (the other writer added the extra one)'
        findings.append(catalogue_finding(
            'vsphere_vm_nic_duplicate_removed',
            'VM %s had %d NICs on %s right after this run wrote (another writer added one at the same time): kept %s, removed %s%s.'
            % (entry['vm'], count, network['name'], plan.normalize_mac(kept['mac']),
               removed, '; the removal failed: %s' % error if error else ''),
            objects=[{'kind': 'VirtualMachine', 'name': entry['vm'], 'moid': entry['moid']}],
            severity='error' if error else 'warning'))
    return dict((moid, item[0]) for moid, item in kept_by_moid.items()), findings
