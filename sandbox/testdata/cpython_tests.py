# Runs CPython's own test modules (Debian's libpython3.11-testsuite) with
# unittest and returns, per module, the outcome of every test ("pass",
# "skip: why", "fail: why", "error: why") and the CPU and wall-clock seconds it took. The same code
# runs as a step (the body of an async def; see TestCPythonTestModules) and
# as a script outside the jail (python3 cpython_tests.py MODULE...), so
# that the two can be compared test by test.
import importlib, io, json, sys, time, unittest


def run_modules(names):
    class Result(unittest.TestResult):
        def __init__(self):
            super().__init__()
            self.outcomes = {}

        def _note(self, test, outcome, why=""):
            tid = test.id() if hasattr(test, "id") else str(test)
            # A test with failing subtests counts once, as failed.
            if self.outcomes.get(tid, ("",))[0] in ("fail", "error"):
                return
            self.outcomes[tid] = (outcome, why)

        def _why(self, err):
            etype, value, _ = err
            line = (str(value).strip().splitlines() or [""])[0]
            return (etype.__name__ + ": " + line)[:200]

        def addSuccess(self, test):
            super().addSuccess(test)
            self._note(test, "pass")

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._note(test, "fail", self._why(err))

        def addError(self, test, err):
            super().addError(test, err)
            self._note(test, "error", self._why(err))

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            self._note(test, "skip", str(reason)[:200])

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            self._note(test, "pass")

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self._note(test, "fail", "unexpected success")

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                failed = issubclass(err[0], test.failureException)
                self._note(test, "fail" if failed else "error", self._why(err))

    out = {}
    for name in names:
        start, wall = time.process_time(), time.monotonic()
        try:
            mod = importlib.import_module("test." + name)
        except Exception as e:
            out[name] = {"importError": type(e).__name__ + ": " + str(e)}
            continue
        res = Result()
        # What the tests print goes nowhere: only the outcomes count.
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = io.StringIO()
        try:
            if hasattr(mod, "test_main") and hasattr(mod, "run_unittest"):
                # A module with its own test_main (test_decimal) sets up
                # and tears down around run_unittest, as regrtest runs it:
                # its classes run there, with this result; its doctests
                # are left out.
                def run_unittest(*classes):
                    for c in classes:
                        unittest.defaultTestLoader.loadTestsFromTestCase(c).run(res)
                mod.run_unittest = run_unittest
                mod.run_doctest = lambda *args, **kwargs: None
                mod.test_main()
            else:
                unittest.defaultTestLoader.loadTestsFromModule(mod).run(res)
        finally:
            sys.stdout, sys.stderr = saved
        out[name] = {
            "outcomes": {tid: o + (": " + why if why else "") for tid, (o, why) in sorted(res.outcomes.items())},
            "cpuS": round(time.process_time() - start, 2),
            "wallS": round(time.monotonic() - wall, 2),
        }
    return out


if __name__ == "__main__":
    json.dump(run_modules(sys.argv[1:]), sys.stdout)
