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


def settle_claims(module, snapshot, limit=15):
    """Wait (bounded) while another writer re-allocates parked policies that lost an address claim.

    A writer ignoring the cluster lock settles its claims within seconds; planning meanwhile would see two policies
    holding one address. A parked loser left after the wait (its writer was killed) is re-allocated by this run when it
    is one of this run's nodes (plan['reclaim']) and ignored otherwise: a parked policy configures no node.
    """
    if module.check_mode or not nn.unsettled_claims(snapshot['nncps']):
        return
    clock = parallel.Clock(min(limit, module.params['wait_timeout']), module.params['wait_sleep'])
    while nn.unsettled_claims(snapshot['nncps']) and not clock.expired():
        clock.sleep()
        snapshot['nncps'] = kube.list_objects(module.k8s, kube.NNCPS)


def claim_addresses(module, entries, networks, metrics, snapshot, plan, attempts=6, clock=None, jitter=random.random):
    """Make sure no other policy claimed the addresses of the policies just created, then activate them.

    Another writer ignoring the cluster lock may have allocated the same address from the same snapshot: the claim made
    first keeps it (nn.losing_claims: an active policy, else the older creationTimestamp; the same second makes both
    lose), a losing one of this run is re-planned and patched while still parked, and from then on yields its new
    address to any other holder (its creationTimestamp predates that claim). So an address is never configured on two
    nodes.

    Two writers that lost together re-plan from the same list and would pick the same next address again and again (both
    yielding, both lose): before re-planning each waits a random part of a growing backoff and lists again, so one of
    them claims first and the other sees that claim.
    """
    params, k8s = module.params, module.k8s
    clock = clock or parallel.Clock()
    created = [body['metadata']['name'] for body in plan['create']] + plan['reclaim']
    yielding = set(plan['reclaim'])   # re-allocated by this run: their timestamps say nothing of their new addresses
    for attempt in range(attempts):
        policies = kube.list_objects(k8s, kube.NNCPS)
        losers = nn.losing_claims(policies, created, yielding)
        if losers:
            clock.sleep(claim_backoff(params['wait_sleep'], attempt, jitter()))
            policies = kube.list_objects(k8s, kube.NNCPS)
            losers = nn.losing_claims(policies, created, yielding)
        if not losers:
            break
        current = dict((item['metadata']['name'], item) for item in policies)
        snapshot['nncps'] = [item for item in policies if item['metadata']['name'] not in losers]
        nodes = set(nn.policy_allocation(current[name])['node'] for name in losers)
        replan = na.plan_nic_addresses([entry for entry in entries if entry['node'] in nodes], networks, metrics,
                                       params['interface_name'], snapshot)
        if errors(replan['findings']):
            raise Refused(replan['findings'], written=_written_names(created))
        for body in replan['create']:
            kube.patch(k8s, kube.NNCPS, body['metadata']['name'], nn.owned_patch(current[body['metadata']['name']], nn.parked(body)), False)
        yielding.update(losers)
        moved = dict((item['node'], item) for item in replan['allocations'])
        plan['allocations'] = [moved.get(item['node'], item) for item in plan['allocations']]
        module.warn('Another writer claimed the same node address(es) at the same time: %s re-allocated (%s).'
                    % (', '.join(losers), ', '.join('%s %s' % (item['node'], item['address']) for item in replan['allocations'])))
    else:
        raise Refused([catalogue_finding(
            'node_address_claim_conflict', 'policies %s kept losing their node addresses to other writers after %d attempts.'
            % (', '.join(losers), attempts), objects=[{'kind': nn.POLICY_KIND, 'name': name} for name in losers])],
            written=_written_names(created))
    record_final_allocations(plan, policies)
    results, failures = parallel.run_parallel([lambda name=name: kube.patch(k8s, kube.NNCPS, name, nn.activation_patch(), False)
                                               for name in created])
    parallel.raise_failures(failures, len([item for item in results if item is not None]), 'NodeNetworkConfigurationPolicy activation')


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


def _written_names(names):
    return 'policies %s (parked: they match no node yet)' % ', '.join(names)
