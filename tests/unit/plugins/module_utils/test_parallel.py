"""Parallel writes, the one failure for all failed writes, and the one Clock (clients/parallel.py)."""

import threading

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.clients import parallel
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure


def _fail(msg, status=500):
    raise ModuleFailure(msg, status=status)


def test_every_call_runs_and_failures_are_collected_in_order():
    calls = [lambda: 1, lambda: _fail('a failed', 409), lambda: 3]
    results, failures = parallel.run_parallel(calls)
    assert results == [1, None, 3] and [failure.msg for failure in failures] == ['a failed']
    assert parallel.run_parallel([]) == ([], [])
    assert parallel.run_parallel([lambda: 'one']) == (['one'], [])


def test_at_most_limit_calls_run_at_once():
    lock, state = threading.Lock(), {'now': 0, 'peak': 0}
    gate = threading.Barrier(2, timeout=5)

    def call():
        with lock:
            state['now'] += 1
            state['peak'] = max(state['peak'], state['now'])
        gate.wait()
        with lock:
            state['now'] -= 1
        return True

    results, failures = parallel.run_parallel([call] * 6, limit=2)
    assert results == [True] * 6 and not failures and state['peak'] == 2


def test_raise_failures_says_what_was_written_before():
    parallel.raise_failures([], 3, 'writes')  # nothing failed: nothing raised
    with pytest.raises(ModuleFailure) as failure:
        parallel.raise_failures([ModuleFailure('p1 failed', status=409), ModuleFailure('p2 failed', status=500)], 4, 'policy writes')
    assert failure.value.msg == ('policy writes: 2 write(s) failed (p1 failed; p2 failed). 4 write(s) succeeded before; run again to finish.')
    assert failure.value.details['status'] == 409 and failure.value.details['failed_writes'] == ['p1 failed', 'p2 failed']


class FakeTime:
    def __init__(self):
        self.now, self.slept = 100.0, []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_clock_deadline_and_interval():
    fake = FakeTime()
    clock = parallel.Clock(10, 4, monotonic=fake.monotonic, sleep=fake.sleep)
    assert not clock.expired()
    clock.sleep()
    clock.sleep()
    assert not clock.expired() and clock.now() == 108.0
    clock.sleep(2)
    assert clock.expired() and fake.slept == [4, 4, 2]


def test_clock_without_timeout_never_expires():
    fake = FakeTime()
    clock = parallel.Clock(monotonic=fake.monotonic, sleep=fake.sleep)
    clock.sleep(1000)
    assert not clock.expired() and clock.now() == 1100.0


def test_run_beside_runs_the_wait_while_the_foreground_computes_and_returns_both():
    started = threading.Event()

    def background():
        started.set()
        return 'probes'

    def foreground():
        assert started.wait(5), 'the background call runs while the foreground one does'
        return 'evaluated'

    assert parallel.run_beside(background, foreground) == ('probes', 'evaluated')


def test_run_beside_raises_after_both_ended_the_foreground_s_error_first():
    ended = threading.Event()

    def slow_failure():
        ended.wait(0.05)
        ended.set()
        raise ModuleFailure('probe pods: HTTP 500', status=500)

    def broken():
        raise ValueError('evaluation failed')

    with pytest.raises(ValueError):
        parallel.run_beside(slow_failure, broken)
    assert ended.is_set(), 'the background call had ended when the error left'
    with pytest.raises(ModuleFailure) as failure:
        parallel.run_beside(slow_failure, lambda: 'evaluated')
    assert failure.value.details == {'status': 500}
