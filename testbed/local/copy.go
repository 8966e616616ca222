package local

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/spec"
)

// Names of the files Copy adds beside the spec's own.
const (
	CopyCredentialsFile = "fabctl-testbed.fab.hcl"
	CopyOverrideFile    = "fabctl-testbed" + spec.OverrideSuffix
	// CopyFirstAddress is the first switch address of a copy: outside
	// 127.0.0.0/24, where examples/testbed listens, so both can run.
	CopyFirstAddress = "127.0.10.11"
	// CopyPasswordEnv is the variable the copy's credentials read (up
	// generates a password when it is unset).
	CopyPasswordEnv = "FABCTL_TESTBED_PASSWORD"
)

// copyHostAccept is why a copy's hosts accept what they cannot express:
// on the testbed a NIC is a veth in a namespace.
const copyHostAccept = "testbed host: a veth in a network namespace has no DCB, DCQCN or rdma_cm configuration"

// CopyFile is one file of a testbed copy: a name in the copy's directory.
type CopyFile struct {
	Name string
	Data []byte
}

// CopyResult is a spec made ready for the local testbed: its files and
// what was changed, device by device.
type CopyResult struct {
	Files []CopyFile
	// Switches and Hosts map each device to where the copy reaches it.
	Switches map[string]string
	Hosts    map[string]string
	// Left are the devices the copy leaves as they are, with why.
	Left []string
	// Dropped are the spec's own override files, not copied (they point
	// at the production devices, and a device takes one override).
	Dropped []string
}

// Copy makes a spec's files run on the local testbed without editing
// them: the files (its override files left out), a credentials file the
// emulators accept (a password from CopyPasswordEnv, the testbed's
// known_hosts and gNMI CA) and an override file that points every
// emulated switch at a loopback address of its own (first, upwards; SSH
// on 2222, gNMI on 57400) and every host that fabctl logs into at a
// network namespace "fab-<host>", accepting what a veth cannot express
// (accept_not_in_effect "*": the switches' side is what the testbed
// proves). Port names need no change: testbed up
// gives each emulator every port the spec names, and refuses a name its
// platform cannot have. The result is checked as testbed up would.
// load loads the copy's files with the spec's variables.
func Copy(s *spec.Spec, files []spec.File, first netip.Addr, load func([]spec.File) (*spec.Spec, hcl.Diagnostics)) (*CopyResult, error) {
	if s.Fabric.Transport == spec.InfiniBand {
		return nil, errors.New("an InfiniBand spec runs on the simulated subnet as examples/ib-testbed shows (ibsim adapters are hosts with connect = \"none\"); testbed copy writes Ethernet fabrics only")
	}
	if !first.Is4() || !first.IsLoopback() {
		return nil, fmt.Errorf("first address %s: the local testbed listens on 127.0.0.0/8 only", first)
	}
	const sshCreds, gnmiCreds = "fabctl-testbed-ssh", "fabctl-testbed-gnmi"
	for _, c := range s.Credentials {
		if c.Name == sshCreds || c.Name == gnmiCreds {
			return nil, fmt.Errorf("the spec declares credentials %q, the name the copy gives the testbed's", c.Name)
		}
	}
	res := &CopyResult{Switches: map[string]string{}, Hosts: map[string]string{}}
	seen := map[string]bool{}
	for _, f := range files {
		base := filepath.Base(f.Name)
		if base == CopyCredentialsFile || base == CopyOverrideFile || seen[base] {
			return nil, fmt.Errorf("spec file %s: the copy already has a file of that name", f.Name)
		}
		seen[base] = true
		if spec.IsOverrideFile(base) {
			res.Dropped = append(res.Dropped, f.Name)
			continue
		}
		res.Files = append(res.Files, CopyFile{Name: base, Data: f.Data})
	}

	var ov, cr bytes.Buffer
	ov.WriteString("# Written by fabctl testbed copy: every device of the spec where the local testbed\n")
	ov.WriteString("# runs it (override files: docs/spec.md). The spec's own files are unchanged.\n")
	addr := first
	used := map[string]bool{}
	for _, sw := range s.Switches {
		p, ok := builtin.Platform(sw.Platform)
		if !ok || p.Emulator == "" {
			res.Left = append(res.Left, fmt.Sprintf("switch.%s: no %s emulator in this build", sw.Name, sw.Platform))
			continue
		}
		if !addr.IsLoopback() {
			return nil, fmt.Errorf("more switches than loopback addresses from %s", first)
		}
		port, creds := "2222", sshCreds
		if p.Transport == drivers.TransportGNMI {
			port, creds = "57400", gnmiCreds
		}
		used[creds] = true
		a := addr.String() + ":" + port
		res.Switches[sw.Name] = a
		fmt.Fprintf(&ov, "\nswitch %q {\n  address     = %q\n  credentials = %q\n}\n", sw.Name, a, creds)
		addr = addr.Next()
	}
	for _, h := range s.Hosts {
		if h.Connect.Kind == spec.ConnectNone {
			res.Left = append(res.Left, fmt.Sprintf("host.%s: connect = \"none\" (fabctl never logs in)", h.Name))
			continue
		}
		ns := "fab-" + h.Name
		res.Hosts[h.Name] = "netns:" + ns
		fmt.Fprintf(&ov, "\nhost %q {\n  connect = %q\n  accept_not_in_effect = {\n    \"*\" = %q\n  }\n}\n", h.Name, "netns:"+ns, copyHostAccept)
	}
	cr.WriteString("# Written by fabctl testbed copy: how fabctl logs into the testbed's emulators.\n")
	cr.WriteString("# The password comes from the environment (testbed up generates one when it is unset);\n")
	cr.WriteString("# host keys and the gNMI CA are the ones testbed up writes.\n")
	if used[sshCreds] {
		fmt.Fprintf(&cr, "\ncredentials %q {\n  username    = \"admin\"\n  password    = env(%q)\n  known_hosts = \".fabctl/testbed/known_hosts\"\n}\n", sshCreds, CopyPasswordEnv)
	}
	if used[gnmiCreds] {
		fmt.Fprintf(&cr, "\ncredentials %q {\n  username = \"admin\"\n  password = env(%q)\n  ca_file  = \".fabctl/testbed/gnmi-ca.pem\"\n}\n", gnmiCreds, CopyPasswordEnv)
	}
	res.Files = append(res.Files, CopyFile{Name: CopyCredentialsFile, Data: hclwrite.Format(cr.Bytes())},
		CopyFile{Name: CopyOverrideFile, Data: hclwrite.Format(ov.Bytes())})
	sort.Strings(res.Left)

	// Checked as testbed up checks it: addresses, credentials, ports.
	var in []spec.File
	for _, f := range res.Files {
		in = append(in, spec.File{Name: f.Name, Data: f.Data})
	}
	cs, diags := load(in)
	if diags.HasErrors() {
		return nil, fmt.Errorf("the copy does not load: %s", diags.Error())
	}
	if _, err := planRecord(cs, FabricNetns); err != nil {
		return nil, fmt.Errorf("the copy cannot run on the testbed: %w", err)
	}
	return res, nil
}
