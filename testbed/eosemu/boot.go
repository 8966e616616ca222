package eosemu

import "github.com/fabctl/fabctl/testbed/sshemu"

// Boot types a running configuration (an intended configuration as EOS
// prints it, e.g. AVD's) into the switch under `configure terminal` and
// saves it, as a switch that booted with it; it returns the lines the
// emulator refused (sshemu.TypeConfig): what it does not model.
func (sw *Switch) Boot(config string) []string {
	t := sshemu.TypeConfig(&shell{sw: sw, enabled: true}, []string{"configure terminal"}, config, "!")
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.startup = sw.running.Clone()
	return t.Refused
}
