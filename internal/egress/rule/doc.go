// Package rule holds the egress rules that need no network: the syntax of
// host patterns, origins, ports and header names and values, and what makes
// a secret binding valid and how it prints with its value redacted.
//
// The FetchProxy (package egress) applies these rules to its policy, its
// bindings and every request; contract.Secret validates with them too. So
// that a program which only talks to a Stepbox server (server/client, over
// contract) does not link the FetchProxy, this package imports nothing but
// the standard library and nothing of egress. Each rule lives here once.
package rule
