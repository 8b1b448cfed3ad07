package npm

// Unpack is unpack, for the tests of tarball safety.
var Unpack = unpack
