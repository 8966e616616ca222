// Package clicore is the logic fabctl's SSH CLI switch drivers (EOS,
// NX-OS, Cumulus, SONiC) share above the session: the driver core each
// platform driver embeds (Core: connections, the drivers.Driver and
// drivers.Saver methods and the run's record of prior configurations,
// driven by the platform's grammar, Platform, and its Transaction), the
// section step builder (Sections), the indented running-config parser
// (ParseIndented), the mode scripts typed at the CLI (Script), and the
// errors of a device transaction's steps (StepError, IsConnLoss). The
// session itself (dial, auth, known_hosts, scrapligo) is
// drivers/transport/ssh's.
//
// It may import drivers/transport/ssh and the standard library, never a
// platform driver.
package clicore

import "strings"

// ConfigNode is one line of an indented CLI configuration (EOS, NX-OS,
// IOS style) with its sub-mode lines.
type ConfigNode struct {
	Line     string // trimmed, single-spaced
	Children []*ConfigNode
}

// ParseIndented parses a `show running-config` (or rendered CLI) into its
// section tree by indentation. Comment and separator lines ("!..."), blank
// lines and a top-level "end" are dropped; tabs count as one column; a
// line indented less than its predecessor closes sections until one is
// less indented.
func ParseIndented(text string) []*ConfigNode {
	type open struct {
		indent int
		n      *ConfigNode
	}
	var roots []*ConfigNode
	var stack []open
	for _, raw := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		line := strings.TrimRight(raw, " \t")
		t := strings.TrimLeft(line, " \t")
		if t == "" || strings.HasPrefix(t, "!") || (t == "end" && len(t) == len(line)) {
			continue
		}
		indent := len(line) - len(t)
		n := &ConfigNode{Line: strings.Join(strings.Fields(t), " ")}
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			roots = append(roots, n)
		} else {
			p := stack[len(stack)-1].n
			p.Children = append(p.Children, n)
		}
		stack = append(stack, open{indent, n})
	}
	return roots
}

// Script turns indented configuration lines into the commands typed at
// the CLI: a line followed by more-indented lines enters a mode, and an
// `exit` is sent for every mode left (explicit exits keep the mode
// unambiguous, whatever the platform would infer).
func Script(lines []string) []string {
	return ScriptOf(ParseIndented(strings.Join(lines, "\n")))
}

// ScriptOf is Script for a parsed tree.
func ScriptOf(nodes []*ConfigNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Line)
		if len(n.Children) > 0 {
			out = append(out, ScriptOf(n.Children)...)
			out = append(out, "exit")
		}
	}
	return out
}
