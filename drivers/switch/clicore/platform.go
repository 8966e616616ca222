package clicore

import "strings"

// ShellPlatform is a scrapligo v1.4 platform definition (YAML, as
// Facts.Scrapli takes it) for a NOS whose SSH login lands in a shell with
// one privilege level and nothing to escalate to (SONiC's bash, NVUE's
// shell), laid out as scrapligo v1.4.3's own cumulus_linux definition
// (assets/platforms/cumulus_linux.yaml): name is its platform-type,
// prompt the pattern of the shell's prompt, failed the output texts that
// fail a command (failed-when-contains). scrapligo v1.4 ships neither.
func ShellPlatform(name, prompt string, failed ...string) []byte {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	var b strings.Builder
	b.WriteString("---\nplatform-type: " + q(name) + "\ndefault:\n  driver-type: 'network'\n  privilege-levels:\n" +
		"    exec:\n      name: 'exec'\n      pattern: " + q(prompt) + "\n      previous-priv:\n      deescalate:\n" +
		"      escalate:\n      escalate-auth: false\n      escalate-prompt:\n  default-desired-privilege-level: 'exec'\n" +
		"  failed-when-contains:\n")
	for _, f := range failed {
		b.WriteString("    - " + q(f) + "\n")
	}
	b.WriteString("  textfsm-platform: ''\n  network-on-open:\n    - operation: 'acquire-priv'\n  network-on-close:\n" +
		"    - operation: 'channel.write'\n      input: 'exit'\n    - operation: 'channel.return'\n")
	return []byte(b.String())
}
