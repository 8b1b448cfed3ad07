package contract

// Compiled is a TypeScript step compiled to JavaScript. Store both texts
// when the step is saved and send Compiled in later Requests: the step then
// never recompiles, and its errors still report TypeScript positions.
type Compiled struct {
	// JS is the JavaScript step body the runtime executes.
	JS string `json:"js"`
	// Map is the source map (v3 JSON) from JS back to the TypeScript.
	Map string `json:"map"`
}

// Diagnostic is one problem found compiling a TypeScript step, at a
// 1-based line and column (in characters) of the TypeScript source.
type Diagnostic struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}
