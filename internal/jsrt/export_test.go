package jsrt

// hasPreloaded reports whether some package set has a VM ready.
func (r *Runtime) hasPreloaded() bool {
	r.pkgMu.Lock()
	defer r.pkgMu.Unlock()
	for _, ps := range r.pkgSets {
		if len(ps.ready) > 0 {
			return true
		}
	}
	return false
}
