package switchtest

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/ident"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// The rendered-lines fuzz (issue 37): arbitrary specs, rendered for every
// platform, must emit only lines of the platform's command grammar. Each
// switch driver package has a FuzzRenderedLines that feeds FuzzSpec's
// spec through its driver and checks every line it would send against
// its shapes.txt (the SOURCED and DERIVED rows, <if> narrowed to the
// platform's port grammar); the host driver's FuzzHostPaths does the
// same for the paths it builds from NIC labels. A spec the loader
// refuses is fine: the point is that what it accepts renders clean.

// FuzzInput is what the fuzzer varies: the strings a spec author writes
// that reach a device.
type FuzzInput struct {
	Port1, Port2, Description, Address, User, NIC, Device string
}

// FuzzSeeds adds the seed corpus: well-formed names of every platform and
// the audit's hostile ones (a port label carrying a second CLI line, a
// bash command for NVUE, NUL, ESC, right-to-left override and spaces,
// newlines in address and user name, a NIC label ../../etc/x, template
// text for gnmic).
func FuzzSeeds(f *testing.F) {
	for _, in := range []FuzzInput{
		{"Ethernet0", "Ethernet4", "to spine1", "192.0.2.1", "admin", "eth1", "mlx5_0"},
		{"Ethernet1/1", "Ethernet1/2", "uplink: spine1 (400G)", "leaf1.example.com:22", "admin", "ens1f0np0", "mlx5_1"},
		{"Ethernet1/49/1", "Ethernet2/1", "x", "[2001:db8::1]:2222", "svc@corp", "ib0", "irdma0"},
		{"swp1", "swp2s3", "host-facing", "10.0.0.1", "cumulus", "eth1.100", "rxe0"},
		{"ethernet-1/1", "ethernet-1/2/1", "", "192.0.2.1", "admin", "eth1", ""},
		{"Ethernet1\nhostname PWNED-EOS", "Ethernet2", "x", "192.0.2.1", "admin", "eth1", "mlx5_0"},
		{"swp2 ; touch FILE ;", "swp1", "x", "192.0.2.1", "admin", "eth1", "mlx5_0"},
		{"Ethernet0\x00", "Ethernet\x1b[2J4", "a\u202eb", "192.0.2.1\nhostname x", "admin\nenable", "../../etc/x", "mlx5_0;reboot"},
		{"Ethernet{{.TargetName}}", "ethernet-1/{{.TargetName}}", "{{.Env}}", "192.0.2.1", "admin", "eth 1", "mlx5_0"},
		{"Ethernet0?", "Ethernet4|include x", "to spine! $(reboot)", "-oProxyCommand=sh", "-l", "eth1", "mlx5_0"},
	} {
		f.Add(in.Port1, in.Port2, in.Description, in.Address, in.User, in.NIC, in.Device)
	}
}

// hclQuote writes s as an HCL quoted string: quotes, backslashes,
// control characters and template introducers escaped (HCL has no \x:
// \uNNNN), bytes that are not UTF-8 as U+FFFD.
func hclQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '$' || r == '%':
			b.WriteRune(r)
			if rest := strings.ToValidUTF8(s, "\uFFFD")[i+1:]; strings.HasPrefix(rest, "{") {
				b.WriteRune(r) // $${ and %%{ are the literal forms
			}
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == utf8.RuneError:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzSpec is a one-switch, one-host spec for platform holding in's
// strings where a spec author writes them.
func FuzzSpec(platform string, in FuzzInput) string {
	dev := ""
	if in.Device != "" {
		dev = "    device    = " + hclQuote(in.Device) + "\n"
	}
	desc := ""
	if in.Description != "" {
		desc = "    description = " + hclQuote(in.Description) + "\n"
	}
	return `fabric "fz" {
  transport = "rocev2"
}
credentials "sw" {
  username = ` + hclQuote(in.User) + `
  password = env("FZ_PW")
}
switch "leaf1" {
  platform    = "` + platform + `"
  address     = ` + hclQuote(in.Address) + `
  credentials = "sw"
  port ` + hclQuote(in.Port1) + ` {
    speed = "100G"
` + desc + `  }
  port ` + hclQuote(in.Port2) + ` {
    speed = "100G"
    pfc   = []
  }
}
host "h1" {
  address     = ` + hclQuote(in.Address) + `
  credentials = "sw"
  nic ` + hclQuote(in.NIC) + ` {
` + dev + `    addresses = ["10.0.0.1/31"]
    speed     = "100G"
  }
}
link {
  endpoints    = [` + hclQuote("leaf1:"+in.Port1) + `, ` + hclQuote("h1:"+in.NIC) + `]
  cable_length = "3m"
}
`
}

// FuzzLoad loads FuzzSpec(platform, in) and compiles it; ok is false
// when the loader refused it (a refusal is a pass: the strings never
// reach a driver).
func FuzzLoad(t testing.TB, platform string, in FuzzInput) (f *intent.Fabric, ok bool) {
	t.Helper()
	src := FuzzSpec(platform, in)
	s, diags := spec.LoadFiles([]spec.File{{Name: "fz.fab.hcl", Data: []byte(src)}}, spec.LoadOptions{Platforms: testutil.Platforms()})
	if diags.HasErrors() {
		return nil, false
	}
	return intent.Compile(s), true
}

// FuzzSwitch is the fuzz spec's switch, with every setting to be made
// from nothing: its target, and the steps its driver plans.
func FuzzSwitch(t testing.TB, f *intent.Fabric, drv drivers.Driver) (drivers.Target, []drivers.Change) {
	t.Helper()
	if len(f.Switches) != 1 {
		t.Fatalf("fuzz spec compiled to %d switches", len(f.Switches))
	}
	sw := f.Switches[0]
	target := drivers.Target{Device: sw.Device, Intent: sw}
	desired := Desired(drv, sw)
	steps, err := drv.Changes(target, intent.Diff(desired, intent.State{}, drv.Fields()), desired)
	if err != nil {
		// A driver may refuse an intent it cannot render (an MTU its
		// platform lacks): refusing is never sending.
		return target, nil
	}
	return target, steps
}

// CheckLines fails t for any line that could act on a CLI line editor or
// run a second command (the transport would refuse it too).
func CheckLines(t testing.TB, what string, lines []string) {
	t.Helper()
	for _, l := range lines {
		if err := ident.Line(l); err != nil {
			t.Errorf("%s: %q %v", what, l, err)
		}
	}
}
