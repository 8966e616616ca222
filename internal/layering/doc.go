// Package layering holds the test that keeps fabctl's import graph in the
// shape docs/architecture.md draws: data flows spec → intent → plan →
// apply → validate, drivers (and kube, whose host driver delivers through
// the cluster) sit below the engine and never reach it, a platform
// imports only the contract, its core and the transports, transports
// import other transports, the driver contract and spec, test rigs are
// imported by tests only, and only cmd/fabctl imports the CLI.
// It also keeps platform facts in the platforms' descriptors: no code
// outside drivers/switch compares a value with a platform's name.
// It has no code of its own; `go test ./internal/layering` runs the check
// over the real `go list` output.
package layering
