// Package opensm is fabctl's InfiniBand subnet-manager driver. It keeps
// the three opensm files that carry a fabric's partitions and QoS equal
// to the spec:
//
//   - partitions.conf, written whole: P_Keys, members by port GUID
//     (full/limited), the IPoIB group's MTU and rate, the SL
//     (opensm(8) PARTITION CONFIGURATION, doc/partition-config.txt);
//   - qos-policy.conf, written whole: a DEFAULT level and a level plus
//     match rule per partition (doc/QoS_management_in_OpenSM.txt);
//   - opensm.conf, where only fabctl's lines change: qos TRUE,
//     qos_max_vls, qos_high_limit, qos_sl2vl, qos_vlarb_high,
//     qos_vlarb_low, and the per-port-type variants of those unset so
//     they cannot override them.
//
// Read fetches the files over SSH (cat, through sudo -n when the host
// says sudo = true) and parses them into normalised state, so a plan
// shows settings that differ, never whitespace, comments or number
// spelling. Apply writes each changed file atomically (temp file in the
// same directory, sync, rename; the previous file kept as
// <file>.fabctl.bak), restores the files it already wrote when a later
// step fails, and sends opensm SIGHUP only when a file changed. Rollback
// writes the previous contents back.
package opensm

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// Name is the driver's registry key, the subnet manager devices' platform.
const Name = intent.PlatformOpenSM

// Default file locations: opensm's built-in defaults as Debian builds it
// (include/opensm/osm_config.h HAVE_DEFAULT_*), which opensm.conf's
// partition_config_file and qos_policy_file override.
const (
	DefaultConfFile       = "/etc/opensm/opensm.conf"
	DefaultPartitionsFile = "/etc/opensm/partitions.conf"
	DefaultQoSPolicyFile  = "/etc/opensm/qos-policy.conf"
	DefaultPIDFile        = "/var/run/opensm.pid"
)

// Options say where opensm keeps its files on the subnet manager.
type Options struct {
	ConfFile       string // opensm.conf (default DefaultConfFile)
	PartitionsFile string // when opensm.conf names none (default DefaultPartitionsFile)
	QoSPolicyFile  string // when opensm.conf names none (default DefaultQoSPolicyFile)
	// PIDFile names opensm's pid file (opensm --pidfile); when it is
	// missing or stale every opensm process whose configuration file is
	// ConfFile gets the signal (pidScript), never one started on another.
	PIDFile string
	SSH     sshtransport.ExecOptions
	// SweepTimeout bounds apply's wait, after SIGHUP, for opensm to
	// program the fabric (default DefaultSweepTimeout).
	SweepTimeout time.Duration
}

// opts are the driver's options with the spec's file places for this
// subnet manager (infiniband opensm_conf, opensm_pid_file), then the
// defaults.
func (d *Driver) opts(sm *intent.SubnetManager) Options {
	o := d.Opts
	if sm != nil && sm.ConfFile != "" {
		o.ConfFile = sm.ConfFile
	}
	if sm != nil && sm.PIDFile != "" {
		o.PIDFile = sm.PIDFile
	}
	return o.withDefaults()
}

func (o Options) withDefaults() Options {
	if o.ConfFile == "" {
		o.ConfFile = DefaultConfFile
	}
	if o.PartitionsFile == "" {
		o.PartitionsFile = DefaultPartitionsFile
	}
	if o.QoSPolicyFile == "" {
		o.QoSPolicyFile = DefaultQoSPolicyFile
	}
	if o.PIDFile == "" {
		o.PIDFile = DefaultPIDFile
	}
	return o
}

// Driver is the opensm driver. One Driver serves one run: it remembers
// what Read found per subnet manager for Changes and Findings.
type Driver struct {
	Opts Options

	mu   sync.Mutex
	live map[string]*liveFiles // device name -> last Read
}

// liveFiles is what a Read saw on a subnet manager.
type liveFiles struct {
	conf, parts, qos remoteFile
	pids             []int
	// fabric is the fabric read back with the files (nil: the spec
	// cables no InfiniBand fabric, or the caller reads it: fabricSkipped).
	fabric        *fabricView
	fabricSkipped bool
}

// New returns a driver with the default file locations.
func New() drivers.Driver { return &Driver{} }

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Renderer = (*Driver)(nil)
	_ drivers.Reporter = (*Driver)(nil)
	_ drivers.Limiter  = (*Driver)(nil)
)

// Unexpressible are the fabric ports' settings the last Read could not
// judge: a port not reached, down or unreadable (a finding says so), a
// table the port does not have, or a read left to validate's
// InfiniBand stage.
func (d *Driver) Unexpressible(t drivers.Target, desired intent.State) map[string]string {
	sm, err := smOf(t)
	if err != nil {
		return nil
	}
	lf := d.liveOf(sm.Name)
	return lf.unexpressible(sm, desired)
}

// Name is "opensm".
func (d *Driver) Name() string { return Name }

// Capabilities: transactions roll back by writing the previous files.
func (d *Driver) Capabilities() drivers.Capabilities { return drivers.Capabilities{Rollback: true} }

// Fields marks the changes that interrupt traffic once opensm applies
// them at its next heavy sweep.
func (d *Driver) Fields() []intent.Field {
	return []intent.Field{
		// A member put back (or added) interrupts nothing: only its
		// removal, or full membership turning limited, does.
		{Pattern: "partitions/*/member/*", Disruptive: "a port leaving a partition (or becoming a limited member) loses traffic on that P_Key", DisruptiveOnRemoval: true},
		{Pattern: "partitions/*/pkey", Disruptive: "a new P_Key moves the partition: IPoIB interfaces and QPs on the old P_Key stop"},
		{Pattern: "opensm/qos_sl2vl", Disruptive: "opensm reprograms every port's SL-to-VL table: traffic on remapped SLs moves to other VLs"},
		{Pattern: "opensm/qos_max_vls", Disruptive: "opensm sets every port's operational VLs: the ports renegotiate them, and traffic on a VL above the new count stops"},
	}
}

func smOf(t drivers.Target) (*intent.SubnetManager, error) {
	sm, ok := t.Intent.(*intent.SubnetManager)
	if !ok || sm == nil {
		return nil, fmt.Errorf("%s: the opensm driver needs a subnet manager intent, got %T", t.Device.Name, t.Intent)
	}
	return sm, nil
}

// open connects to the subnet manager.
func (d *Driver) open(ctx context.Context, t drivers.Target) (*intent.SubnetManager, *session, error) {
	sm, err := smOf(t)
	if err != nil {
		return nil, nil, err
	}
	r, err := d.dial(ctx, t, sm)
	if err != nil {
		return nil, nil, err
	}
	return sm, &session{r: r, name: sm.Name, sudo: sm.Sudo, sm: sm}, nil
}

// readFiles reads opensm.conf, then the partitions and QoS policy files
// it points at (or the defaults).
func (d *Driver) readFiles(ctx context.Context, s *session, withQoS bool) (*liveFiles, error) {
	o := d.opts(s.sm)
	lf := &liveFiles{}
	var err error
	if lf.conf, err = s.read(ctx, o.ConfFile); err != nil {
		return nil, err
	}
	opts := parseOpenSMConf(lf.conf.Data)
	pf, qf := o.PartitionsFile, o.QoSPolicyFile
	if v := opts["partition_config_file"]; v != "" {
		pf = v
	}
	if v := opts["qos_policy_file"]; v != "" {
		qf = v
	}
	if lf.parts, err = s.read(ctx, pf); err != nil {
		return nil, err
	}
	lf.qos = remoteFile{Path: qf}
	if withQoS {
		if lf.qos, err = s.read(ctx, qf); err != nil {
			return nil, err
		}
	}
	if lf.pids, err = s.pids(ctx, o.PIDFile, o.ConfFile); err != nil {
		return nil, err
	}
	return lf, nil
}

// liveState parses the files into state, limited to what the desired
// state manages.
func liveState(lf *liveFiles, desired intent.State, withQoS bool) intent.State {
	st := intent.State{}
	if lf.parts.Present {
		for k, v := range parsePartitions(lf.parts.Data) {
			st[k] = v
		}
	}
	if !withQoS {
		return st
	}
	if lf.qos.Present {
		for k, v := range parseQoSPolicy(lf.qos.Data) {
			st[k] = v
		}
	}
	for k, v := range openSMState(parseOpenSMConf(lf.conf.Data), managedOptions(desired)) {
		st[k] = v
	}
	return st
}

// Read returns the subnet manager's partitions, QoS policy and managed
// opensm.conf options as state.
func (d *Driver) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	sm, s, err := d.open(ctx, t)
	if err != nil {
		return nil, err
	}
	defer s.r.close()
	lf, err := d.readFiles(ctx, s, sm.QoS)
	if err != nil {
		return nil, err
	}
	desired := sm.Flatten()
	live := liveState(lf, desired, sm.QoS)
	if fabricSkipped(ctx) {
		lf.fabricSkipped = true
	} else if lf.fabric = readFabric(ctx, s, ibfabric.All); lf.fabric != nil {
		for k, v := range lf.fabric.live {
			live[k] = v
		}
	}
	d.mu.Lock()
	if d.live == nil {
		d.live = map[string]*liveFiles{}
	}
	d.live[sm.Name] = lf
	d.mu.Unlock()
	return live, nil
}

// desiredFiles computes the new content of the files a change touches,
// from the live files (opensm.conf is edited, the others rendered).
func desiredFiles(sm *intent.SubnetManager, lf *liveFiles, files map[string]bool) (map[string]remoteFile, error) {
	desired := sm.Flatten()
	out := map[string]remoteFile{}
	if files[filePartitions] {
		b, err := renderPartitionsKeeping(sm, sm.Fabric, keptPartitions(sm, lf.parts.Data))
		if err != nil {
			return nil, err
		}
		out[filePartitions] = remoteFile{Path: lf.parts.Path, Data: string(b), Present: true}
	}
	if files[fileQoSPolicy] {
		b, err := renderQoSPolicy(sm, sm.Fabric)
		if err != nil {
			return nil, err
		}
		out[fileQoSPolicy] = remoteFile{Path: lf.qos.Path, Data: string(b), Present: true}
	}
	if files[fileOpenSM] {
		out[fileOpenSM] = remoteFile{Path: lf.conf.Path, Data: editOpenSMConfKeeping(lf.conf.Data, desired, sm.Fabric, sm.Leaves), Present: true}
	}
	return out, nil
}

// fileOrder is the order files are written: partitions first (the QoS
// policy's match rules name P_Keys opensm checks against them), then the
// policy, then the options that turn QoS on.
var fileOrder = []string{filePartitions, fileQoSPolicy, fileOpenSM}

func (lf *liveFiles) file(name string) remoteFile {
	switch name {
	case filePartitions:
		return lf.parts
	case fileQoSPolicy:
		return lf.qos
	}
	return lf.conf
}

// defaultLive is what Changes assumes without a Read (a saved plan shown
// later): the default paths, content unknown.
func (d *Driver) defaultLive(sm *intent.SubnetManager) *liveFiles {
	o := d.opts(sm)
	return &liveFiles{conf: remoteFile{Path: o.ConfFile}, parts: remoteFile{Path: o.PartitionsFile}, qos: remoteFile{Path: o.QoSPolicyFile}}
}

// Changes makes one step per file the diff touches, its payload the
// write and a line diff of the file, and a last step that signals opensm.
func (d *Driver) Changes(t drivers.Target, diff []intent.AttrChange, desired intent.State) ([]drivers.Change, error) {
	sm, err := smOf(t)
	if err != nil {
		return nil, err
	}
	lf := d.liveOf(sm.Name)
	known := lf != nil
	if !known {
		lf = d.defaultLive(sm)
	}
	byFile := map[string][]intent.AttrChange{}
	var ports []intent.AttrChange
	for _, c := range diff {
		if strings.HasPrefix(c.Path, intent.PathFabric) {
			ports = append(ports, c)
			continue
		}
		byFile[fileOf(c.Path)] = append(byFile[fileOf(c.Path)], c)
	}
	touched := map[string]bool{}
	for f := range byFile {
		touched[f] = true
	}
	newFiles, err := desiredFiles(sm, lf, touched)
	if err != nil {
		return nil, err
	}
	var out []drivers.Change
	for _, f := range fileOrder {
		cs := byFile[f]
		if len(cs) == 0 {
			continue
		}
		old, nf := lf.file(f), newFiles[f]
		ch := drivers.Change{Summary: fmt.Sprintf("%s: %s", nf.Path, countActions(cs))}
		for _, c := range cs {
			ch.Paths = append(ch.Paths, c.Path)
			if ch.Disruptive == "" {
				ch.Disruptive = c.Disruptive
			}
		}
		ch.Payload = append(ch.Payload, fmt.Sprintf("write %s atomically (temp file + rename), previous file kept as %s.fabctl.bak", nf.Path, nf.Path))
		if known {
			ch.Payload = append(ch.Payload, lineDiff(old, nf)...)
		}
		out = append(out, ch)
	}
	if len(out) == 0 {
		return portSteps(sm, ports), nil
	}
	reload := drivers.Change{Summary: "opensm rereads its files (SIGHUP: a heavy sweep applies them to the fabric)"}
	switch {
	case !known:
		reload.Payload = []string{"kill -HUP $(pidof opensm)"}
	case len(lf.pids) == 0:
		reload.Summary = "opensm is not running on " + sm.Name + ": it reads the new files when it starts (no signal sent)"
	default:
		reload.Payload = []string{"kill -HUP " + joinInts(lf.pids)}
	}
	if hasFabric(sm) && len(reload.Payload) > 0 {
		reload.Summary += fmt.Sprintf("; fabctl re-reads the fabric until it is programmed (at most %s)", d.sweepTimeout())
	}
	return append(append(out, reload), portSteps(sm, ports)...), nil
}

// portSteps are the restores of fabric ports, one step per port.
func portSteps(sm *intent.SubnetManager, cs []intent.AttrChange) []drivers.Change {
	if len(cs) == 0 {
		return nil
	}
	byPort := map[string][]intent.AttrChange{}
	var order []intent.FabricPort
	for _, fp := range sm.Ports {
		pre := fp.Path()
		for _, c := range cs {
			if strings.HasPrefix(c.Path, pre) {
				if byPort[pre] == nil {
					order = append(order, fp)
				}
				byPort[pre] = append(byPort[pre], c)
			}
		}
	}
	var out []drivers.Change
	for _, fp := range order {
		ch := drivers.Change{}
		tables := map[string]bool{}
		for _, c := range byPort[fp.Path()] {
			ch.Paths = append(ch.Paths, c.Path)
			attr := strings.TrimPrefix(c.Path, fp.Path())
			switch {
			case strings.HasPrefix(attr, "pkey/"):
				tables["P_Key table"] = true
			case attr == "sl2vl":
				tables["SL-to-VL table"] = true
			default:
				tables["VL arbitration table"] = true
			}
			ch.Payload = append(ch.Payload, restoreLine(c, attr))
		}
		var names []string
		for n := range tables {
			names = append(names, n)
		}
		sort.Strings(names)
		ch.Summary = fmt.Sprintf("restore %s's %s to what the subnet manager programs (its SA record, set by SMP; opensm's sweep when its record differs too), then read it back",
			fp.Name(), strings.Join(names, " and "))
		out = append(out, ch)
	}
	return out
}

// restoreLine says what restoring one setting does.
func restoreLine(c intent.AttrChange, attr string) string {
	if part, ok := strings.CutPrefix(attr, "pkey/"); ok {
		switch c.Action {
		case intent.Create:
			return fmt.Sprintf("restore the P_Key of partition %s (%s member)", part, c.After)
		case intent.Delete:
			return fmt.Sprintf("remove the P_Key of partition %s (%s member), which the spec does not give the port", part, c.Before)
		}
		return fmt.Sprintf("restore partition %s's membership: %s, not %s", part, c.After, c.Before)
	}
	return fmt.Sprintf("restore %s: %s (the port has %s)", attr, c.After, c.Before)
}

func countActions(cs []intent.AttrChange) string {
	n := map[intent.Action]int{}
	for _, c := range cs {
		n[c.Action]++
	}
	var parts []string
	for _, a := range []struct {
		act  intent.Action
		word string
	}{{intent.Create, "to add"}, {intent.Update, "to change"}, {intent.Delete, "to remove"}} {
		if n[a.act] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[a.act], a.word))
		}
	}
	return strings.Join(parts, ", ")
}

// lineDiff is a unified diff of the file, for the plan's payload.
func lineDiff(old, nf remoteFile) []string {
	ud := difflib.UnifiedDiff{
		A: difflib.SplitLines(old.Data), B: difflib.SplitLines(nf.Data),
		FromFile: old.Path + " (live)", ToFile: nf.Path + " (fabctl)", Context: 1,
	}
	if !old.Present {
		ud.FromFile = "/dev/null"
	}
	s, err := difflib.GetUnifiedDiffString(ud)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, " ")
}

// token is what Rollback needs: the files as they were before the apply.
type token struct {
	Files []remoteFile `json:"files"`
}

// Apply writes the changed files (each atomically, with a backup) and
// signals opensm once if any changed. A failure restores the files already
// written; only when that fails too is the error a PartialError.
func (d *Driver) Apply(ctx context.Context, t drivers.Target, changes []drivers.Change, _ drivers.ApplyOptions) (drivers.Result, error) {
	sm, s, err := d.open(ctx, t)
	if err != nil {
		return drivers.Result{}, err
	}
	defer s.r.close()
	touched := map[string]bool{}
	portsTouched := false
	for _, ch := range changes {
		for _, p := range ch.Paths {
			if strings.HasPrefix(p, intent.PathFabric) {
				portsTouched = true
				continue
			}
			touched[fileOf(p)] = true
		}
	}
	for f := range touched {
		if f != filePartitions && f != fileQoSPolicy && f != fileOpenSM {
			return drivers.Result{}, fmt.Errorf("%s: nothing applied: %q is not an opensm setting", sm.Name, f)
		}
	}
	// The files as they are now, not as the plan saw them.
	lf, err := d.readFiles(ctx, s, sm.QoS || touched[fileQoSPolicy] || touched[fileOpenSM])
	if err != nil {
		return drivers.Result{}, err
	}
	newFiles, err := desiredFiles(sm, lf, touched)
	if err != nil {
		return drivers.Result{}, fmt.Errorf("%s: nothing applied: %w", sm.Name, err)
	}
	var tok token
	fail := func(err error) (drivers.Result, error) {
		var rerrs []string
		for i := len(tok.Files) - 1; i >= 0; i-- {
			if rerr := s.restore(context.WithoutCancel(ctx), tok.Files[i]); rerr != nil {
				rerrs = append(rerrs, rerr.Error())
			}
		}
		if len(rerrs) > 0 {
			return drivers.Result{}, &drivers.PartialError{Device: t.Device.Addr(), Err: fmt.Errorf("%v; restoring the files written before it failed: %s", err, strings.Join(rerrs, "; "))}
		}
		return drivers.Result{}, fmt.Errorf("%w (files written before it were restored; opensm was not signalled)", err)
	}
	for _, f := range fileOrder {
		nf, ok := newFiles[f]
		if !ok {
			continue
		}
		old := lf.file(f)
		if old.Present && old.Data == nf.Data {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := s.write(ctx, nf.Path, nf.Data, true); err != nil {
			return fail(err)
		}
		tok.Files = append(tok.Files, old)
	}
	// Signal opensm when a file changed; then settle the ports: re-read
	// the fabric, restore ports opensm does not, wait for its sweep
	// (fabric.go, settle.go).
	hup := len(tok.Files) > 0 && len(lf.pids) > 0
	if hup {
		if err := s.hup(ctx, lf.pids); err != nil {
			return fail(err)
		}
	}
	if hasFabric(sm) && (hup || portsTouched) {
		timeout := d.sweepTimeout()
		if _, err := settle(ctx, s, sm.Flatten(), lf.pids, hup, timeout, saKey(lf)); err != nil {
			if len(tok.Files) == 0 {
				return drivers.Result{}, fmt.Errorf("%s: %w", sm.Name, err)
			}
			// Put the previous files back and have opensm sweep them in.
			bg := context.WithoutCancel(ctx)
			var rerrs []string
			for i := len(tok.Files) - 1; i >= 0; i-- {
				if rerr := s.restore(bg, tok.Files[i]); rerr != nil {
					rerrs = append(rerrs, rerr.Error())
				}
			}
			if len(lf.pids) > 0 {
				if herr := s.hup(bg, lf.pids); herr != nil {
					rerrs = append(rerrs, "signal opensm: "+herr.Error())
				}
			}
			if len(rerrs) > 0 {
				return drivers.Result{}, &drivers.PartialError{Device: t.Device.Addr(), Err: fmt.Errorf("%s: %v; restoring the previous files failed: %s", sm.Name, err, strings.Join(rerrs, "; "))}
			}
			return drivers.Result{}, fmt.Errorf("%s: %w (the previous files are restored and opensm signalled to sweep them in)", sm.Name, err)
		}
	}
	raw, _ := json.Marshal(tok)
	return drivers.Result{Token: string(raw)}, nil
}

// Confirm: writes take effect at once; nothing is pending.
func (d *Driver) Confirm(ctx context.Context, t drivers.Target, r drivers.Result) error { return nil }

// Rollback writes back the files the transaction replaced (removing those
// it created) and signals opensm.
func (d *Driver) Rollback(ctx context.Context, t drivers.Target, r drivers.Result) error {
	var tok token
	if err := json.Unmarshal([]byte(r.Token), &tok); err != nil {
		return fmt.Errorf("%s: rollback token: %w", t.Device.Name, err)
	}
	if len(tok.Files) == 0 {
		return nil
	}
	_, s, err := d.open(ctx, t)
	if err != nil {
		return err
	}
	defer s.r.close()
	var errs []string
	for i := len(tok.Files) - 1; i >= 0; i-- {
		if err := s.restore(ctx, tok.Files[i]); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: rollback: %s", t.Device.Name, strings.Join(errs, "; "))
	}
	o := d.opts(s.sm)
	pids, err := s.pids(ctx, o.PIDFile, o.ConfFile)
	if err != nil {
		return err
	}
	if len(pids) > 0 {
		return s.hup(ctx, pids)
	}
	return nil
}

// Render returns the files fabctl writes: partitions.conf, and with QoS
// qos-policy.conf and the opensm.conf lines.
func (d *Driver) Render(t drivers.Target) ([]drivers.RenderedFile, error) {
	sm, err := smOf(t)
	if err != nil {
		return nil, err
	}
	parts, err := renderPartitions(sm, sm.Fabric)
	if err != nil {
		return nil, err
	}
	out := []drivers.RenderedFile{{Name: "partitions.conf", Data: parts}}
	if sm.QoS {
		qos, err := renderQoSPolicy(sm, sm.Fabric)
		if err != nil {
			return nil, err
		}
		out = append(out, drivers.RenderedFile{Name: "qos-policy.conf", Data: qos},
			drivers.RenderedFile{Name: "opensm.conf", Data: renderOpenSMLines(sm.Flatten(), sm.Fabric)})
	}
	return out, nil
}

// Findings reports what the last Read saw that the plan cannot change:
// an opensm that is not running, files at non-default places.
func (d *Driver) Findings(t drivers.Target) []drivers.Finding {
	sm, err := smOf(t)
	if err != nil {
		return nil
	}
	lf := d.liveOf(sm.Name)
	if lf == nil {
		return nil
	}
	o := d.opts(sm)
	var fs []drivers.Finding
	if len(lf.pids) == 0 {
		fs = append(fs, drivers.Finding{Severity: "warning", Message: fmt.Sprintf("opensm is not running on %s: no port leaves INIT without a subnet manager; the files take effect when it starts", sm.Name)})
	}
	for _, x := range []struct{ path, def, opt string }{{lf.parts.Path, o.PartitionsFile, "partition_config_file"}, {lf.qos.Path, o.QoSPolicyFile, "qos_policy_file"}} {
		if x.path != x.def {
			fs = append(fs, drivers.Finding{Severity: "info", Message: fmt.Sprintf("%s sets %s %s: fabctl reads and writes that file", lf.conf.Path, x.opt, x.path)})
		}
	}
	fs = append(fs, lf.fabric.planFindings(sm.Name)...)
	rank := map[string]int{drivers.SeverityError: 0, "warning": 1}
	sev := func(s string) int {
		if r, ok := rank[s]; ok {
			return r
		}
		return 2
	}
	sort.SliceStable(fs, func(i, j int) bool { return sev(fs[i].Severity) < sev(fs[j].Severity) })
	return fs
}

// liveOf returns what the last Read of the subnet manager name found (nil
// before one), under the driver's lock.
func (d *Driver) liveOf(name string) *liveFiles {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.live[name]
}
