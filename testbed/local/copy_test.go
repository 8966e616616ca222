package local

import (
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/spec"
)

func loadCopy(files []spec.File) (*spec.Spec, hcl.Diagnostics) {
	return spec.LoadFiles(files, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
}

// Issue 40 (first run, defect 21): a spec written for production devices
// runs on the testbed through a copy, its files unchanged: testbed up
// refuses the spec itself naming every switch it cannot serve and the
// way out, and accepts the copy (loopback addresses, the testbed's
// credentials, hosts in namespaces accepting what a veth cannot express,
// the EOS spine's 400G port names as they are).
func TestCopy(t *testing.T) {
	b, err := os.ReadFile("testdata/production-pod.fab.hcl")
	if err != nil {
		t.Fatal(err)
	}
	files := []spec.File{{Name: "prod/pod.fab.hcl", Data: b}, {Name: "prod/mgmt_override.fab.hcl", Data: []byte("switch \"leaf1\" {\n  address = \"10.9.0.11\"\n}\n")}}
	s, diags := loadCopy(files)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, err = planRecord(s, FabricNetns)
	if err == nil || !strings.Contains(err.Error(), `leaf1: address "10.9.0.11", leaf2: address "10.0.0.12", spine1: address "10.0.0.21"`) ||
		!strings.Contains(err.Error(), "fabctl testbed copy SPEC -o DIR") {
		t.Errorf("testbed up on the production spec: %v", err)
	}

	res, err := Copy(s, files, netip.MustParseAddr(CopyFirstAddress), loadCopy)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var in []spec.File
	for _, f := range res.Files {
		names = append(names, f.Name)
		in = append(in, spec.File{Name: f.Name, Data: f.Data})
		if f.Name == "pod.fab.hcl" && string(f.Data) != string(b) {
			t.Error("the spec's file was changed")
		}
	}
	if strings.Join(names, " ") != "pod.fab.hcl "+CopyCredentialsFile+" "+CopyOverrideFile || len(res.Dropped) != 1 {
		t.Errorf("files %v, dropped %v", names, res.Dropped)
	}
	cs, diags := loadCopy(in)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	r, err := planRecord(cs, FabricNetns)
	if err != nil {
		t.Fatalf("testbed up on the copy: %v", err)
	}
	if got := cs.Switch("spine1"); got.Address != "127.0.10.13:2222" || got.Credentials != "fabctl-testbed-ssh" {
		t.Errorf("spine1 %s %s", got.Address, got.Credentials)
	}
	if !strings.Contains(strings.Join(r.Emulators[2].PortNames, " "), "Ethernet1/1") {
		t.Errorf("spine1's emulator lacks the spec's Ethernet1/1: %+v", r.Emulators[2])
	}
	h := cs.Host("gpu01")
	if h.Connect.Kind != "netns" || h.Connect.Netns != "fab-gpu01" {
		t.Errorf("gpu01 connect %+v", h.Connect)
	}
	if _, ok := h.Accept.Match("nic/ens1np0/pfc"); !ok {
		t.Errorf("gpu01 does not accept what a veth cannot express: %v", h.Accept)
	}

	ib := []spec.File{{Name: "ib.fab.hcl", Data: []byte("fabric \"ib\" {\n  transport = \"infiniband\"\n}\n")}}
	if is, d := loadCopy(ib); !d.HasErrors() {
		if _, err := Copy(is, ib, netip.MustParseAddr(CopyFirstAddress), loadCopy); err == nil || !strings.Contains(err.Error(), "examples/ib-testbed") {
			t.Errorf("InfiniBand: %v", err)
		}
	}
	if _, err := Copy(s, files, netip.MustParseAddr("10.0.0.1"), loadCopy); err == nil {
		t.Error("a first address off loopback was accepted")
	}
}
