package nxosemu

import (
	"time"

	"github.com/fabctl/fabctl/testbed/sshemu"
)

// Boot types a running configuration (configuration text as NX-OS
// prints it, indented by mode) into the switch under `configure
// terminal` and saves it, as a switch that booted with it; it returns the
// lines the emulator refused (sshemu.TypeConfig): what it does not model.
func (sw *Switch) Boot(config string) []string {
	t := sshemu.TypeConfig(&shell{sw: sw, user: sw.opts.User}, []string{"configure terminal"}, config, "!")
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.startup, sw.savedAt = sw.running.Clone(), time.Now()
	return t.Refused
}
