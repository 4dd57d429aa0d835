"""checks.py: the assertions of the CLI's Python tests: a failure names what was checked
and what differed (long values shortened), and stops the test."""


class Failure(AssertionError):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def short(v, limit=400):
    text = repr(v)
    return text if len(text) <= limit else text[:limit // 2] + " ... " + text[-limit // 2:]


def equal(got, want, what):
    if got != want:
        raise Failure(f"{what}: got {short(got)}, want {short(want)}")
