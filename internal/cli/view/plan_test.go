package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

func TestFormatValue(t *testing.T) {
	for in, want := range map[string]string{
		"9000": "9000", "3,4": "3,4", "": `""`, "10.0.0.1/31": "10.0.0.1/31", "200ms": "200ms",
		"a b": `"a b"`, `x"y`: `"x\"y"`, "line\nbreak": `"line\nbreak"`, "mlx5_0,mlx5_1": "mlx5_0,mlx5_1",
	} {
		if got := FormatValue(in); got != want {
			t.Errorf("FormatValue(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCompactLines(t *testing.T) {
	var cs []intent.AttrChange
	for _, p := range []string{"Ethernet1/1", "Ethernet1/2", "Ethernet2/1", "Ethernet2/2"} {
		cs = append(cs,
			intent.AttrChange{Path: "port/" + p + "/mtu", Action: intent.Create, After: "9000"},
			intent.AttrChange{Path: "port/" + p + "/pfc", Action: intent.Update, Before: "", After: "3", Disruptive: "flap"})
	}
	for d := 0; d < 5; d++ {
		cs = append(cs, intent.AttrChange{Path: "dscp/" + string(rune('0'+d)), Action: intent.Create, After: "0"})
	}
	cs = append(cs, intent.AttrChange{Path: "trust", Action: intent.Update, Before: "pcp", After: "dscp"},
		intent.AttrChange{Path: "nic/eth0/mtu", Action: intent.Update, Before: "1500", After: "9000"})
	sort.Slice(cs, func(i, j int) bool { return plan.NaturalLess(cs[i].Path, cs[j].Path) })
	var got []string
	for _, l := range compactLines(cs) {
		got = append(got, l.text+"|"+l.disruptive)
	}
	want := []string{
		"+ dscp/* (5 settings)|",
		"~ nic/eth0/mtu: 1500 → 9000|",
		"+ port/*/* (4 settings on 4 ports)|",
		`~ port/*/pfc (4 settings on 4 ports)|flap`,
		"~ trust: pcp → dscp|",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("compact lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWrapList(t *testing.T) {
	got := wrapList([]string{"aaaa", "bbbb", "cccc", "dd"}, 12)
	want := []string{"aaaa, bbbb,", "cccc, dd"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q", got)
	}
}

func TestJSONNulls(t *testing.T) {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Fabric: "f", Devices: []*plan.DevicePlan{{
		Address: "switch.a", Kind: "switch", Name: "a",
		Changes: []intent.AttrChange{
			{Path: "x", Action: intent.Create, After: ""},
			{Path: "y", Action: intent.Delete, Before: "1"},
			{Path: "z", Action: intent.Update, Before: "", After: "2", Disruptive: "why"},
		},
		Drift: []intent.AttrChange{{Path: "x", Action: intent.Create, After: "5"}},
	}}}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, PlanJSON(p)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Devices []struct {
			Changes []map[string]any `json:"changes"`
			Drift   []map[string]any `json:"drift"`
		} `json:"devices"`
		Disruptive []map[string]any `json:"disruptive_changes"`
		Targets    []string         `json:"targets"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Devices[0].Changes
	if c[0]["before"] != nil || c[0]["after"] != "" || c[0]["action"] != "add" {
		t.Errorf("add: %v", c[0])
	}
	if c[1]["after"] != nil || c[1]["before"] != "1" || c[1]["action"] != "remove" {
		t.Errorf("remove: %v", c[1])
	}
	if c[2]["before"] != "" || c[2]["disruptive"] != "why" {
		t.Errorf("change: %v", c[2])
	}
	if dr := doc.Devices[0].Drift[0]; dr["live"] != nil || dr["applied"] != "5" {
		t.Errorf("drift: %v", dr)
	}
	if len(doc.Disruptive) != 1 || doc.Targets == nil {
		t.Errorf("disruptive %v targets %v", doc.Disruptive, doc.Targets)
	}
}

// The verbose view lists a setting the device holds within the driver's
// tolerance, with the live and the desired value.
func TestTolerated(t *testing.T) {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Fabric: "f", FabricDevices: 1, Devices: []*plan.DevicePlan{{
		Address: "switch.leaf1", Kind: "switch", Name: "leaf1", Platform: "sonic",
		Desired:   intent.State{"tc/3/ecn/min": "150000", "port/Ethernet1/mtu": "9000"},
		Changes:   []intent.AttrChange{{Path: "port/Ethernet1/mtu", Action: intent.Update, Before: "1500", After: "9000"}},
		Tolerated: []intent.AttrChange{{Path: "tc/3/ecn/min", Action: intent.Update, Before: "146480", After: "150000"}},
	}}}
	var buf bytes.Buffer
	if err := WritePlanHuman(&buf, p, PlanOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "= tc/3/ecn/min: device has 146480 for 150000 (within the driver's tolerance)") {
		t.Errorf("verbose view lacks the tolerated setting:\n%s", buf.String())
	}
}

// Issue 21: settings a platform cannot express are one summary line in
// the default human view (they were ~50 lines on every plan, drift and
// apply), every one under Verbose and in JSON; markdown keeps its
// collapsed section.
func TestUnexpressible(t *testing.T) {
	var un []plan.Unexpressible
	for i := 0; i < 5; i++ {
		un = append(un, plan.Unexpressible{Path: fmt.Sprintf("port/Ethernet%d/cable", i), Value: "5m", Reason: "no cable-length setting on this platform"})
	}
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Fabric: "f", FabricDevices: 2, Devices: []*plan.DevicePlan{
		{Address: "switch.leaf1", Kind: "switch", Name: "leaf1", Platform: "sonic", Unexpressible: un},
		{Address: "switch.leaf2", Kind: "switch", Name: "leaf2", Platform: "sonic", Unexpressible: un[:1]},
	}}
	var b bytes.Buffer
	if err := WritePlanHuman(&b, p, PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "Not expressible: 6 settings on 2 devices (the spec asks for them; their platforms cannot apply them). fabctl plan -v lists them, --json has them."
	if !strings.Contains(b.String(), want+"\n") || strings.Contains(b.String(), "port/Ethernet0/cable") {
		t.Errorf("default human view, want the one line %q and no list:\n%s", want, b.String())
	}
	b.Reset()
	if err := WritePlanHuman(&b, p, PlanOptions{Command: "drift"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "fabctl drift -v lists them") {
		t.Errorf("drift view names plan's -v:\n%s", b.String())
	}
	b.Reset()
	if err := WritePlanHuman(&b, p, PlanOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	for _, u := range un {
		if !strings.Contains(b.String(), u.Path) {
			t.Errorf("verbose view lacks %s:\n%s", u.Path, b.String())
		}
	}
	if !strings.Contains(b.String(), "Not expressible on these platforms") || strings.Contains(b.String(), "more") {
		t.Errorf("verbose view, want the whole list:\n%s", b.String())
	}
	b.Reset()
	if err := WriteJSON(&b, PlanJSON(p)); err != nil {
		t.Fatal(err)
	}
	var doc PlanJSONDoc
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Devices) != 2 || len(doc.Devices[0].Unexpressible) != 5 || doc.Devices[0].Unexpressible[4] != un[4] {
		t.Errorf("JSON unexpressible: %+v", doc.Devices)
	}
	b.Reset()
	if err := WritePlanMarkdown(&b, p, PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Not expressible") {
		t.Errorf("markdown view lacks the section")
	}
}

// Issue 21: a device that could not be read (a wrong password) is
// reported before any change, at the top of the human view.
func TestPlanErrorsFirst(t *testing.T) {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Fabric: "f", FabricDevices: 2, Devices: []*plan.DevicePlan{
		{Address: "host.h1", Kind: "host", Name: "h1", Platform: "linux",
			Changes:       []intent.AttrChange{{Path: "nic/eth1/mtu", Action: intent.Update, Before: "1500", After: "9000"}},
			Unexpressible: []plan.Unexpressible{{Path: "nic/eth1/pause", Reason: "no pause"}}},
		{Address: "switch.leaf1", Kind: "switch", Name: "leaf1", Platform: "sonic", Error: "authentication failed"},
	}}
	var b bytes.Buffer
	if err := WritePlanHuman(&b, p, PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if len(lines) < 3 || lines[0] != "Not planned: these devices could not be read" || !strings.Contains(lines[2], "authentication failed") {
		t.Errorf("the error is not at the top:\n%s", b.String())
	}
}

// Issue 38: a finding no change fixes (an InfiniBand cable down) is a
// verdict: the human footer never says the fabric matches, markdown calls
// it out, JSON says mismatch, with or without changes beside it.
func TestPlanMismatch(t *testing.T) {
	down := drivers.Finding{Severity: drivers.SeverityError, Path: "fabric/leaf1/2", Kind: "link-down",
		Message: "leaf1 port 2: no link to cn02:ib0 (link down, or no cable) [link-down]",
		IDs:     map[string]string{"node_guid": "0x0210000012345600", "lid": "3"}}
	warn := drivers.Finding{Severity: "warning", Message: "opensm runs at a non-default place"}
	for _, changes := range []bool{false, true} {
		sm := &plan.DevicePlan{Address: "sm.sm01", Kind: "sm", Name: "sm01", Platform: "opensm", Findings: []drivers.Finding{warn, down}}
		if changes {
			sm.Changes = []intent.AttrChange{{Path: "partitions/storage/pkey", Action: intent.Update, Before: "0x0002", After: "0x0001"}}
		}
		p := &plan.Plan{FormatVersion: plan.FormatVersion, Fabric: "f", FabricDevices: 2, Devices: []*plan.DevicePlan{
			sm, {Address: "host.cn01", Kind: "host", Name: "cn01", Platform: "linux"}}}
		if !p.Mismatched() || p.Counts().Mismatched != 1 {
			t.Fatalf("Mismatched %v, counts %+v", p.Mismatched(), p.Counts())
		}
		var b bytes.Buffer
		if err := WritePlanHuman(&b, p, PlanOptions{}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"✘ leaf1 port 2: no link to cn02:ib0", "! opensm runs at a non-default place",
			"Mismatch: 1 finding on 1 device that no change fixes"} {
			if !strings.Contains(out, want) {
				t.Errorf("changes=%v: human view lacks %q:\n%s", changes, want, out)
			}
		}
		if strings.Contains(out, "matches the spec on all") {
			t.Errorf("changes=%v: a broken fabric reads as matching:\n%s", changes, out)
		}
		if !changes && !strings.Contains(out, "No changes, but the fabric does not match the spec") {
			t.Errorf("no-change summary:\n%s", out)
		}
		b.Reset()
		if err := WritePlanMarkdown(&b, p, PlanOptions{}); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		if !strings.Contains(md, "the fabric does not match the spec)") || !strings.Contains(md, "- `sm.sm01 (opensm)`: leaf1 port 2: no link to cn02:ib0") {
			t.Errorf("changes=%v: markdown:\n%s", changes, md)
		}
		b.Reset()
		if err := WriteJSON(&b, PlanJSON(p)); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Mismatch bool        `json:"mismatch"`
			Counts   plan.Counts `json:"counts"`
			Devices  []struct {
				Findings []drivers.Finding `json:"findings"`
			} `json:"devices"`
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if !doc.Mismatch || doc.Counts.Mismatched != 1 || len(doc.Devices[0].Findings) != 2 ||
			doc.Devices[0].Findings[1].Kind != "link-down" || doc.Devices[0].Findings[1].IDs["lid"] != "3" {
			t.Errorf("changes=%v: JSON: %s", changes, b.String())
		}
	}
}

// First run, defect 11: the PR markdown lists the changes before the
// settings the platforms cannot express, and a plan longer than GitHub's
// comment limit is cut at a section boundary with a notice.
func TestPlanMarkdownOrderAndCap(t *testing.T) {
	var devs []*plan.DevicePlan
	for i := 0; i < 60; i++ {
		var un []plan.Unexpressible
		for j := 0; j < 40; j++ {
			un = append(un, plan.Unexpressible{Path: fmt.Sprintf("nic/ens%dnp0/dscp/%d", i, j), Value: "3", Reason: "no DCB netlink on this NIC: the driver exposes no dcbnl ops"})
		}
		devs = append(devs, &plan.DevicePlan{Address: fmt.Sprintf("host.gpu%02d", i), Kind: "host", Name: fmt.Sprintf("gpu%02d", i), Platform: "linux",
			Changes:       []intent.AttrChange{{Path: "nic/ens1np0/mtu", Action: intent.Update, Before: "1500", After: "9000"}},
			Unexpressible: un})
	}
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Fabric: "f", FabricDevices: len(devs), Devices: devs}
	var b bytes.Buffer
	if err := WritePlanMarkdown(&b, p, PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if n := len([]rune(md)); n > 65536 {
		t.Errorf("markdown is %d characters, over 65536", n)
	}
	ch, ne := strings.Index(md, "#### Changes"), strings.Index(md, "#### Not expressible")
	if ch < 0 || ne < 0 || ch > ne {
		t.Errorf("want Changes (at %d) before Not expressible (at %d)", ch, ne)
	}
	if !strings.Contains(md, "**Truncated:**") || !strings.HasSuffix(md, "</sub>\n") {
		t.Errorf("no truncation notice or footer:\n%s", md[len(md)-600:])
	}
	if strings.Count(md, "```")%2 != 0 || strings.Count(md, "<details>") != strings.Count(md, "</details>") {
		t.Errorf("cut inside a fence or a details block")
	}
	// A small plan is not cut.
	b.Reset()
	p.Devices = devs[:1]
	if err := WritePlanMarkdown(&b, p, PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Truncated") || !strings.Contains(b.String(), "dscp/39") {
		t.Errorf("small plan cut:\n%s", b.String())
	}
}
