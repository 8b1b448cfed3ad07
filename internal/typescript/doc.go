// Package typescript compiles TypeScript steps into JavaScript steps with
// esbuild's Go API and maps JavaScript positions back to TypeScript ones.
//
// A step is the body of an async function: it may await and return at top
// level. TypeScript compiles when a step is saved (DESIGN.md, decision 4):
//
//	out, err := typescript.Compile(src) // out.JS, out.Map; err is a *CompileError
//
// The caller stores out.JS and out.Map and runs out.JS as JavaScript steps
// run, as the body of an async function. When the step throws, the runtime
// maps the stack through the source map:
//
//	m, _ := typescript.ParseSourceMap(out.Map)
//	stack = m.RewriteStack(stack, 0)            // frames "step.js:L:C" -> "step.ts:L':C'"
//	line, col, ok := m.Original(jsLine, jsCol) // e.g. for a SyntaxError's position
//
// # Why the step is compiled as a module
//
// The obvious design wraps the step in "async function f() {" … "}" and
// compiles that. Esbuild (like TypeScript) refuses namespaces and imports
// inside a function, though, and those must compile. So Compile gives
// esbuild the step as it is, as the top level of a .ts file, where
// namespaces, enums, "declare", imports and top-level await are all at
// home. What a module does not allow is a top-level return. So Compile
// replaces "return" keywords with placeholders of the same length ("throw "
// when an expression follows, a "$R$()" call otherwise), compiles, and
// writes "return" back over the placeholders, which the source map locates
// in the output (see returns.go). It first replaces every return a light
// scan of the source finds, nested ones included, and compiles once; should
// the scan be wrong, the output check fails and Compile starts over,
// replacing only the returns esbuild reports as top-level, at the cost of a
// second esbuild run.
//
// The output of a module is a valid function body: declarations become
// locals of the runtime's function, await and return work as in a step.
// There are no wrapper lines to strip, so the source map needs no offsets:
// its generated line 1 is the first line of out.JS, its original line 1 the
// first line of the TypeScript source. Compile still rewrites the map to
// follow its own edits of the output.
//
// The output is always strict mode code ("use strict" comes first, from
// TypeScript's alwaysStrict): a top-level await would make esbuild treat
// the step as a module and apply module (strict) rules anyway, and a step
// should not change semantics with the presence of an await.
//
// Imports used only as types are erased, as in TypeScript. Other imports
// are kept, one per line, and moved to the start of out.JS, after
// "use strict", where a runtime that resolves the imports of JavaScript
// steps finds them the same way. An export statement is a compile error:
// nothing can import a step.
//
// Esbuild's target is ES2023. Decorators are the standard (TC39) ones, the
// TypeScript 5 default; they and "using" declarations are lowered into
// helper functions that esbuild puts at the start of out.JS and that have no
// source mapping. (QuickJS has no Symbol.dispose: for "using" to work the
// runtime defines Symbol.dispose as Symbol.for("Symbol.dispose"), and
// Symbol.asyncDispose likewise, the symbols the helpers fall back to.)
// Enums, const enums, namespaces, parameter properties,
// abstract classes, "satisfies" and "as const" compile as in TypeScript.
// There is no type checking.
//
// # Positions
//
// Lines are 1-based. Columns are 1-based and count Unicode code points, the
// unit QuickJS uses in stack traces and syntax errors. That applies to
// Diagnostic, to SourceMap.Original going in and coming out, and to
// RewriteStack. The source map itself counts UTF-16 code units, as the
// format requires: SourceMap converts, using the TypeScript source the map
// carries in "sourcesContent" and, for the rare astral characters esbuild
// leaves in its output, an extension field (see ParseSourceMap).
//
// A diagnostic points at the TypeScript source whether esbuild found it in
// the first or the second pass, since the placeholders keep every offset.
// Warnings do not fail a compilation; they are in Output.Warnings. One
// esbuild warning is lost to the placeholders: the one about an expression
// statement right after a "return" and a newline.
//
// # Stack traces
//
// QuickJS writes frames as "    at name (file:line:col)", or
// "    at file:line:col" for a SyntaxError, and "    at name (native)" for
// built-ins; columns are 1-based code points. modernc.org/quickjs names
// every script passed to VM.Eval or VM.Compile "<eval>"
// (QuickJSEvalFileName), which cannot be changed, and code compiled by the
// Function or AsyncFunction constructor "<input>", two lines below the body's
// own lines ("(async function anonymous(\n) {\n" comes first).
//
// RewriteStack rewrites frames in StepFileName, which is what
// internal/jsrt turns "<input>" frames into (with the body's own line
// numbers), so the runtime calls it on jsrt's stack with offsetCol1 0.
// RewriteStackFile takes another file name, for a runtime that evaluates
// "(async function(){" + out.JS + "\n})" with VM.Eval: file "<eval>",
// offsetCol1 18.
//
// # Caching
//
// Cache memoizes Compile by the SHA-256 of the source in a bounded LRU.
package typescript
