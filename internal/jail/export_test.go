package jail

// SetNoCgroupsForTest makes Prepare use the rlimit fallback for memory and
// processes, as on a host without writable cgroups. Tests that call it must
// not run in parallel with other jail tests.
func SetNoCgroupsForTest(v bool) (restore func()) {
	old := testHookNoCgroups
	testHookNoCgroups = v
	return func() { testHookNoCgroups = old }
}
