# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writes in parallel with a bound, one failure for all failed writes, and the one Clock of the waits. Private module_util."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

try:
    from concurrent.futures import ThreadPoolExecutor
except ImportError:  # pragma: no cover - Python 2 is not supported
    ThreadPoolExecutor = None

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure

PARALLEL_WRITES = 8


def run_parallel(calls, limit=PARALLEL_WRITES):
    """Run zero-argument callables with at most `limit` at once.

    Returns (results, failures): results in the order of `calls` (None where it failed),
    failures the ModuleFailure of each failed call. Every call runs even when one fails, so
    a re-run only has the failed ones left.
    """
    results, failures = [None] * len(calls), []
    if not calls:
        return results, failures
    if len(calls) == 1 or ThreadPoolExecutor is None:
        for index, call in enumerate(calls):
            try:
                results[index] = call()
            except ModuleFailure as failure:
                failures.append(failure)
        return results, failures
    with ThreadPoolExecutor(max_workers=min(limit, len(calls))) as pool:
        futures = [pool.submit(call) for call in calls]
        for index, future in enumerate(futures):
            try:
                results[index] = future.result()
            except ModuleFailure as failure:
                failures.append(failure)
    return results, failures


def run_beside(background, foreground):
    """(background(), foreground()): ``background`` (waiting on the API) runs in a thread while ``foreground`` (computing)
    runs here; an exception of either is raised once both have ended, the foreground's first."""
    if ThreadPoolExecutor is None:
        return background(), foreground()
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(background)
        try:
            done = foreground()
        finally:
            waited = future.exception()   # the thread ends before the foreground's exception leaves
        if waited is not None:
            raise waited
        return future.result(), done


def raise_failures(failures, done, what):
    """One ModuleFailure for every failed write, saying what was written before (a re-run finishes the rest)."""
    if not failures:
        return
    messages = '; '.join(failure.msg for failure in failures)
    details = dict(failures[0].details)
    details['failed_writes'] = [failure.msg for failure in failures]
    raise ModuleFailure('%s: %d write(s) failed (%s). %d write(s) succeeded before; run again to finish.'
                        % (what, len(failures), messages, done), **details)


class Clock(object):
    """Monotonic time, sleep and an optional deadline for the waits (one object, so unit tests can replace time)."""

    def __init__(self, timeout=None, interval=None, monotonic=time.monotonic, sleep=time.sleep):
        self.now = monotonic
        self._sleep = sleep
        self.interval = interval
        self.deadline = None if timeout is None else monotonic() + timeout

    def expired(self):
        return self.deadline is not None and self.now() >= self.deadline

    def sleep(self, seconds=None):
        self._sleep(self.interval if seconds is None else seconds)
