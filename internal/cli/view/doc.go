// Package view renders fabctl's results for people and programs: the plan
// as human text, markdown and the `--json` document, and the value and
// change formatting the CLI's other outputs share. It is a plain library:
// each view is a pure function of its input and options, writing to an
// io.Writer, with no terminal, flag or cobra handling (the CLI in
// internal/cli decides the format and the colours and passes a Style).
//
// It may import the model packages it renders (plan, intent, drivers, spec)
// and the standard library; it must not import internal/cli, apply or any
// driver implementation. Only internal/cli (and tests) import it: plan and
// the other engine packages stay free of rendering.
package view
