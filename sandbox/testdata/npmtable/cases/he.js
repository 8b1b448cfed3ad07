import he from "he";
return {
  encode: he.encode("foo © bar ≠ baz 𝌆 qux"),
  named: he.encode("<script>&</script>", { useNamedReferences: true }),
  decode: he.decode("foo &copy; bar &ne; baz &#x1D306; qux"),
  escape: he.escape("<img src='x'>"),
  version: he.version,
};
