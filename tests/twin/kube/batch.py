"""batch/v1 CronJob: the defaults and the validation the API server applies to its writes.

Follows kubernetes/kubernetes pkg/apis/batch/v1/defaults.go `SetDefaults_CronJob` (and the PodSpec and Container
defaults of pkg/apis/core/v1/defaults.go inside the job template), pkg/apis/batch/validation/validation.go
`ValidateCronJobCreate` / `ValidateCronJobUpdate` (`validateCronJobSpec`, `validateScheduleFormat`,
`ValidateJobTemplateSpec`: a job's pods restart `OnFailure` or `Never`; `ValidateResourceRequirements`; the containers'
quantities in canonical form, quantity.py) and the schedule syntax of robfig/cron/v3
`ParseStandard` (five fields or a descriptor). No controller runs: the twin creates no Jobs from a CronJob.
"""

import re

from . import quantity
from .errors import FieldError

# a Job's name is the CronJob's plus 11 characters (-<minutes since epoch>); the Job name must stay a label value
CRONJOB_NAME_LIMIT = 52
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
JOB_RESTART_POLICIES = ("OnFailure", "Never")
# robfig/cron/v3 parser.go: bounds of minute, hour, day of month, month, day of week, and the names it knows
_BOUNDS = ((0, 59, {}), (0, 23, {}), (1, 31, {}),
           (1, 12, dict((name, index + 1) for index, name in enumerate(
               ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")))),
           (0, 6, dict((name, index) for index, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat")))))
_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$")


def _number(text, names):
    if text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        raise ValueError("failed to parse int from %s: strconv.Atoi: parsing %r: invalid syntax" % (text, text))
    return int(text)


def _field_errors(field, bounds):
    low, high, names = bounds
    for part in field.split(","):
        span, _slash, step = part.partition("/")
        if span in ("*", "?"):
            start, end = low, high
        else:
            first, _dash, last = span.partition("-")
            start = _number(first, names)
            end = _number(last, names) if _dash else start
        if _slash and (not step.isdigit() or int(step) == 0):
            raise ValueError("step of range should be a positive number: %s" % part)
        if start < low:
            raise ValueError("beginning of range (%d) below minimum (%d): %s" % (start, low, part))
        if end > high:
            raise ValueError("end of range (%d) above maximum (%d): %s" % (end, high, part))
        if start > end:
            raise ValueError("beginning of range (%d) beyond end of range (%d): %s" % (start, end, part))


def schedule_problem(schedule):
    """robfig/cron ParseStandard's error for `schedule`, or None (wording of the range errors as in parser.go)."""
    text = schedule.strip()
    if text.startswith("@"):
        if text in _DESCRIPTORS:
            return None
        if text.startswith("@every "):
            return None if _DURATION.match(text[len("@every "):].strip()) else "failed to parse duration %s" % text
        return "unrecognized descriptor: %s" % text
    fields = text.split()
    if len(fields) != 5:
        return "expected exactly 5 fields, found %d: %s" % (len(fields), fields)
    try:
        for field, bounds in zip(fields, _BOUNDS):
            _field_errors(field, bounds)
    except ValueError as problem:
        return str(problem)
    return None


def default_cronjob(cronjob):
    """SetDefaults_CronJob, then the PodSpec and Container defaults of the job template's pod."""
    spec = cronjob.setdefault("spec", {})
    for key, value in (("concurrencyPolicy", "Allow"), ("suspend", False), ("successfulJobsHistoryLimit", 3),
                       ("failedJobsHistoryLimit", 1)):
        spec.setdefault(key, value)
    pod = spec.setdefault("jobTemplate", {}).setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})
    for key, value in (("restartPolicy", "Always"), ("dnsPolicy", "ClusterFirst"), ("schedulerName", "default-scheduler"),
                       ("terminationGracePeriodSeconds", 30), ("securityContext", {})):
        pod.setdefault(key, value)
    for container in pod.get("containers") or []:
        image = container.get("image") or ""
        latest = ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest")
        container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
    quantity.canonical_containers(pod, "CronJob")


def _non_negative(spec, key, path):
    value = spec.get(key)
    if value is not None and (not isinstance(value, int) or value < 0):
        return [FieldError("%s.%s" % (path, key), "invalid", "must be greater than or equal to 0", value)]
    return []


def _pod_errors(pod, path):
    containers = pod.get("containers") or []
    errors = [] if containers else [FieldError(path + ".containers", "required")]
    for index, container in enumerate(containers):
        where = "%s.containers[%d]" % (path, index)
        if not container.get("name"):
            errors.append(FieldError(where + ".name", "required"))
        if not container.get("image"):
            errors.append(FieldError(where + ".image", "required"))
    errors.extend(quantity.resource_errors(pod, path))
    restart = pod.get("restartPolicy")
    if restart not in JOB_RESTART_POLICIES:
        errors.append(FieldError(path + ".restartPolicy", "required" if not restart else "unsupported",
                                 'valid values: "OnFailure", "Never"', restart))
    return errors


def cronjob_errors(cronjob):
    """ValidateCronJobCreate / ValidateCronJobUpdate on the defaulted object."""
    errors = []
    name = (cronjob.get("metadata") or {}).get("name") or ""
    if len(name) > CRONJOB_NAME_LIMIT:
        errors.append(FieldError("metadata.name", "invalid", "must be no more than %d characters" % CRONJOB_NAME_LIMIT, name))
    spec = cronjob.get("spec") or {}
    schedule = spec.get("schedule")
    if not schedule:
        errors.append(FieldError("spec.schedule", "required"))
    elif "TZ" in schedule:
        errors.append(FieldError("spec.schedule", "invalid", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead", schedule))
    else:
        problem = schedule_problem(schedule)
        if problem:
            errors.append(FieldError("spec.schedule", "invalid", problem, schedule))
    if spec.get("concurrencyPolicy") not in CONCURRENCY_POLICIES:
        errors.append(FieldError("spec.concurrencyPolicy", "unsupported", 'supported values: "Allow", "Forbid", "Replace"',
                                 spec.get("concurrencyPolicy")))
    for key in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errors.extend(_non_negative(spec, key, "spec"))
    job = (spec.get("jobTemplate") or {}).get("spec") or {}
    errors.extend(_non_negative(job, "backoffLimit", "spec.jobTemplate.spec"))
    deadline = job.get("activeDeadlineSeconds")
    if deadline is not None and (not isinstance(deadline, int) or deadline <= 0):
        errors.append(FieldError("spec.jobTemplate.spec.activeDeadlineSeconds", "invalid", "must be greater than 0", deadline))
    errors.extend(_pod_errors((job.get("template") or {}).get("spec") or {}, "spec.jobTemplate.spec.template.spec"))
    return errors
