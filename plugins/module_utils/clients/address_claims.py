# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The address claims of node_nic_address: how concurrent writers never configure one node address on two nodes.

A real run creates its new NodeNetworkConfigurationPolicies parked (matching no node, ``write_policies``), then
``claim_addresses`` lists the policies again: a claim that lost to another writer's (plan/node_network.py
``losing_claims``) is re-planned while still parked, after a random part of a doubling backoff (``claim_backoff``),
and only the claims that stand are activated. ``settle_claims`` waits, before planning, for another writer's parked
losers to be re-allocated; ``record_final_allocations`` reports the addresses the policies hold in the end.

The decisions are the plans' (plan/node_network.py, plan/nic_addresses.py); the reads and writes go through the one
Kubernetes API layer (kube.py). Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients import parallel
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors
from ansible_collections.ocp.egressip.plugins.module_utils.plan import nic_addresses as na
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn

# what _create returns when another writer created the same policy first (HTTP 409)
ALREADY_EXISTS = object()
# what a guarded patch returns when the claim changed since the policy was listed (a failed `test` operation: HTTP 422)
CHANGED_MEANWHILE = object()


def write_policies(module, plan):
    k8s, check = module.k8s, module.check_mode
    # a real run creates new policies parked (matching no node) until claim_addresses has checked their addresses
    calls = [lambda body=body: _create(k8s, body if check else nn.parked(body), check) for body in plan['create']]
    calls += [lambda name=name, body=body: kube.patch(k8s, kube.NNCPS, name, body, check) for name, body in plan['patch']]
    results, failures = parallel.run_parallel(calls)
    parallel.raise_failures(failures, len([item for item in results if item is not None]), 'NodeNetworkConfigurationPolicy writes')
    taken = [body['metadata']['name'] for body, written in zip(plan['create'], results) if written is ALREADY_EXISTS]
    if taken:
        # another writer created the same node's policy a moment ago: its allocation stands, this run waits for it
        module.warn('Another writer created %s at the same time; its address allocation is kept.' % ', '.join(taken))
        plan['create'] = [body for body in plan['create'] if body['metadata']['name'] not in taken]
    plan['taken'] = taken


def _create(k8s, body, check):
    try:
        return kube.create(k8s, kube.NNCPS, body, check)
    except ModuleFailure as failure:
        if failure.details.get('status') == 409 and not check:
            return ALREADY_EXISTS
        raise


# a live writer re-allocates a lost claim within one backoff (claim_backoff: at most 30 s): a parked loser unchanged for
# longer than this was left by a writer that is gone
LEFT_BEHIND_SECONDS = 40


def settle_claims(module, snapshot, clock=None):
    """Wait (bounded) while another writer re-allocates parked policies that lost an address claim.

    A writer ignoring the cluster lock settles its claims within one backoff; planning meanwhile would see two policies
    holding one address. The wait ends when no loser is left, when every one left has kept its addresses for
    LEFT_BEHIND_SECONDS (its writer is gone), or after wait_timeout. A parked loser left then is re-allocated by this
    run when it is one of this run's nodes (plan['reclaim']) and ignored otherwise: a parked policy configures no node.
    """
    if module.check_mode or not nn.unsettled_claims(snapshot['nncps']):
        return
    clock = clock or parallel.Clock(module.params['wait_timeout'], module.params['wait_sleep'])
    seen = {}   # name -> (its addresses, when first seen holding them)
    while not clock.expired():
        unsettled = set(nn.unsettled_claims(snapshot['nncps']))
        losers = dict((item['metadata']['name'], nn.policy_allocation(item)['addresses']) for item in snapshot['nncps']
                      if item['metadata']['name'] in unsettled)
        now = clock.now()
        seen = dict((name, seen[name] if seen.get(name, (None,))[0] == version else (version, now)) for name, version in losers.items())
        if all(now - since >= LEFT_BEHIND_SECONDS for _version, since in seen.values()):
            return
        clock.sleep()
        snapshot['nncps'] = kube.list_objects(module.k8s, kube.NNCPS)


def claim_addresses(module, entries, networks, metrics, snapshot, plan, attempts=8, clock=None, jitter=random.random):
    """Make sure no other policy claimed the addresses of the policies just created, then activate them; the names of the
    policies re-allocated or activated.

    Another writer ignoring the cluster lock may have allocated the same address from the same snapshot: the claim made
    first keeps it (nn.losing_claims: an active policy, else the older creationTimestamp; the same second makes both
    lose), a losing one of this run is re-planned and patched while still parked, and from then on yields its new
    address to any other holder (its creationTimestamp predates that claim). So an address is never configured on two
    nodes.

    Two writers that lost together re-plan from the same list and would pick the same next address again and again (both
    yielding, both lose): before re-planning each waits a random part of a growing backoff and lists again, so one of
    them claims first and the other sees that claim.

    Every re-plan and every activation is a JSON patch that first tests the claim it was decided on (still parked, the
    same addresses): when another writer changed the claim in between (a run re-allocating a parked loser it found, or
    the writer that created it activating it), the patch is refused whole (422) and the claim is checked again on a new
    list. Only parked policies are re-planned: one that another writer activated meanwhile is settled and never moves.
    """
    params, k8s = module.params, module.k8s
    clock = clock or parallel.Clock()
    created = [body['metadata']['name'] for body in plan['create']] + plan['reclaim']
    yielding = set(plan['reclaim'])   # re-allocated by this run: their timestamps say nothing of their new addresses
    written = set()   # the policies this function re-allocated or activated
    changing = []
    policies = kube.list_objects(k8s, kube.NNCPS)
    for attempt in range(attempts + 1):
        losers = nn.losing_claims(policies, _parked(policies, created), yielding)
        if losers and attempt < attempts:
            clock.sleep(claim_backoff(params['wait_sleep'], attempt, jitter()))
            policies = kube.list_objects(k8s, kube.NNCPS)
            losers = nn.losing_claims(policies, _parked(policies, created), yielding)
        if not losers:
            if not _activate(k8s, policies, _parked(policies, created), written):
                break
            policies = kube.list_objects(k8s, kube.NNCPS)   # a policy changed since the list: check its claim again
            continue
        if attempt == attempts:
            raise Refused([catalogue_finding(
                'node_address_claim_conflict', 'policies %s kept losing their node addresses to other writers after %d attempts.'
                % (', '.join(losers), attempts), objects=[{'kind': nn.POLICY_KIND, 'name': name} for name in losers])],
                written=_written_names(created))
        written.update(_replan(module, entries, networks, metrics, snapshot, plan, policies, losers, created))
        yielding.update(losers)
        policies = kube.list_objects(k8s, kube.NNCPS)
    else:
        changing = _parked(policies, created)   # the last activation found a claim changed: settled since (activated)?
    if changing:
        raise Refused([catalogue_finding(
            'node_address_claim_conflict', 'policies %s changed under every activation (another writer keeps writing them) after %d '
            'attempts.' % (', '.join(changing), attempts), objects=[{'kind': nn.POLICY_KIND, 'name': name} for name in changing])],
            written=_written_names(created))
    record_final_allocations(plan, policies)
    record_final_views(plan, policies, plan.get('taken', []))
    return sorted(written)


def _parked(policies, names):
    """The names of `names` whose policy is still parked (one another writer activated is settled; one deleted is gone)."""
    return [item['metadata']['name'] for item in policies if item['metadata']['name'] in names and nn.is_parked(item)]


def _replan(module, entries, networks, metrics, snapshot, plan, policies, losers, created):
    """Re-allocate the losing claims while they stay parked; one write per policy, in parallel, each guarded by the claim it
    replaces. Returns the names of the policies written."""
    params = module.params
    current = dict((item['metadata']['name'], item) for item in policies)
    snapshot['nncps'] = [item for item in policies if item['metadata']['name'] not in losers]
    nodes = set(nn.policy_allocation(current[name])['node'] for name in losers)
    replan = na.plan_nic_addresses([entry for entry in entries if entry['node'] in nodes], networks, metrics,
                                   params['interface_name'], snapshot, reserve_contested=True)
    if errors(replan['findings']):
        raise Refused(replan['findings'], written=_written_names(created))
    calls = [lambda body=body: _guarded_patch(module.k8s, current[body['metadata']['name']],
                                              nn.owned_patch(current[body['metadata']['name']], nn.parked(body)))
             for body in replan['create']]
    results, failures = parallel.run_parallel(calls)
    parallel.raise_failures(failures, len([item for item in results if item is not None]), 'NodeNetworkConfigurationPolicy re-allocation')
    moved = dict((item['node'], item) for item, result in zip(replan['allocations'], results) if result is not CHANGED_MEANWHILE)
    patched = [body['metadata']['name'] for body, result in zip(replan['create'], results) if result is not CHANGED_MEANWHILE]
    plan['allocations'] = [moved.get(item['node'], item) for item in plan['allocations']]
    # what the diff shows: the claims as re-allocated, not as first planned
    plan.setdefault('after', {}).update((name, replan['after'][name]) for name in patched if name in replan.get('after', {}))
    module.warn('Another writer claimed the same node address(es) at the same time: %s re-allocated (%s).'
                % (', '.join(losers), ', '.join('%s %s' % (item['node'], item['address']) for item in moved.values())))
    return patched


def _activate(k8s, policies, names, written):
    """Activate the parked policies `names` as listed (added to `written`); the names whose claim changed since, else []."""
    current = dict((item['metadata']['name'], item) for item in policies)
    results, failures = parallel.run_parallel([lambda name=name: _guarded_patch(k8s, current[name], nn.activation_patch())
                                               for name in names])
    parallel.raise_failures(failures, len([item for item in results if item is not None]), 'NodeNetworkConfigurationPolicy activation')
    written.update(name for name, result in zip(names, results) if result is not CHANGED_MEANWHILE)
    return [name for name, result in zip(names, results) if result is CHANGED_MEANWHILE]


def _guarded_patch(k8s, listed, body):
    """The merge patch `body` as one JSON patch that applies only while the policy is parked with the allocation it had
    when `listed` (nn.claim_guard: ``test`` operations, a compare-and-swap on the claim, not on the whole object, so a
    status the NMState operator wrote meanwhile does not count): CHANGED_MEANWHILE when the claim changed (422)."""
    try:
        return kube.json_patch(k8s, kube.NNCPS, listed['metadata']['name'], nn.claim_guard(listed) + nn.json_patch_of(listed, body), False)
    except ModuleFailure as failure:
        if failure.details.get('status') == 422:
            return CHANGED_MEANWHILE
        raise


def claim_backoff(wait_sleep, attempt, draw):
    """Seconds to wait before re-planning a lost claim: a random part (draw in [0, 1)) of wait_sleep doubled per attempt,
    at most 30 s."""
    return min(30.0, max(0.2, float(wait_sleep)) * (2 ** attempt)) * draw


def record_final_allocations(plan, policies):
    """The addresses the policies hold once the claims settled (another writer's, for a policy it created first)."""
    final = dict((item['node'], item) for item in (nn.policy_allocation(policy) for policy in policies) if item)
    for item in plan['allocations']:
        held = final.get(item['node'])
        if held and item['policy'] in plan.get('taken', []) + plan['reclaim'] + [entry['metadata']['name'] for entry in plan['create']]:
            item['address'] = held['addresses'].get(4) or held['addresses'].get(6)
            item['ipv6_address'] = held['addresses'].get(6) if 4 in held['addresses'] else None


def record_final_views(plan, policies, names):
    """plan['after'] (what the diff shows) of the policies `names` as `policies` lists them once settled: a policy another
    writer created at the same time keeps that writer's allocation, not the one this run planned. One that writer has
    not activated yet shows as it will be once active (without the parking selector, which is no part of the allocation)."""
    listed = dict((item['metadata']['name'], item) for item in policies)
    for name in names:
        if name in listed and name in plan.get('after', {}):
            plan['after'][name] = nn.owned_view(nn.unparked(listed[name]), plan['after'][name])


def _written_names(names):
    return 'policies %s (parked: they match no node yet)' % ', '.join(names)
