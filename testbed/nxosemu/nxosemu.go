// Package nxosemu is a stateful Cisco NX-OS (Nexus 9000) CLI emulator
// over real SSH, written from Cisco's documentation (Cisco Nexus 9000
// Series NX-OS Quality of Service Configuration Guide, Release 10.x:
// "Configuring Classification" — class-map type qos, match dscp,
// policy-map type qos, set qos-group; "Configuring Queuing and
// Scheduling" — policy-map type queuing, the predefined c-out-8q-q*
// classes, bandwidth remaining percent, priority level, random-detect
// ... ecn; "Configuring Priority Flow Control" — policy-map type
// network-qos, c-8q-nq* classes, pause pfc-cos, mtu, system qos,
// priority-flow-control mode on, the PFC watchdog commands; and the
// Cisco Nexus 9000 Series NX-OS System Management Configuration Guide,
// "Configuring Rollback" — checkpoint, rollback running-config
// checkpoint, no checkpoint, show checkpoint summary), not from
// fabctl's renderer.
//
// Modes and prompts, as on NX-OS (a network-admin lands in exec "#"):
//
//	leaf#                          exec
//	leaf(config)#                  configure terminal (edits running-config)
//	leaf(config-cmap-qos)#         class-map type qos match-any NAME
//	leaf(config-pmap-qos)#         policy-map type qos NAME
//	leaf(config-pmap-c-qos)#       class NAME inside it
//	leaf(config-pmap-que)#         policy-map type queuing NAME
//	leaf(config-pmap-c-que)#       class type queuing c-out-8q-qN inside it
//	leaf(config-pmap-nqos)#        policy-map type network-qos NAME
//	leaf(config-pmap-nqos-c)#      class type network-qos c-8q-nqN inside it
//	leaf(config-sys-qos)#          system qos
//	leaf(config-if)#               interface Ethernet1/N
//
// A command not valid in a sub-mode is tried in the parent modes (the
// implicit exit NX-OS shares with IOS); `exit` leaves one mode, `end`
// returns to exec. Invalid input prints the caret line and "% Invalid
// command at '^' marker."; missing arguments "% Incomplete command at
// '^' marker."; semantic errors start with "ERROR: ". Checkpoints hold
// a copy of the running-config; `rollback running-config checkpoint
// NAME` restores it atomically. Faults (reject, drop before/after a
// command, hang) and per-command latency come from testbed/sshemu.
package nxosemu

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabctl/fabctl/testbed/sshemu"
)

// MaxCheckpoints is how many user checkpoints NX-OS keeps.
const MaxCheckpoints = 10

// Options configure an emulated switch.
type Options struct {
	Hostname string // default "leaf"
	User     string // default "admin"
	Password string
	Ports    int // Ethernet1/1..N (default 8)
	// CommitLatency delays `rollback` and `checkpoint` (the benchmark uses 200 ms).
	CommitLatency time.Duration
	// ShowLatency delays every show command: a real switch takes
	// 0.3-1 s to answer show running-config (benchmarks state it).
	ShowLatency time.Duration
	Addr        string // default 127.0.0.1:0
}

type checkpoint struct {
	cfg     *Config
	user    string
	created time.Time
}

// Switch is one emulated NX-OS switch.
type Switch struct {
	*sshemu.Server
	opts Options

	mu          sync.Mutex
	running     *Config
	startup     *Config   // what `copy running-config startup-config` saved; a reload boots it
	savedAt     time.Time // "!Startup config saved at:" (show-startup-config.txt)
	failSave    string    // FailSave: the save prints this and does not save
	checkpoints map[string]*checkpoint
	lastChange  time.Time
	rollbacks   int
}

// Start starts an emulated switch with a factory-default configuration.
func Start(opts Options) (*Switch, error) {
	if opts.Hostname == "" {
		opts.Hostname = "leaf"
	}
	if opts.User == "" {
		opts.User = "admin"
	}
	if opts.Ports == 0 {
		opts.Ports = 8
	}
	sw := &Switch{opts: opts, running: NewConfig(opts.Hostname, opts.Ports), checkpoints: map[string]*checkpoint{}, lastChange: time.Now()}
	// A factory switch boots from a startup-config that holds its running one.
	sw.startup, sw.savedAt = sw.running.Clone(), sw.lastChange
	srv, err := sshemu.Start(sshemu.Config{
		Addr:   opts.Addr,
		Users:  map[string]string{opts.User: opts.Password},
		Banner: "Cisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\nCopyright (C) 2002-2024, Cisco and/or its affiliates.\nAll rights reserved.\n",
		NewShell: func(user string) sshemu.Shell {
			return &shell{sw: sw, user: user}
		},
		CommandLatency: func(line string) time.Duration {
			f := strings.Fields(line)
			if len(f) > 0 && (f[0] == "checkpoint" || f[0] == "rollback") {
				return opts.CommitLatency
			}
			if len(f) > 0 && f[0] == "show" {
				return opts.ShowLatency
			}
			return 0
		},
	})
	if err != nil {
		return nil, err
	}
	sw.Server = srv
	return sw, nil
}

// RunningConfig is the body of `show running-config` (without the
// header lines that carry times) as bytes.
func (sw *Switch) RunningConfig() []byte {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return []byte(sw.running.Render())
}

// StartupConfig is the body of `show startup-config` (without its header
// lines) as bytes: the configuration a reload boots.
func (sw *Switch) StartupConfig() []byte {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return []byte(sw.startup.Render())
}

// Reload reboots the switch: running-config := startup-config. User
// checkpoints are dropped: Cisco's rollback guidelines say checkpoints are
// deleted after "write erase and reload", and third-party text says a plain
// reload clears them too (testdata/vendor/nxos/checkpoint-rollback.txt
// (4)-(5)); no source says they survive. Sessions stay open (the
// emulator's SSH server is not restarted); a shell in a configuration mode
// keeps its mode stack, which the suite does not rely on.
func (sw *Switch) Reload() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.running = sw.startup.Clone()
	sw.checkpoints = map[string]*checkpoint{}
	sw.lastChange = time.Now()
}

// FailSave makes `copy running-config startup-config` print output and
// not save while output is non-empty; "" clears it. Real NX-OS failure
// texts are in testdata/vendor/nxos/save.txt ("Configuration update
// aborted: ...").
func (sw *Switch) FailSave(output string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.failSave = output
}

// Edit changes the running configuration by hand (drift in tests).
func (sw *Switch) Edit(fn func(c *Config)) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	fn(sw.running)
	sw.lastChange = time.Now()
}

// Checkpoints lists the user checkpoints.
func (sw *Switch) Checkpoints() []string {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sortedKeys(sw.checkpoints)
}

// Rollbacks counts `rollback running-config checkpoint` runs.
func (sw *Switch) Rollbacks() int {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.rollbacks
}

// frame is one configuration (sub-)mode.
type frame struct {
	kind   string // config, cmap, pmap, pclass, sysqos, if
	ptype  string // policy type: qos, queuing, network-qos
	name   string // class-map, policy or interface name
	class  string // class inside a policy
	prompt string
}

type shell struct {
	sw    *Switch
	user  string
	stack []frame // empty: exec
}

func (s *shell) Prompt() string {
	h := s.sw.running.Hostname
	if len(s.stack) == 0 {
		return h + "# "
	}
	return h + "(" + s.stack[len(s.stack)-1].prompt + ")# "
}

// caret is NX-OS's error marker under the offending token.
func (s *shell) caret(line string, tok int, msg string) string {
	col := len(line) - len(strings.TrimLeft(line, " \t"))
	f := strings.Fields(line)
	if tok > 0 && tok < len(f) {
		rest := line
		for i := 0; i < tok; i++ {
			rest = strings.TrimLeft(rest, " \t")
			rest = rest[len(f[i]):]
		}
		col = len(line) - len(strings.TrimLeft(rest, " \t"))
	} else if tok >= len(f) && len(f) > 0 {
		col = len(strings.TrimRight(line, " \t")) + 1
	}
	return strings.Repeat(" ", len(s.Prompt())+col) + "^\n" + msg + "\n"
}

const (
	invalidMsg    = "% Invalid command at '^' marker."
	incompleteMsg = "% Incomplete command at '^' marker."
)

// Handle runs one line.
func (s *shell) Handle(line string) (string, bool) {
	toks := strings.Fields(line)
	if len(toks) == 0 || strings.HasPrefix(toks[0], "!") {
		return "", false
	}
	s.sw.mu.Lock()
	defer s.sw.mu.Unlock()
	if toks[0] == "show" {
		return s.show(line, toks), false
	}
	if len(s.stack) == 0 {
		return s.exec(line, toks)
	}
	return s.configLine(line, toks), false
}

func (s *shell) show(line string, toks []string) string {
	arg := strings.Join(toks[1:], " ")
	switch arg {
	case "running-config", "running-config all":
		return "!Command: show running-config\n!Running configuration last done at: " +
			s.sw.lastChange.UTC().Format("Mon Jan  2 15:04:05 2006") + "\n!Time: " +
			time.Now().UTC().Format("Mon Jan  2 15:04:05 2006") + "\n\n" + s.sw.running.Render()
	case "startup-config":
		// Layout of real NX-OS output: testdata/vendor/nxos/show-startup-config.txt
		// (napalm nxos_ssh fixture): "!Command:", "!Time:", "!Startup config saved at:".
		return "!Command: show startup-config\n!Time: " + time.Now().UTC().Format("Mon Jan  2 15:04:05 2006") +
			"\n!Startup config saved at: " + s.sw.savedAt.UTC().Format("Mon Jan  2 15:04:05 2006") + "\n\n" + s.sw.startup.Render()
	case "version":
		return "Cisco Nexus Operating System (NX-OS) Software\nSoftware\n  NXOS: version 10.4(3) [Feature Release]\nHardware\n  cisco Nexus9000 C9364E-SG2 Chassis\n\n  Device name: " + s.sw.running.Hostname + "\n"
	case "checkpoint summary":
		var b strings.Builder
		b.WriteString("\nUser Checkpoints:\n--------------------------------------\n")
		for i, n := range sortedKeys(s.sw.checkpoints) {
			cp := s.sw.checkpoints[n]
			fmt.Fprintf(&b, "%d) %s:\nCreated by %s\nCreated at %s\nSize is %d bytes\nDescription: None\n\n",
				i+1, n, cp.user, cp.created.UTC().Format("Mon, 15:04:05 02 Jan 2006"), len(cp.cfg.Render()))
		}
		return b.String()
	}
	return s.caret(line, 1, invalidMsg)
}

func (s *shell) exec(line string, toks []string) (string, bool) {
	switch toks[0] {
	case "exit", "logout", "quit":
		return "", true
	case "terminal":
		if len(toks) == 3 && (toks[1] == "width" || toks[1] == "length") {
			if _, err := strconv.Atoi(toks[2]); err == nil {
				return "", false
			}
		}
		return s.caret(line, 1, invalidMsg), false
	case "configure":
		if len(toks) == 1 || len(toks) == 2 && toks[1] == "terminal" {
			s.stack = []frame{{kind: "config", prompt: "config"}}
			return "Enter configuration commands, one per line. End with CNTL/Z.\n", false
		}
		return s.caret(line, 1, invalidMsg), false
	case "checkpoint":
		if len(toks) != 2 || !validName(toks[1]) {
			if len(toks) < 2 {
				return s.caret(line, 1, incompleteMsg), false
			}
			return s.caret(line, 2, invalidMsg), false
		}
		if _, ok := s.sw.checkpoints[toks[1]]; ok {
			return "ERROR: Checkpoint name already in use\n", false
		}
		if len(s.sw.checkpoints) >= MaxCheckpoints {
			return "ERROR: Maximum number of checkpoints reached\n", false
		}
		s.sw.checkpoints[toks[1]] = &checkpoint{cfg: s.sw.running.Clone(), user: s.user, created: time.Now()}
		return "...........Done\n", false
	case "no":
		if len(toks) == 3 && toks[1] == "checkpoint" {
			if _, ok := s.sw.checkpoints[toks[2]]; !ok {
				return "ERROR: No checkpoint with name " + toks[2] + "\n", false
			}
			delete(s.sw.checkpoints, toks[2])
			return "", false
		}
		return s.caret(line, 1, invalidMsg), false
	case "copy":
		// copy running-config startup-config (save.txt). Success prints the
		// progress bar and "Copy complete." (cisco.nxos cliconf and napalm
		// nxos_ssh look for "Copy complete"/"complete"); FailSave's text
		// replaces it, as "Configuration update aborted: ..." does on a switch.
		if len(toks) != 3 || toks[1] != "running-config" || toks[2] != "startup-config" {
			return s.caret(line, 1, invalidMsg), false
		}
		if s.sw.failSave != "" {
			return "[########################################]  99%" + s.sw.failSave + "\n", false
		}
		s.sw.startup, s.sw.savedAt = s.sw.running.Clone(), time.Now()
		return "[########################################] 100%\nCopy complete.\n", false
	case "rollback":
		if len(toks) < 4 {
			return s.caret(line, len(toks), incompleteMsg), false
		}
		if toks[1] != "running-config" || toks[2] != "checkpoint" || len(toks) > 5 ||
			len(toks) == 5 && toks[4] != "atomic" {
			return s.caret(line, 1, invalidMsg), false
		}
		cp, ok := s.sw.checkpoints[toks[3]]
		if !ok {
			return "ERROR: No checkpoint with name " + toks[3] + "\n", false
		}
		s.sw.running = cp.cfg.Clone()
		s.sw.lastChange = time.Now()
		s.sw.rollbacks++
		return "Note: Applying config parallelly may fail Rollback verification\nCollecting Running-Config\n" +
			"#Generating Rollback Patch\nExecuting Rollback Patch\nGenerating Running-config for verification\n" +
			"Generating Patch for verification\nVerification is Successful.\n\nRollback completed successfully.\n", false
	}
	return s.caret(line, 0, invalidMsg), false
}

// configLine runs one line in a configuration mode.
func (s *shell) configLine(line string, toks []string) string {
	switch toks[0] {
	case "exit":
		s.stack = s.stack[:len(s.stack)-1]
		return ""
	case "end":
		s.stack = nil
		return ""
	}
	// Try the current mode, then its parents (implicit exit).
	first := ""
	for lvl := len(s.stack) - 1; lvl >= 0; lvl-- {
		enter, out, ok := apply(s.sw.running, s.stack[lvl], toks)
		if !ok {
			if first == "" {
				first = out
			}
			continue
		}
		s.stack = s.stack[:lvl+1]
		if enter != nil {
			s.stack = append(s.stack, *enter)
		}
		s.sw.lastChange = time.Now()
		return out
	}
	if strings.HasPrefix(first, "ERROR: ") {
		return first
	}
	if strings.HasPrefix(first, "inc:") {
		n, _ := strconv.Atoi(strings.TrimPrefix(first, "inc:"))
		return s.caret(line, n, incompleteMsg)
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(first, "tok:"))
	return s.caret(line, n, invalidMsg)
}

// bad reports invalid input at token i; short reports missing input
// after token i; fail is a semantic error.
func bad(i int) (*frame, string, bool)   { return nil, "tok:" + strconv.Itoa(i), false }
func short(i int) (*frame, string, bool) { return nil, "inc:" + strconv.Itoa(i), false }
func fail(msg string) (*frame, string, bool) {
	return nil, "ERROR: " + msg + "\n", false
}
func ok() (*frame, string, bool) { return nil, "", true }

// apply runs one configuration command in a mode: the mode it enters
// (nil: none), its output, and false when not valid in this mode.
func apply(c *Config, m frame, t []string) (*frame, string, bool) {
	no := t[0] == "no"
	a, off := t, 0
	if no {
		a, off = t[1:], 1
		if len(a) == 0 {
			return short(1)
		}
	}
	switch m.kind {
	case "config":
		return applyGlobal(c, a, no, off)
	case "cmap":
		cm := c.ClassMaps[m.name]
		if cm == nil {
			return bad(0)
		}
		return applyClassMap(cm, a, no, off)
	case "pmap":
		p := c.Policies[m.ptype][m.name]
		if p == nil {
			return bad(0)
		}
		return applyPolicy(c, p, m, a, no, off)
	case "pclass":
		p := c.Policies[m.ptype][m.name]
		if p == nil || p.class(m.class) == nil {
			return bad(0)
		}
		return applyClass(p.class(m.class), m.ptype, a, no, off)
	case "sysqos":
		return applySystemQoS(c, a, no, off)
	case "if":
		return applyInterface(c, c.Interfaces[m.name], a, no, off)
	}
	return bad(0)
}

var promptOf = map[string]string{"qos": "qos", "queuing": "que", "network-qos": "nqos"}

func applyGlobal(c *Config, a []string, no bool, off int) (*frame, string, bool) {
	switch a[0] {
	case "hostname":
		if len(a) != 2 || !validName(a[1]) {
			return short(off + 1)
		}
		c.Hostname = a[1]
		return ok()
	case "interface":
		if len(a) < 2 {
			return short(off + 1)
		}
		name := canonIf(a[1])
		i, found := c.Interfaces[name]
		if !found || len(a) > 2 {
			return bad(off + 1)
		}
		if no {
			*i = Interface{}
			return ok()
		}
		return &frame{kind: "if", name: name, prompt: "config-if"}, "", true
	case "class-map":
		// class-map type qos [match-any|match-all] NAME
		if len(a) < 3 {
			return short(off + len(a))
		}
		if a[1] != "type" || a[2] != "qos" {
			return bad(off + 2)
		}
		if len(a) < 4 {
			return short(off + 3)
		}
		matchAll, name := false, a[3]
		if a[3] == "match-any" || a[3] == "match-all" {
			if len(a) != 5 {
				return short(off + 4)
			}
			matchAll, name = a[3] == "match-all", a[4]
		} else if len(a) != 4 {
			return bad(off + 4)
		}
		if !validName(name) || strings.HasPrefix(name, "c-") || name == "class-default" {
			return bad(off + len(a) - 1)
		}
		if no {
			if c.ClassMaps[name] == nil {
				return fail("Class-map " + name + " does not exist")
			}
			for _, pn := range sortedKeys(c.Policies["qos"]) {
				if c.Policies["qos"][pn].class(name) != nil {
					return fail("Class-map " + name + " is being used by policy-map " + pn)
				}
			}
			delete(c.ClassMaps, name)
			return ok()
		}
		cm := c.ClassMaps[name]
		if cm == nil {
			c.ClassMaps[name] = &ClassMap{MatchAll: matchAll}
		} else if cm.MatchAll != matchAll {
			return fail("Class-map " + name + " exists with a different match type")
		}
		return &frame{kind: "cmap", name: name, prompt: "config-cmap-qos"}, "", true
	case "policy-map":
		// policy-map type qos|queuing|network-qos NAME
		if len(a) < 3 {
			return short(off + len(a))
		}
		if a[1] != "type" || promptOf[a[2]] == "" {
			return bad(off + 2)
		}
		if len(a) != 4 {
			if len(a) < 4 {
				return short(off + 3)
			}
			return bad(off + 4)
		}
		name := a[3]
		if !validName(name) || strings.HasPrefix(name, "default-") {
			return bad(off + 3)
		}
		pm := c.Policies[a[2]]
		if no {
			if pm[name] == nil {
				return fail("Policy-map " + name + " does not exist")
			}
			if inUse(c, a[2], name) {
				return fail("Policy-map " + name + " is in use; remove it from system qos and interfaces first")
			}
			delete(pm, name)
			return ok()
		}
		if pm[name] == nil {
			pm[name] = &Policy{}
		}
		return &frame{kind: "pmap", ptype: a[2], name: name, prompt: "config-pmap-" + promptOf[a[2]]}, "", true
	case "system":
		if len(a) != 2 || a[1] != "qos" {
			if len(a) < 2 {
				return short(off + 1)
			}
			return bad(off + 1)
		}
		if no {
			c.SysQueuingOut, c.SysNetworkQoS, c.SysQoSInput = "", "", ""
			return ok()
		}
		return &frame{kind: "sysqos", prompt: "config-sys-qos"}, "", true
	case "priority-flow-control":
		return pfcGlobal(c, a, no, off)
	}
	return bad(off)
}

func inUse(c *Config, ptype, name string) bool {
	switch ptype {
	case "qos":
		if c.SysQoSInput == name {
			return true
		}
		for _, i := range c.Interfaces {
			if i.QoSInput == name {
				return true
			}
		}
	case "queuing":
		return c.SysQueuingOut == name
	case "network-qos":
		return c.SysNetworkQoS == name
	}
	return false
}

// pfcGlobal: priority-flow-control watch-dog-interval on|off,
// priority-flow-control watch-dog interval 100-1000,
// priority-flow-control watch-dog shutdown-multiplier 1-10,
// priority-flow-control auto-restore multiplier 0-100.
func pfcGlobal(c *Config, a []string, no bool, off int) (*frame, string, bool) {
	if len(a) < 2 {
		return short(off + 1)
	}
	num := func(i, lo, hi int) (int, bool) {
		if len(a) != i+1 {
			return 0, false
		}
		n, err := strconv.Atoi(a[i])
		return n, err == nil && n >= lo && n <= hi
	}
	switch a[1] {
	case "watch-dog-interval":
		if no {
			c.WDInterval = ""
			return ok()
		}
		if len(a) != 3 || a[2] != "on" && a[2] != "off" {
			if len(a) < 3 {
				return short(off + 2)
			}
			return bad(off + 2)
		}
		c.WDInterval = a[2]
		return ok()
	case "watch-dog":
		if len(a) < 3 {
			return short(off + 2)
		}
		switch a[2] {
		case "interval":
			if no {
				c.WDPoll = 0
				return ok()
			}
			n, good := num(3, 100, 1000)
			if !good {
				return bad(off + 3)
			}
			c.WDPoll = n
			if n == 100 {
				c.WDPoll = 0
			}
			return ok()
		case "shutdown-multiplier":
			if no {
				c.WDShutdown = 0
				return ok()
			}
			n, good := num(3, 1, 10)
			if !good {
				return bad(off + 3)
			}
			c.WDShutdown = n
			if n == 1 {
				c.WDShutdown = 0
			}
			return ok()
		}
		return bad(off + 2)
	case "auto-restore":
		if len(a) < 3 || a[2] != "multiplier" {
			return bad(off + 2)
		}
		if no {
			c.WDRestore = 0
			return ok()
		}
		n, good := num(3, 0, 100)
		if !good {
			return bad(off + 3)
		}
		c.WDRestore = n
		if n == 10 {
			c.WDRestore = 0
		}
		return ok()
	}
	return bad(off + 1)
}

func applyClassMap(cm *ClassMap, a []string, no bool, off int) (*frame, string, bool) {
	if a[0] != "match" {
		return bad(off)
	}
	if len(a) < 3 {
		return short(off + len(a))
	}
	var set []bool
	max := 63
	switch a[1] {
	case "dscp":
		set = cm.DSCP[:]
	case "cos":
		set, max = cm.COS[:], 7
	default:
		return bad(off + 1)
	}
	// Values: "24-31,48" or "24-31 48".
	var vals []int
	for i := 2; i < len(a); i++ {
		v, good := parseList(a[i], max)
		if !good {
			return bad(off + i)
		}
		vals = append(vals, v...)
	}
	for _, v := range vals {
		if no && !set[v] {
			return fail("match statement not found in class-map")
		}
	}
	for _, v := range vals {
		set[v] = !no
	}
	return ok()
}

// queuingClasses and nqosClasses are the system-defined classes of the
// 8-queue template a user policy may configure.
func systemClass(ptype, name string) bool {
	var pre string
	switch ptype {
	case "queuing":
		pre = "c-out-8q-q"
	case "network-qos":
		pre = "c-8q-nq"
	default:
		return false
	}
	rest := strings.TrimPrefix(name, pre)
	if rest == name {
		return false
	}
	if rest == "-default" {
		return true
	}
	n, err := strconv.Atoi(rest)
	return err == nil && n >= 1 && n <= 7 && strconv.Itoa(n) == rest
}

func applyPolicy(c *Config, p *Policy, m frame, a []string, no bool, off int) (*frame, string, bool) {
	if a[0] != "class" {
		return bad(off)
	}
	var name string
	switch m.ptype {
	case "qos":
		// class NAME | class type qos NAME | class class-default
		switch {
		case len(a) == 2:
			name = a[1]
		case len(a) == 4 && a[1] == "type" && a[2] == "qos":
			name = a[3]
		case len(a) < 2:
			return short(off + 1)
		default:
			return bad(off + 1)
		}
		if name != "class-default" && c.ClassMaps[name] == nil {
			return fail("Class-map " + name + " does not exist")
		}
	default:
		if len(a) < 4 {
			return short(off + len(a))
		}
		if a[1] != "type" || a[2] != m.ptype || len(a) != 4 {
			return bad(off + 2)
		}
		name = a[3]
		if !systemClass(m.ptype, name) {
			return bad(off + 3)
		}
	}
	if no {
		for i, cl := range p.Classes {
			if cl.Name == name {
				p.Classes = append(p.Classes[:i:i], p.Classes[i+1:]...)
				return ok()
			}
		}
		return fail("Class " + name + " is not configured in this policy-map")
	}
	if p.class(name) == nil {
		cl := newClass(name)
		// class-default stays last, as NX-OS keeps it.
		if n := len(p.Classes); n > 0 && p.Classes[n-1].Name == "class-default" && name != "class-default" {
			p.Classes = append(p.Classes[:n-1], cl, p.Classes[n-1])
		} else {
			p.Classes = append(p.Classes, cl)
		}
	}
	prompts := map[string]string{"qos": "config-pmap-c-qos", "queuing": "config-pmap-c-que", "network-qos": "config-pmap-nqos-c"}
	return &frame{kind: "pclass", ptype: m.ptype, name: m.name, class: name, prompt: prompts[m.ptype]}, "", true
}

func applyClass(cl *Class, ptype string, a []string, no bool, off int) (*frame, string, bool) {
	switch ptype {
	case "qos":
		// set qos-group 0-7
		if a[0] != "set" {
			return bad(off)
		}
		if len(a) < 2 || a[1] != "qos-group" {
			if len(a) < 2 {
				return short(off + 1)
			}
			return bad(off + 1)
		}
		if no {
			cl.QosGroup = -1
			return ok()
		}
		if len(a) != 3 {
			return short(off + 2)
		}
		n, err := strconv.Atoi(a[2])
		if err != nil || n < 0 || n > 7 {
			return bad(off + 2)
		}
		cl.QosGroup = n
		return ok()
	case "queuing":
		switch a[0] {
		case "bandwidth":
			if len(a) < 3 || a[1] != "remaining" || a[2] != "percent" {
				if len(a) < 3 {
					return short(off + len(a))
				}
				return bad(off + 1)
			}
			if no {
				cl.Bandwidth = -1
				return ok()
			}
			if len(a) != 4 {
				return short(off + 3)
			}
			n, err := strconv.Atoi(a[3])
			if err != nil || n < 0 || n > 100 {
				return bad(off + 3)
			}
			if cl.Priority > 0 {
				return fail("bandwidth remaining cannot be configured in a priority class")
			}
			cl.Bandwidth = n
			return ok()
		case "priority":
			if no {
				cl.Priority = 0
				return ok()
			}
			if len(a) != 3 || a[1] != "level" {
				if len(a) < 3 {
					return short(off + len(a))
				}
				return bad(off + 1)
			}
			n, err := strconv.Atoi(a[2])
			if err != nil || n < 1 || n > 7 {
				return bad(off + 2)
			}
			if cl.Bandwidth >= 0 {
				return fail("priority cannot be configured in a class with bandwidth remaining")
			}
			cl.Priority = n
			return ok()
		case "random-detect":
			if no {
				cl.WRED = ""
				return ok()
			}
			return wred(cl, a, off)
		}
	case "network-qos":
		switch a[0] {
		case "mtu":
			if no {
				cl.MTU = 0
				return ok()
			}
			if len(a) != 2 {
				return short(off + 1)
			}
			n, err := strconv.Atoi(a[1])
			if err != nil || n < 1500 || n > 9216 {
				return bad(off + 1)
			}
			cl.MTU = n
			return ok()
		case "pause":
			if len(a) < 2 || a[1] != "pfc-cos" {
				if len(a) < 2 {
					return short(off + 1)
				}
				return bad(off + 1)
			}
			if no {
				if len(a) == 2 {
					cl.PauseCOS = [8]bool{}
					return ok()
				}
			}
			if len(a) < 3 {
				return short(off + 2)
			}
			var vals []int
			for i := 2; i < len(a); i++ {
				v, good := parseList(a[i], 7)
				if !good {
					return bad(off + i)
				}
				vals = append(vals, v...)
			}
			for _, v := range vals {
				cl.PauseCOS[v] = !no
			}
			return ok()
		}
	}
	return bad(off)
}

// wred: random-detect minimum-threshold N UNIT maximum-threshold N UNIT
// [drop-probability P] [weight W] [ecn], units bytes|kbytes|mbytes.
func wred(cl *Class, a []string, off int) (*frame, string, bool) {
	if len(a) < 7 {
		return short(off + len(a))
	}
	units := map[string]int{"bytes": 1, "kbytes": 1024, "mbytes": 1024 * 1024}
	if a[1] != "minimum-threshold" {
		return bad(off + 1)
	}
	mn, err := strconv.Atoi(a[2])
	if err != nil || mn < 0 {
		return bad(off + 2)
	}
	if units[a[3]] == 0 {
		return bad(off + 3)
	}
	if a[4] != "maximum-threshold" {
		return bad(off + 4)
	}
	mx, err := strconv.Atoi(a[5])
	if err != nil || mx < 0 {
		return bad(off + 5)
	}
	if units[a[6]] == 0 {
		return bad(off + 6)
	}
	if mx*units[a[6]] < mn*units[a[3]] {
		return fail("maximum threshold must be greater than or equal to minimum threshold")
	}
	i := 7
	seen := map[string]bool{}
	for i < len(a) {
		kw := a[i]
		if seen[kw] {
			return bad(off + i)
		}
		seen[kw] = true
		switch kw {
		case "ecn":
			i++
			continue
		case "drop-probability", "weight":
			if i+1 >= len(a) {
				return short(off + i + 1)
			}
			n, err := strconv.Atoi(a[i+1])
			if err != nil || kw == "drop-probability" && (n < 0 || n > 100) || kw == "weight" && (n < 0 || n > 15) {
				return bad(off + i + 1)
			}
			i += 2
			continue
		}
		return bad(off + i)
	}
	cl.WRED = strings.Join(a[1:], " ")
	return ok()
}

func applySystemQoS(c *Config, a []string, no bool, off int) (*frame, string, bool) {
	// service-policy type qos input NAME | type queuing output NAME | type network-qos NAME
	if a[0] != "service-policy" {
		return bad(off)
	}
	if len(a) < 4 || a[1] != "type" {
		if len(a) < 4 {
			return short(off + len(a))
		}
		return bad(off + 1)
	}
	var field *string
	var name string
	switch {
	case a[2] == "qos" && len(a) == 5 && a[3] == "input":
		field, name = &c.SysQoSInput, a[4]
	case a[2] == "queuing" && len(a) == 5 && a[3] == "output":
		field, name = &c.SysQueuingOut, a[4]
	case a[2] == "network-qos" && len(a) == 4:
		field, name = &c.SysNetworkQoS, a[3]
	default:
		return bad(off + 3)
	}
	if no {
		if *field != name {
			return fail("service-policy " + name + " is not attached")
		}
		*field = ""
		return ok()
	}
	if c.Policies[a[2]][name] == nil {
		return fail("policy-map " + name + " does not exist")
	}
	*field = name
	return ok()
}

func applyInterface(c *Config, i *Interface, a []string, no bool, off int) (*frame, string, bool) {
	if i == nil {
		return bad(0)
	}
	switch a[0] {
	case "mtu":
		if no {
			i.MTU = 0
			return ok()
		}
		if len(a) != 2 {
			return short(off + 1)
		}
		n, err := strconv.Atoi(a[1])
		if err != nil || n < 576 || n > 9216 {
			return bad(off + 1)
		}
		i.MTU = n
		if n == 1500 {
			i.MTU = 0
		}
		return ok()
	case "priority-flow-control":
		if len(a) < 2 {
			return short(off + 1)
		}
		switch a[1] {
		case "mode":
			if no {
				i.PFCMode = ""
				return ok()
			}
			if len(a) != 3 || a[2] != "on" && a[2] != "off" && a[2] != "auto" {
				return bad(off + 2)
			}
			i.PFCMode = a[2]
			if a[2] == "auto" {
				i.PFCMode = ""
			}
			return ok()
		case "watch-dog-interval":
			if no {
				i.WD = ""
				return ok()
			}
			if len(a) != 3 || a[2] != "on" && a[2] != "off" {
				return bad(off + 2)
			}
			i.WD = a[2]
			return ok()
		}
		return bad(off + 1)
	case "service-policy":
		if len(a) < 5 || a[1] != "type" || a[2] != "qos" || a[3] != "input" || len(a) > 5 {
			if len(a) < 5 {
				return short(off + len(a))
			}
			return bad(off + 1)
		}
		if no {
			if i.QoSInput != a[4] {
				return fail("service-policy " + a[4] + " is not attached to the interface")
			}
			i.QoSInput = ""
			return ok()
		}
		if c.Policies["qos"][a[4]] == nil {
			return fail("policy-map " + a[4] + " does not exist")
		}
		i.QoSInput = a[4]
		return ok()
	case "flowcontrol":
		if len(a) < 2 {
			return short(off + 1)
		}
		var p *bool
		switch a[1] {
		case "send":
			p = &i.FlowSend
		case "receive":
			p = &i.FlowReceive
		default:
			return bad(off + 1)
		}
		if no {
			*p = false
			return ok()
		}
		if len(a) != 3 || a[2] != "on" && a[2] != "off" {
			return bad(off + 2)
		}
		*p = a[2] == "on"
		return ok()
	case "description":
		if no {
			i.Description = ""
			return ok()
		}
		i.Description = strings.Join(a[1:], " ")
		return ok()
	case "shutdown":
		i.Shutdown = !no
		return ok()
	}
	return bad(off)
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// canonIf expands NX-OS's accepted abbreviations: eth1/1, e1/1 → Ethernet1/1.
func canonIf(n string) string {
	l := strings.ToLower(n)
	for _, p := range []string{"ethernet", "eth", "e"} {
		if strings.HasPrefix(l, p) && len(l) > len(p) && l[len(p)] >= '0' && l[len(p)] <= '9' {
			return "Ethernet" + n[len(p):]
		}
	}
	return n
}
