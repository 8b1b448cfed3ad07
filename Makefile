# Entry points for developers. The tests are ./scripts/test (what CI runs).

.PHONY: bench

# Side-by-side benchmark: Stepbox next to isolated-vm, quickjs-emscripten,
# python3 -c and Pyodide, on this machine; prints the table and writes
# bench/RESULTS.md. The first run installs the Node peers into
# bench/peers/node_modules with npm. Extra flags: make bench BENCHFLAGS=-quick
bench:
	go run ./bench/sidebyside $(BENCHFLAGS)
