package testenv

// Scale returns n, multiplied by 20 when the race detector slows the
// engine down. Use it for CPU and wall limits that a test does not mean to
// cross.
func Scale(n int) int {
	if Race {
		return n * 20
	}
	return n
}
