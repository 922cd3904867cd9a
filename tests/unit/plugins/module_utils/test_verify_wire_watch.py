"""The wire check waits for its probe pods with one watch from a list's resourceVersion taken before it created them
(checks/verify_io.py), and lists them as before when the watch is refused (no `watch` on pods), expires or ends first."""

from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_io
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure


def pod(name, phase, namespace='team-a'):
    return {'metadata': {'name': name, 'namespace': namespace}, 'status': {'phase': phase}}


class Watching(object):
    """The K8s client as the wait uses it: watch() yields the given events (or raises), request() lists the given pods."""

    def __init__(self, events, listed=()):
        self.events, self.listed, self.calls = events, list(listed), []

    def watch(self, resource, path, query, seconds):
        self.calls.append(('watch', path, query, seconds))
        if isinstance(self.events, Exception):
            raise self.events
        yield from self.events

    def request(self, verb, resource, path, query=None, **_kwargs):
        self.calls.append((verb, path, query))
        return {'metadata': {'resourceVersion': '77'}, 'items': self.listed}


def test_the_pods_come_from_one_watch_once_every_one_has_finished():
    events = [{'type': 'ADDED', 'object': pod('p2', 'Pending')}, {'type': 'MODIFIED', 'object': pod('p1', 'Running')},
              {'type': 'MODIFIED', 'object': pod('p2', 'Succeeded')}, {'type': 'MODIFIED', 'object': pod('p1', 'Failed')},
              {'type': 'MODIFIED', 'object': pod('p1', 'never read')}]
    k8s = Watching(events)
    pods = verify_io._watch_pods(k8s, 'r1', 2, 12, '41')
    assert [(item['metadata']['name'], item['status']['phase']) for item in pods] == [('p1', 'Failed'), ('p2', 'Succeeded')]
    assert k8s.calls == [('watch', '/api/v1/pods', {'labelSelector': 'egressip.ocp/probe=r1', 'resourceVersion': '41'}, 12)]


def test_a_refused_expired_or_ended_watch_leaves_the_wait_to_the_list():
    assert verify_io._watch_pods(Watching(ModuleFailure('watch pods: HTTP 403', status=403)), 'r1', 1, 12, '41') is None
    gone = {'type': 'ERROR', 'object': {'kind': 'Status', 'code': 410, 'reason': 'Expired'}}
    assert verify_io._watch_pods(Watching([gone]), 'r1', 1, 12, '41') is None
    assert verify_io._watch_pods(Watching([{'type': 'MODIFIED', 'object': pod('p1', 'Running')}]), 'r1', 1, 12, '41') is None
    deleted = [{'type': 'MODIFIED', 'object': pod('p1', 'Succeeded')}, {'type': 'DELETED', 'object': pod('p1', 'Succeeded')}]
    assert verify_io._watch_pods(Watching(deleted), 'r1', 2, 12, '41') is None


def test_the_watch_starts_where_an_empty_list_of_the_run_s_pods_ended():
    k8s = Watching([])
    assert verify_io._list_version(k8s, 'r1') == '77'
    assert k8s.calls == [('list', '/api/v1/pods', {'labelSelector': 'egressip.ocp/probe=r1', 'limit': 1})]


class FakeTime(object):
    def __init__(self):
        self.now = 1000.0

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class RunningOut(Watching):
    """A watch the server ends at its timeoutSeconds with the probe pod still running; the lists then show it running."""

    def __init__(self, fake_time):
        super(RunningOut, self).__init__([{'type': 'ADDED', 'object': pod('p1', 'Running')}], listed=[pod('p1', 'Running')])
        self.time = fake_time

    def watch(self, resource, path, query, seconds):
        yield from super(RunningOut, self).watch(resource, path, query, seconds)
        self.time.now += seconds

    def request(self, verb, resource, path, query=None, **kwargs):
        if verb == 'create':
            self.calls.append((verb, path, None))
            return kwargs['body']
        if verb == 'get':
            raise AssertionError('no log is read of a pod that did not finish')
        return super(RunningOut, self).request(verb, resource, path, query)

    def list_items(self, resource, path, query=None):
        return self.request('list', resource, path, query)['items']


def test_after_a_watch_that_ran_out_the_list_waits_only_for_the_margin_not_a_second_probe_timeout():
    fake = FakeTime()
    k8s = RunningOut(fake)
    clock = verify_io.parallel.Clock(monotonic=fake.monotonic, sleep=fake.sleep)
    body = {'metadata': {'name': 'p1', 'namespace': 'team-a', 'labels': {verify_io._wire.PROBE_OBJECT_LABEL: 'payments'}}}
    writes = []
    outcomes = verify_io._run_pods(k8s, [body], 'r1', 30, clock, 2.0, writes)
    waited = fake.now - 1000.0
    assert waited <= 30 + 2 * verify_io.POD_LIST_MARGIN + 2.0, waited   # one probe timeout (in the watch), not two
    assert writes == [1] and len(outcomes) == 1 and [call[0] for call in k8s.calls].count('watch') == 1
