"""What the module and playbook tests read from the twin around a run, with the kubernetes client (nothing of the
collection): the request logs reset before it and nothing written by it, where every egress IP is assigned, and the
cluster lock's Lease.

The module tests import it as `_twin_reads`; the playbook tests put tests/integration/modules on sys.path first, as for
_egress_cluster.
"""

from twin.fixture import kube_writes, vcsim_writes

EGRESSIPS = dict(group='k8s.ovn.org', version='v1', plural='egressips')


def reset_requests(twin):
    """Empty both request logs, Kubernetes and vCenter, before the run a test measures."""
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()


def assert_nothing_written(twin):
    """Not one write on either side since the logs were reset (the cluster lock's Lease not counted: twin.fixture.kube_writes)."""
    writes = kube_writes(twin)
    assert writes == 0, '%d Kubernetes writes' % writes
    writes = vcsim_writes(twin)
    assert not writes, 'vCenter writes: %s' % writes


def assignments(twin):
    """{(object, ip): node} over every EgressIP object."""
    result = {}
    for item in twin.custom_objects().list_cluster_custom_object(**EGRESSIPS)['items']:
        for entry in (item.get('status') or {}).get('items') or []:
            result[(item['metadata']['name'], entry['egressIP'])] = entry['node']
    return result


def lease(twin, name='egressip-lock', namespace='openshift-machine-api'):
    """The cluster lock's Lease (a V1Lease of the kubernetes client), or None while there is none."""
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    try:
        return client.CoordinationV1Api(twin.api_client()).read_namespaced_lease(name, namespace)
    except client.exceptions.ApiException as exc:
        if exc.status == 404:
            return None
        raise
