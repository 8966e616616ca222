package host

// Host driver tests against the kernel's real DCB netlink code through the
// fabdcb module (testbed/vm/kmod/fabdcb). They run in the VM testbed's dcb
// section, which loads the module and sets FABCTL_FABDCB to the devices
// to use; anywhere else they skip: no software netdev in Linux has DCB.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
)

func fabdcbDev(t testing.TB, i int) string {
	t.Helper()
	return testutil.FabdcbDevs(t, i+1)[i]
}

func fabdcbSpec(t testing.TB, nic, connect string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/vm/fabdcb.fab.hcl")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "FABDCB_NIC", nic)
	return strings.Replace(s, `connect = "local"`, `connect = "`+connect+`"`, 1)
}

// withFirmwareLLDPOff hands DCB to the host on the spec's NIC (the E810
// switch firmware_lldp = false).
func withFirmwareLLDPOff(spec string) string {
	const addrs = `addresses = ["198.18.10.1/24", "2001:db8:10::1/64"]`
	return strings.Replace(spec, addrs, addrs+"\n    firmware_lldp = false", 1)
}

// personalityOf is the fabdcb personality of a device: the driver name
// ethtool -i reports (mlx5_core, ice, bnxt_en; fabdcb's firmware-version).
func personalityOf(t *testing.T, ns, dev string) family {
	t.Helper()
	cmd := []string{"ethtool", "-i", dev}
	if ns != "" {
		cmd = append([]string{"ip", "netns", "exec", ns}, cmd...)
	}
	out := testutil.Run(t, cmd...)
	if !strings.Contains(out, "firmware-version: fabdcb") {
		t.Fatalf("%s is not a fabdcb device:\n%s", dev, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if d, ok := strings.CutPrefix(l, "driver: "); ok {
			return familyOf("", strings.TrimSpace(d))
		}
	}
	t.Fatalf("ethtool -i %s: no driver line:\n%s", dev, out)
	return ""
}

// fabdcbSpecFor is the VM spec for a device's personality: on ice the
// spec hands DCB from the firmware LLDP agent to the host.
func fabdcbSpecFor(t *testing.T, ns, nic, connect string) (string, family) {
	t.Helper()
	fam := personalityOf(t, ns, nic)
	s := fabdcbSpec(t, nic, connect)
	if fam == famICE {
		s = withFirmwareLLDPOff(s)
	}
	return s, fam
}

func dcbShow(t *testing.T, ns string, args ...string) map[string]any {
	t.Helper()
	cmd := append([]string{"dcb", "-j"}, args...)
	if ns != "" {
		cmd = append([]string{"ip", "netns", "exec", ns}, cmd...)
	}
	out := testutil.Run(t, cmd...)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd, " "), err, out)
	}
	return m
}

func flapsOf(t *testing.T, ns, dev string) int {
	t.Helper()
	cmd := []string{"cat", "/sys/class/net/" + dev + "/fabdcb/link_flaps"}
	if ns != "" {
		cmd = append([]string{"ip", "netns", "exec", ns}, cmd...) // ip netns exec mounts the namespace's sysfs
	}
	n, err := strconv.Atoi(strings.TrimSpace(testutil.Run(t, cmd...)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// resetsOf is how often the ice personality reset the netdev after a DCB
// change (ice_dcbnl_devreset).
func resetsOf(t *testing.T, ns, dev string) int {
	t.Helper()
	cmd := []string{"cat", "/sys/class/net/" + dev + "/fabdcb/dev_resets"}
	if ns != "" {
		cmd = append([]string{"ip", "netns", "exec", ns}, cmd...)
	}
	n, err := strconv.Atoi(strings.TrimSpace(testutil.Run(t, cmd...)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkApplied reads the NIC back with iproute2's dcb, not with fabctl:
// PFC on priority 3 only, DSCP 26 -> 3 and 48 -> 6, ETS 40/60 with TC 6
// strict, DSCP trust.
func checkApplied(t *testing.T, ns, dev string) {
	t.Helper()
	p := dcbShow(t, ns, "pfc", "show", "dev", dev)
	if fmt.Sprint(p["prio_pfc"]) != "[false false false true false false false false]" {
		t.Errorf("dcb pfc: %v", p["prio_pfc"])
	}
	// The spec's DSCP map: 26 -> 3, 48 -> 6, the rest on the default
	// class (0). mlx5 and bnxt get all 64 entries; ice only those that
	// differ from its DSCP-mode default (dscp >> 3 with 8 TCs,
	// ice_dcbnl_setapp), each write being a netdev reset.
	a := dcbShow(t, ns, "app", "show", "dev", dev)
	got := map[int]int{}
	for _, e := range a["dscp_prio"].([]any) {
		pair, _ := e.([]any)
		if len(pair) == 2 {
			d, _ := strconv.Atoi(fmt.Sprint(pair[0]))
			p, _ := strconv.Atoi(fmt.Sprint(pair[1]))
			got[d] = p
		}
	}
	ice := personalityOf(t, ns, dev) == famICE
	for d := 0; d < 64; d++ {
		want := map[int]int{26: 3, 48: 6}[d]
		p, ok := got[d]
		switch {
		case ok && p != want:
			t.Errorf("dcb app: DSCP %d -> %d, want %d", d, p, want)
		case !ok && (!ice || want != d>>3):
			t.Errorf("dcb app: no entry for DSCP %d (want %d; %v)", d, want, a["dscp_prio"])
		}
	}
	if ice && len(got) != 54 {
		t.Errorf("ice: %d DSCP entries, want the 54 that differ from dscp >> 3", len(got))
	}
	// By the classes, whatever TCs the NIC's driver puts them on (ice and
	// a bnxt with fewer TCs compact them; bnxt leaves unused TCs strict).
	e := dcbShow(t, ns, "ets", "show", "dev", dev)
	prioTC, _ := e["prio_tc"].([]any)
	bw, _ := e["tc_bw"].([]any)
	tsa, _ := e["tc_tsa"].([]any)
	tcOf := func(prio int) int { // prio_tc: [tc of priority 0, ..., of 7]
		if prio >= len(prioTC) {
			return -1
		}
		n, err := strconv.Atoi(fmt.Sprint(prioTC[prio]))
		if err != nil {
			return -1
		}
		return n
	}
	for _, c := range []struct {
		prio    int
		tsa, bw string
	}{{0, "ets", "40"}, {3, "ets", "60"}, {6, "strict", ""}} {
		tc := tcOf(c.prio)
		if tc < 0 || tc >= len(tsa) || tc >= len(bw) || fmt.Sprint(tsa[tc]) != c.tsa || (c.bw != "" && fmt.Sprint(bw[tc]) != c.bw) {
			t.Errorf("dcb ets: priority %d on TC %d, want %s %s: prio_tc %v tc_tsa %v tc_bw %v", c.prio, tc, c.tsa, c.bw, e["prio_tc"], tsa, bw)
		}
	}
	cmd := []string{"cat", "/sys/class/net/" + dev + "/fabdcb/trust"}
	if ns != "" {
		cmd = append([]string{"ip", "netns", "exec", ns}, cmd...)
	}
	if v := strings.TrimSpace(testutil.Run(t, cmd...)); v != "dscp" {
		t.Errorf("trust %s", v)
	}
}

// TestFabdcbHostPlanApply: the spec's host intent on a DCB NIC through
// the real kernel: plan (disruptive PFC flagged), apply (verified by the
// engine's read-back), dcb agrees, the re-plan is clean, a re-apply
// touches nothing (no second link flap), and a change made with dcb
// behind fabctl's back is drift, both in the plan and in WatchDCB.
func TestFabdcbHostPlanApply(t *testing.T) {
	dev := fabdcbDev(t, 4)
	src, fam := fabdcbSpecFor(t, "", dev, "local")
	s, f := loadSpec(t, src)
	reg := registry(t)
	ctx := context.Background()
	p := plan.Make(ctx, s, f, reg, plan.Options{})
	dp := p.Device("host.vm")
	if dp.Error != "" {
		t.Fatal(dp.Error)
	}
	changed := map[string]intent.AttrChange{}
	for _, c := range dp.Changes {
		changed[c.Path] = c
	}
	pfc := changed["nic/"+dev+"/pfc"]
	if pfc.After != "3" || pfc.Disruptive == "" {
		t.Fatalf("pfc change %+v", pfc)
	}
	keys := []string{"trust", "dscp/26", "dscp/48", "tc/3/bandwidth", "mtu", "addresses", "pause"}
	switch fam {
	case famICE:
		keys = append(keys, "firmware_lldp", "tc/6/sched")
	case famMLX5:
		keys = append(keys, "tc/6/sched")
	}
	// bnxt: ETS reads all zero (every TSA strict) until the host sets it
	// (bnxt_dcbnl_ieee_getets), so TC 6 is strict already.
	for _, k := range keys {
		if _, ok := changed["nic/"+dev+"/"+k]; !ok {
			t.Errorf("no planned change for %s (changes %v)", k, dp.Changes)
		}
	}
	for _, u := range dp.Unexpressible {
		if f := feature(u.Path); f != "ecn" && f != "roce_mode" && f != "tos" && f != "irq_cpus" {
			t.Errorf("unexpressible on a DCB NIC: %s (%s)", u.Path, u.Reason)
		}
	}
	if fam == famICE {
		// Every ice ETS and APP write resets the netdev: the plan says so.
		for _, c := range dp.Changes {
			if f := feature(c.Path); (f == "ets" || f == "app") && !strings.Contains(c.Disruptive, "ice_dcbnl_devreset") {
				t.Errorf("ice: %s not marked disruptive (%q)", c.Path, c.Disruptive)
			}
		}
	}
	flaps0, resets0 := flapsOf(t, "", dev), resetsOf(t, "", dev)
	res, err := applyPlan(t, p, f, reg)
	if err != nil || res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("apply: %v %+v", err, res.Devices[0])
	}
	checkApplied(t, "", dev)
	// mlx5 toggles the link on a PFC change (mlx5e_dcbnl_ieee_setpfc);
	// fabdcb models that flap for mlx5 only.
	wantFlaps := 0
	if fam == famMLX5 {
		wantFlaps = 1
	}
	if n := flapsOf(t, "", dev) - flaps0; n != wantFlaps {
		t.Errorf("%s: %d link flaps for one PFC change, want %d", fam, n, wantFlaps)
	}
	checkFamily(t, "", dev, fam)
	if out := testutil.Run(t, "ethtool", "-a", dev); !strings.Contains(out, "RX:\t\toff") && !strings.Contains(out, "RX: off") {
		t.Errorf("global pause not off with PFC on:\n%s", out)
	}

	p2 := plan.Make(ctx, s, f, reg, plan.Options{})
	if d := p2.Device("host.vm"); d.Error != "" || d.HasChanges() {
		t.Fatalf("re-plan not clean: %v %+v", d.Error, d.Changes)
	}
	if _, err := applyPlan(t, p2, f, reg); err != nil {
		t.Fatal(err)
	}
	if n := flapsOf(t, "", dev) - flaps0; n != wantFlaps {
		t.Errorf("a no-change apply flapped the link (%d flaps)", n)
	}
	// ice resets the netdev after every DCB change (ice_dcbnl_devreset),
	// which flushed the spec's IPv6 address; the engine's read-back after
	// the first apply found it back, and the re-apply changed nothing, so
	// reset nothing.
	resets := resetsOf(t, "", dev) - resets0
	if (fam == famICE) != (resets > 0) {
		t.Errorf("%s: %d netdev resets for the apply", fam, resets)
	}
	if fam == famICE {
		// One reset per changed write: the 54 DSCP entries that differ from
		// ice's default, ETS, PFC; not 64 entries.
		t.Logf("ice: the apply reset the netdev %d times (one per changed ETS, PFC or APP write)", resets)
		if resets > 54+3 {
			t.Errorf("ice: %d netdev resets for 54 DSCP entries, ETS and PFC", resets)
		}
	}

	// Drift behind fabctl's back, seen by the kernel notification watch
	// and by the plan.
	var mu sync.Mutex
	var drifts []Drift
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- WatchDCB(wctx, []string{dev}, func(d Drift) { mu.Lock(); drifts = append(drifts, d); mu.Unlock() })
	}()
	time.Sleep(300 * time.Millisecond) // the watch reads its baseline
	testutil.DCBSet(t, "pfc", "set", "dev", dev, "prio-pfc", "4:on")
	waitDrift := func(n int) []Drift {
		for i := 0; i < 100; i++ {
			mu.Lock()
			got := append([]Drift(nil), drifts...)
			mu.Unlock()
			if len(got) >= n {
				return got
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("WatchDCB reported %d drifts, want %d", len(drifts), n)
		return nil
	}
	ds := waitDrift(1)
	if d := ds[0]; d.NIC != dev || d.Cmd != "IEEE_SET" || !hasChange(d.Changes, "nic/"+dev+"/pfc", "3", "3,4") {
		t.Errorf("drift %+v", d)
	}
	applied := map[string]intent.State{"host.vm": dp.Desired}
	p3 := plan.Make(ctx, s, f, reg, plan.Options{Applied: applied})
	d3 := p3.Device("host.vm")
	if !hasChange(d3.Drift, "nic/"+dev+"/pfc", "3,4", "3") || !hasChange(d3.Changes, "nic/"+dev+"/pfc", "3,4", "3") {
		t.Errorf("plan after dcb: drift %+v changes %+v", d3.Drift, d3.Changes)
	}
	testutil.DCBSet(t, "pfc", "set", "dev", dev, "prio-pfc", "4:off")
	ds = waitDrift(2)
	if len(ds[1].Changes) != 0 {
		t.Errorf("back at the baseline, drift %+v", ds[1])
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// hasChange finds path in cs; for plan changes Before is live and After
// desired, for drift Before is the baseline/applied and After live: the
// caller passes them in the order the list uses.
func hasChange(cs []intent.AttrChange, path, a, b string) bool {
	for _, c := range cs {
		if c.Path == path && ((c.Before == a && c.After == b) || (c.Before == b && c.After == a)) {
			return true
		}
	}
	return false
}

// TestFabdcbNetnsHost: the same intent on a fabdcb NIC moved into a
// network namespace (transport netns:NAME): DCB netlink and the NIC's
// sysfs are the namespace's.
func TestFabdcbNetnsHost(t *testing.T) {
	dev := fabdcbDev(t, 5)
	const ns = "fabdcb-host"
	testutil.Netns(t, ns)
	t.Cleanup(func() { _ = exec.Command("ip", "-n", ns, "link", "set", dev, "netns", "1").Run() })
	testutil.Run(t, "ip", "link", "set", dev, "netns", ns)
	src, fam := fabdcbSpecFor(t, ns, dev, "netns:"+ns)
	s, f := loadSpec(t, src)
	reg := registry(t)
	p := plan.Make(context.Background(), s, f, reg, plan.Options{})
	if d := p.Device("host.vm"); d.Error != "" || !d.HasChanges() {
		t.Fatalf("plan: %v %+v", d.Error, d.Changes)
	}
	res, err := applyPlan(t, p, f, reg)
	if err != nil || res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("apply: %v %+v", err, res.Devices[0])
	}
	checkApplied(t, ns, dev)
	checkFamily(t, ns, dev, fam)
	p2 := plan.Make(context.Background(), s, f, reg, plan.Options{})
	if d := p2.Device("host.vm"); d.Error != "" || d.HasChanges() {
		t.Fatalf("re-plan not clean: %v %+v", d.Error, d.Changes)
	}
}

// checkFamily reads back, with iproute2 and ethtool, what only one NIC
// family needs: ice's firmware LLDP agent off and DCBX host; bnxt's RoCE
// APP entry UDP 4791 on priority 3 and host DCBX.
func checkFamily(t *testing.T, ns, dev string, fam family) {
	t.Helper()
	run := func(cmd ...string) string {
		if ns != "" {
			cmd = append([]string{"ip", "netns", "exec", ns}, cmd...)
		}
		return testutil.Run(t, cmd...)
	}
	switch fam {
	case famICE:
		if out := run("ethtool", "--show-priv-flags", dev); !strings.Contains(out, "fw-lldp-agent") || !strings.Contains(out, ": off") {
			t.Errorf("ice: fw-lldp-agent not off after apply:\n%s", out)
		}
	case famBNXT:
		a := dcbShow(t, ns, "app", "show", "dev", dev)
		if fmt.Sprint(a["dgram_port_prio"]) != "[[4791 3]]" {
			t.Errorf("bnxt: RoCE APP entry: dgram_port_prio %v, want [[4791 3]]", a["dgram_port_prio"])
		}
	}
	if fam != famMLX5 {
		if out := run("dcb", "dcbx", "show", "dev", dev); !strings.Contains(out, "host") {
			t.Errorf("%s: DCBX not host after apply: %s", fam, out)
		}
	}
}

// TestFabdcbPersonality: what the host driver does for one NIC family
// only, against the module's personality.
//   - mlx5: a DSCP entry deleted behind fabctl's back leaves the firmware
//     mapping (0 after mlx5e_dcbnl_ieee_delapp), and the plan sees it.
//   - ice: without firmware_lldp = false the firmware LLDP agent owns DCB:
//     the plan lists the DCB settings as not expressible, naming the one
//     command; dcb's own writes fail with EINVAL (ice_dcbnl_setets).
//   - bnxt: apply adds the UDP 4791 APP entry; a dcb dcbx change away from
//     host mode (to CEE) is repaired by apply (bnxt refuses DCB writes
//     without it).
func TestFabdcbPersonality(t *testing.T) {
	dev := fabdcbDev(t, 6)
	fam := personalityOf(t, "", dev)
	ctx := context.Background()
	reg := registry(t)
	switch fam {
	case famICE:
		s, f := loadSpec(t, fabdcbSpec(t, dev, "local"))
		p := plan.Make(ctx, s, f, reg, plan.Options{})
		d := p.Device("host.vm")
		if d.Error != "" {
			t.Fatal(d.Error)
		}
		why := map[string]string{}
		for _, u := range d.Unexpressible {
			why[u.Path] = u.Reason
		}
		for _, k := range []string{"pfc", "trust", "tc/3/bandwidth"} {
			r := why["nic/"+dev+"/"+k]
			if !strings.Contains(r, "ethtool --set-priv-flags "+dev+" fw-lldp-agent off") || !strings.Contains(r, "firmware_lldp = false") {
				t.Errorf("ice with the firmware LLDP agent: %s not listed as not expressible with the command (reason %q)", k, r)
			}
		}
		for _, c := range d.Changes {
			if strings.HasSuffix(c.Path, "/pfc") {
				t.Errorf("planned a PFC change the NIC refuses: %+v", c)
			}
		}
		c, err := dcbnl.Dial(0) // this thread's namespace
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ets := desiredETS(&f.Hosts[0].NICs[0])
		if err := c.SetETS(dev, &ets); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("ETS write while the firmware LLDP agent owns DCB: %v, want EINVAL (ice_dcbnl_setets)", err)
		}
	case famBNXT:
		s, f := loadSpec(t, fabdcbSpec(t, dev, "local"))
		// A mode set by hand that bnxt takes back (CEE; IEEE alone is what
		// bnxt gives a NIC that refuses host mode: TestFabdcbBnxtLLDPAgent).
		testutil.DCBSet(t, "dcbx", "set", "dev", dev, "cee")
		if _, err := applyPlan(t, plan.Make(ctx, s, f, reg, plan.Options{}), f, reg); err != nil {
			t.Fatalf("apply on bnxt without host DCBX: %v", err)
		}
		checkApplied(t, "", dev)
		checkFamily(t, "", dev, fam)
		if d := plan.Make(ctx, s, f, reg, plan.Options{}).Device("host.vm"); d.Error != "" || d.HasChanges() {
			t.Fatalf("re-plan not clean: %v %+v", d.Error, d.Changes)
		}
	default:
		s, f := loadSpec(t, fabdcbSpec(t, dev, "local"))
		if _, err := applyPlan(t, plan.Make(ctx, s, f, reg, plan.Options{}), f, reg); err != nil {
			t.Fatal(err)
		}
		// DSCP 30 is in the spec's default class (0); the firmware default
		// is 3. fabctl wrote 30:0; delete it behind fabctl's back, then
		// re-apply and re-plan clean.
		testutil.DCBSet(t, "app", "del", "dev", dev, "dscp-prio", "30:0")
		d := plan.Make(ctx, s, f, reg, plan.Options{}).Device("host.vm")
		// The state lists only code points outside the default class, so
		// the plan removes the live exception dscp/30 = 3.
		seen := false
		for _, c := range d.Changes {
			seen = seen || (c.Path == "nic/"+dev+"/dscp/30" && c.Before == "3")
		}
		if !seen {
			t.Errorf("a DSCP entry missing from the NIC's table is not drift: %+v", d.Changes)
		}
		if _, err := applyPlan(t, plan.Make(ctx, s, f, reg, plan.Options{}), f, reg); err != nil {
			t.Fatal(err)
		}
		if d := plan.Make(ctx, s, f, reg, plan.Options{}).Device("host.vm"); d.Error != "" || d.HasChanges() {
			t.Fatalf("re-plan after the repair not clean: %v %+v", d.Error, d.Changes)
		}
	}
}

// bufferSpec adds a link with a speed and a cable length to the NIC: the
// receive buffers follow from it.
func bufferSpec(src, nic, cable string) string { return bufferSpecAt(src, nic, "100G", cable, true) }

// bufferSpecAt is bufferSpec at a link speed; manual asks fabctl to size
// the receive buffers (receive_buffers = "manual"), else the firmware
// does and fabctl sets the cable length only.
func bufferSpecAt(src, nic, speed, cable string, manual bool) string {
	if manual {
		src = strings.Replace(src, `addresses = ["198.18.10.1/24", "2001:db8:10::1/64"]`,
			`addresses = ["198.18.10.1/24", "2001:db8:10::1/64"]
    receive_buffers = "manual"`, 1)
	}
	return src + `
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
}
link {
  endpoints    = ["leaf1:Ethernet0", "vm:` + nic + `"]
  speed        = "` + speed + `"
  cable_length = "` + cable + `"
}
`
}

// TestFabdcbBuffer: the receive buffers from the link. mlx5: the plan
// has the layout (priority 3 alone on buffer 1) and the lossless buffer's
// size, apply writes them (sizes first, then the mapping, which the
// driver checks with the sizes it has), dcb reads them back, the re-plan
// is clean, a mapping changed with dcb behind fabctl's back is drift and
// apply repairs it. ice and bnxt have no dcbnl buffer ops: the plan lists
// the buffers as not expressible and the apply leaves them.
func TestFabdcbBuffer(t *testing.T) {
	dev := fabdcbDev(t, 7)
	src, fam := fabdcbSpecFor(t, "", dev, "local")
	s, f := loadSpec(t, bufferSpec(src, dev, "30m"))
	reg := registry(t)
	ctx := context.Background()
	p := plan.Make(ctx, s, f, reg, plan.Options{})
	dp := p.Device("host.vm")
	if dp.Error != "" {
		t.Fatal(dp.Error)
	}
	paths := []string{"nic/" + dev + "/buffer/prio", "nic/" + dev + "/buffer/1/size"}
	changed := map[string]intent.AttrChange{}
	for _, c := range dp.Changes {
		changed[c.Path] = c
	}
	why := map[string]string{}
	for _, u := range dp.Unexpressible {
		why[u.Path] = u.Reason
	}
	if fam != famMLX5 {
		for _, k := range paths {
			if _, ok := changed[k]; ok || !strings.Contains(why[k], "no dcbnl buffer ops") {
				t.Errorf("%s: %s planned %+v, not expressible %q", fam, k, changed[k], why[k])
			}
		}
		if _, err := applyPlan(t, p, f, reg); err != nil {
			t.Fatalf("apply: %v", err)
		}
		if d := plan.Make(ctx, s, f, reg, plan.Options{}).Device("host.vm"); d.Error != "" || d.HasChanges() {
			t.Fatalf("re-plan not clean: %v %+v", d.Error, d.Changes)
		}
		return
	}
	if c := changed[paths[0]]; c.After != "0,0,0,1,0,0,0,0" {
		t.Errorf("planned prio2buffer %+v", c)
	}
	if c := changed[paths[1]]; c.After != intent.BufferHeadroom {
		t.Errorf("planned lossless buffer size %+v", c)
	}
	for _, k := range paths {
		if why[k] != "" {
			t.Errorf("mlx5: %s not expressible: %s", k, why[k])
		}
	}
	res, err := applyPlan(t, p, f, reg)
	if err != nil || res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("apply: %v %+v", err, res.Devices[0])
	}
	b := dcbShow(t, "", "buffer", "show", "dev", dev)
	if got := fmt.Sprint(b["prio_buffer"]); got != "[0 0 0 1 0 0 0 0]" {
		t.Errorf("dcb buffer prio_buffer %s", got)
	}
	// At least the driver's minimum for 30 m at 100 Gbit/s, MTU 4200,
	// max_mtu 9216 (fabdcb's): (301 + 216*30/100) * 100000/1000 +
	// 272*4200/100 + 9216 + 128 = 36500 + 11424 + 9344 = 57268 B, in whole
	// 128-byte cells: 57344.
	sizes, _ := b["buffer_size"].([]any)
	if len(sizes) < 2 || fmt.Sprint(sizes[1]) != "57344" {
		t.Errorf("dcb buffer buffer_size %v, want buffer 1 = 57344", b["buffer_size"])
	}
	if v := strings.TrimSpace(testutil.Run(t, "cat", "/sys/class/net/"+dev+"/fabdcb/buffer_mode")); v != "manual" {
		t.Errorf("buffer mode %s", v)
	}
	if d := plan.Make(ctx, s, f, reg, plan.Options{}).Device("host.vm"); d.Error != "" || d.HasChanges() {
		t.Fatalf("re-plan not clean: %v %+v", d.Error, d.Changes)
	}
	testutil.DCBSet(t, "buffer", "set", "dev", dev, "prio-buffer", "all:0")
	p2 := plan.Make(ctx, s, f, reg, plan.Options{})
	if d := p2.Device("host.vm"); !hasChange(d.Changes, paths[0], "0,0,0,0,0,0,0,0", "0,0,0,1,0,0,0,0") {
		t.Errorf("a prio2buffer changed with dcb is not drift: %+v", d.Changes)
	}
	if _, err := applyPlan(t, p2, f, reg); err != nil {
		t.Fatal(err)
	}
	if d := plan.Make(ctx, s, f, reg, plan.Options{}).Device("host.vm"); d.Error != "" || d.HasChanges() {
		t.Fatalf("re-plan after the repair not clean: %v %+v", d.Error, d.Changes)
	}
}

// TestFabdcbBufferSpeeds: on mlx5 the PFC headroom grows with the speed
// the link runs at (calculate_xoff reads PTYS; fabdcb's link_speed): at
// 100G, 200G and 400G fabctl sizes the lossless buffer for the link and
// the driver takes it; a 100G spec on a port that trained at 400G gets
// the 400G headroom (the size for 100G is refused there, -ENOMEM).
func TestFabdcbBufferSpeeds(t *testing.T) {
	dev0 := fabdcbDev(t, 7)
	if fam := personalityOf(t, "", dev0); fam != famMLX5 {
		t.Skipf("buffers are mlx5's (this load is %s)", fam)
	}
	reg := registry(t)
	ctx := context.Background()
	for i, c := range []struct {
		spec string
		mbs  uint32
	}{{"100G", 100000}, {"200G", 200000}, {"400G", 400000}, {"100G", 400000}} {
		dev := fmt.Sprintf("fbsp%d", i)
		testutil.Run(t, "ip", "link", "add", "name", dev, "type", "fabdcb")
		t.Cleanup(func() { _ = exec.Command("ip", "link", "del", dev).Run() })
		testutil.Run(t, "ip", "link", "set", dev, "up")
		if err := os.WriteFile("/sys/class/net/"+dev+"/fabdcb/link_speed", []byte(strconv.Itoa(int(c.mbs))), 0o644); err != nil {
			t.Fatal(err)
		}
		s, f := loadSpec(t, bufferSpecAt(fabdcbSpec(t, dev, "local"), dev, c.spec, "30m", true))
		p := plan.Make(ctx, s, f, reg, plan.Options{})
		if d := p.Device("host.vm"); d.Error != "" {
			t.Fatal(d.Error)
		}
		res, err := applyPlan(t, p, f, reg)
		if err != nil || res.Devices[0].Status != apply.StatusApplied {
			t.Fatalf("%s spec, link at %d Mb/s: apply: %v %+v", c.spec, c.mbs, err, res.Devices[0])
		}
		want := roundCell(mlx5LosslessMin(30, c.mbs, 4200, 9216))
		b := dcbShow(t, "", "buffer", "show", "dev", dev)
		sizes, _ := b["buffer_size"].([]any)
		if len(sizes) < 2 || fmt.Sprint(sizes[1]) != strconv.Itoa(int(want)) {
			t.Errorf("%s spec, link at %d Mb/s: buffer_size %v, want buffer 1 = %d", c.spec, c.mbs, b["buffer_size"], want)
		}
		if d := plan.Make(ctx, s, f, reg, plan.Options{}).Device("host.vm"); d.Error != "" || d.HasChanges() {
			t.Fatalf("%s: re-plan not clean: %v %+v", c.spec, d.Error, d.Changes)
		}
		if c.spec == "100G" && c.mbs == 400000 {
			// Through fabctl's dcbnl (iproute2 6.1's dcb can take an ACK
			// for the driver's status: testutil.DCBSet).
			small := roundCell(mlx5LosslessMin(30, 100000, 4200, 9216))
			conn, err := dcbnl.Dial(0)
			if err != nil {
				t.Fatal(err)
			}
			ieee, err := conn.IEEE(dev)
			if err != nil || ieee.Buffer == nil {
				t.Fatalf("read the buffers: %v", err)
			}
			b := *ieee.Buffer
			b.BufferSize[1] = small
			if err := conn.SetBuffer(dev, &b); !errors.Is(err, syscall.ENOMEM) {
				t.Errorf("the 100G headroom (%d B) on a 400G link: %v, want ENOMEM (update_xoff_threshold)", small, err)
			}
			conn.Close()
		}
	}
}
