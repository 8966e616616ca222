package cumulusemu

import "strings"

// Boot types NVUE commands (one a line; '#' lines and quoted prose are
// skipped) at the switch's prompt, as an operator does, and saves the
// result as the startup configuration: a switch that booted with it. A
// bare `nv config apply` is typed with --assume-yes (the operator
// answers its confirmation). It returns the lines the emulator refused
// ("Error: ..." or not a command): what it does not model.
func (sw *Switch) Boot(commands string) []string {
	sh := &shell{sw: sw, user: sw.opts.User}
	var refused []string
	for _, l := range strings.Split(commands, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, `"`) {
			continue
		}
		typed := l
		if l == "nv config apply" {
			typed += " --assume-yes"
		}
		if out, _ := sh.Handle(typed); strings.HasPrefix(out, "Error") || strings.HasPrefix(out, "-bash:") {
			refused = append(refused, l)
		}
	}
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.startup = clone(sw.applied)
	return refused
}
