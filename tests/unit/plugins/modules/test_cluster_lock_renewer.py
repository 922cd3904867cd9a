"""cluster_lock's renewer (renew: true), without forking: what runs in the detached process - its own copies of a
data-given client certificate, its own connections, the renewal bounded by max_hold, its copies removed at the end."""

import os

from ansible_collections.ocp.egressip.plugins.modules import cluster_lock


class Client(object):
    def __init__(self):
        self.connection = object()
        self._pool = 'the module run\'s pool'


class Store(object):
    def __init__(self):
        self.client = Client()


def test_the_renewer_renews_with_its_own_files_and_connections_and_removes_its_files_at_the_end(monkeypatch, tmp_path):
    own = tmp_path / 'renewer-files'
    seen = {}

    def copies(connection):
        seen['copied_from'] = connection

        def in_child():
            own.mkdir()
            return str(own)
        return in_child

    def hold(store, holder, duration, owner, until=None):
        seen.update(pool=store.client._pool, files=os.path.isdir(str(own)), holder=holder, duration=duration, owner=owner, until=until)
        return 'released', 3

    def in_background(body):
        seen['started'] = True
        body()
        return 4242

    monkeypatch.setattr(cluster_lock.kubeconfig, 'detached_copies', copies)
    monkeypatch.setattr(cluster_lock, 'hold', hold)
    monkeypatch.setattr(cluster_lock.lease, 'in_background', in_background)
    monkeypatch.setattr(cluster_lock.time, 'monotonic', lambda: 100.0)
    store = Store()
    pid = cluster_lock.start_renewer(store, 'run-1', {'max_hold': 60, 'lease_duration': 9}, {'pid': 1})
    assert pid == 4242 and seen['copied_from'] is store.client.connection
    assert seen['pool'] is None and seen['files'], 'it renews over connections of its own, with its own certificate files'
    assert (seen['holder'], seen['duration'], seen['owner'], seen['until']) == ('run-1', 9, {'pid': 1}, 160.0)
    assert not own.exists(), 'its copies are removed when the renewal ends'


def test_the_renewer_removes_its_files_also_when_the_renewal_raises(monkeypatch, tmp_path):
    own = tmp_path / 'renewer-files'

    def in_child():
        own.mkdir()
        return str(own)

    def hold(*_args, **_kwargs):
        raise RuntimeError('the API went away')

    def in_background(body):
        try:
            body()
        except RuntimeError:
            pass   # lease.in_background ends the process whatever the body raises
        return 1

    monkeypatch.setattr(cluster_lock.kubeconfig, 'detached_copies', lambda connection: in_child)
    monkeypatch.setattr(cluster_lock, 'hold', hold)
    monkeypatch.setattr(cluster_lock.lease, 'in_background', in_background)
    cluster_lock.start_renewer(Store(), 'run-1', {'max_hold': 60, 'lease_duration': 9}, None)
    assert not own.exists()
