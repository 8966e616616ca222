package sshemu

import "strings"

// Typed is a running configuration typed into an emulator's shell: what
// it took and what it refused.
type Typed struct {
	// Refused are the lines the shell refused (its output not empty),
	// each with the lines indented under it, which were not typed: their
	// mode was never entered.
	Refused []string
}

// TypeConfig types a running configuration (an intended or saved
// configuration, indented by mode as the NOS prints it) into a shell line
// by line, after the lines of enter (e.g. "enable", "configure
// terminal"); comment lines (starting with comment after the
// indentation) and blank lines are skipped. A line the shell answers
// with any output is refused, and so is every line indented deeper below
// it. It is how a test boots an emulator with a vendor-authored
// configuration and learns which parts the emulator does not model.
func TypeConfig(sh Shell, enter []string, text, comment string) Typed {
	var t Typed
	for _, l := range enter {
		sh.Handle(l)
	}
	skipBelow := -1
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, " \t\r")
		body := strings.TrimLeft(l, " \t")
		if body == "" || (comment != "" && strings.HasPrefix(body, comment)) {
			continue
		}
		indent := len(l) - len(body)
		if skipBelow >= 0 {
			if indent > skipBelow {
				t.Refused = append(t.Refused, l)
				continue
			}
			skipBelow = -1
		}
		if out, _ := sh.Handle(l); strings.TrimSpace(out) != "" {
			t.Refused = append(t.Refused, l)
			skipBelow = indent
		}
	}
	return t
}
