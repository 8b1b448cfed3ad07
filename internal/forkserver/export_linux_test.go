package forkserver

// ReapHolders and Now expose reapHolders and now to the tests.
var (
	ReapHolders = reapHolders
	Now         = now
)

// Zombie reports whether pid is a zombie.
func Zombie(pid int) bool {
	st, ok := readStat(pid)
	return ok && st.state == 'Z'
}
