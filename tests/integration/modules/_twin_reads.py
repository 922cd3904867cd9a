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


def assert_rerun_changes_nothing(twin, run_playbook, playbook, variables):
    """A second run of ``playbook`` with ``variables``: it succeeds, reports nothing changed and writes nothing."""
    reset_requests(twin)
    again = run_playbook(playbook, variables)
    assert again.rc == 0, again
    assert again.changed == 0, again
    assert_nothing_written(twin)


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


def cluster_identity(twin):
    """{'name', 'id', 'api_url'} of the twin's cluster: the Infrastructure's infrastructureName, ClusterVersion's clusterID, its API URL."""
    objects = twin.custom_objects()
    version = objects.get_cluster_custom_object('config.openshift.io', 'v1', 'clusterversions', 'version')
    infrastructure = objects.get_cluster_custom_object('config.openshift.io', 'v1', 'infrastructures', 'cluster')
    return {'name': infrastructure['status']['infrastructureName'], 'id': version['spec']['clusterID'],
            'api_url': twin.kube_state['url'].rstrip('/')}


def assert_report_names_the_cluster(twin, report, markdown=None, page=None, started=None):
    """The report (JSON data) names the twin's cluster and a time made during the test (UTC, ISO 8601, not before
    `started`); its Markdown and HTML (when given) show the cluster's ID and that time, the HTML in its header."""
    import datetime  # pylint: disable=import-outside-toplevel
    expected = cluster_identity(twin)
    cluster = report['cluster']
    assert {key: cluster[key] for key in expected} == expected and cluster['openshift_version'].startswith('4.'), cluster
    assert cluster['unknown'] == {}, cluster
    made = datetime.datetime.strptime(report['generated_at'], '%Y-%m-%dT%H:%M:%SZ')
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    assert (started or now - datetime.timedelta(hours=1)).replace(microsecond=0) <= made <= now, (made, started, now)
    if markdown is not None:
        assert 'Cluster `%s` (ID `%s`, OpenShift %s), API server %s; made %s (UTC).' % (
            expected['name'], expected['id'], cluster['openshift_version'], expected['api_url'], report['generated_at']) in markdown
    if page is not None:
        header = page[page.index('<header>'):page.index('</header>')]
        assert '<dt>Cluster ID</dt><dd>%s</dd>' % expected['id'] in header and '<dt>Cluster</dt><dd>%s</dd>' % expected['name'] in header
        assert '<time datetime="%s">' % report['generated_at'] in header
