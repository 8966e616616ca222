// Package layering holds the test that keeps fabctl's import graph in the
// shape docs/architecture.md draws: data flows spec → intent → plan →
// apply → validate, drivers sit below the engine and never import it,
// transports sit below the drivers, and only cmd/fabctl imports the CLI.
// It also keeps platform facts in the platforms' descriptors: no code
// outside drivers/switch compares a value with a platform's name.
// It has no code of its own; `go test ./internal/layering` runs the check
// over the real `go list` output.
package layering
