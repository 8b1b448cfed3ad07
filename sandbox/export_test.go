package sandbox

// InMap reports whether an id map holds a range (see idsMapped).
var InMap = inMap
