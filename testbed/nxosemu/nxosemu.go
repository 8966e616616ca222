// Package nxosemu is a stateful Cisco NX-OS (Nexus 9000) CLI emulator
// over real SSH. Its grammar is strict: it accepts exactly the command
// forms the vendor corpus shows (testdata/vendor/nxos/*.txt, *.cfg; each
// accepted form cites its corpus file and line beside the code that
// accepts it) and refuses everything else the way NX-OS refuses a command
// it cannot parse: a caret line under the offending token and
// "% Invalid command at '^' marker." (real NX-OS output kept by napalm,
// testdata/vendor/nxos/session.txt). In particular it refuses the forms
// fabctl once sent without a source: `priority-flow-control watch-dog
// interval|shutdown-multiplier`, `priority-flow-control auto-restore
// multiplier`, `priority-flow-control watch-dog-interval off`, the bare
// `no priority-flow-control mode` / `no ... watch-dog-interval`,
// `flowcontrol`, and the undocumented negations inside policies (`no
// class`, `no set qos-group`, `no bandwidth`, `no priority`, `no
// random-detect`, `no pause pfc-cos`, `no mtu`).
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
// implicit exit: Cisco's recipe types `interface`, `system qos` and the
// next `policy-map` without leaving the previous mode,
// cisco-roce-enable.cfg:20-33); `exit` leaves one mode, `end` returns to
// exec. Semantic refusals start with "ERROR: "; their wording has no
// vendor source and is the emulator's own (marked where produced).
// Checkpoints hold a copy of the running-config; `rollback running-config
// checkpoint NAME` restores it atomically. The switch keeps a
// startup-config: `copy running-config startup-config` saves to it,
// `show startup-config` prints it, Reload boots it. Faults (reject, drop
// before/after a command, hang) and per-command latency come from
// testbed/sshemu.
package nxosemu

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabctl/fabctl/testbed/portlink"
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
	// ExtraPorts are more interfaces the switch has (Ethernet2/1 on
	// another slot, the breakout lane Ethernet1/1/1).
	ExtraPorts []string
	// CommitLatency delays `rollback` and `checkpoint` (the benchmark uses 200 ms).
	CommitLatency time.Duration
	// ShowLatency delays every show command: a real switch takes
	// 0.3-1 s to answer show running-config (benchmarks state it).
	ShowLatency time.Duration
	Addr        string // default 127.0.0.1:0
	// DefaultSwitchport starts the switch with `system default
	// switchport`: its ports are layer 2 unless `no switchport` makes
	// one routed (Config.DefaultSwitchport).
	DefaultSwitchport bool
	// Links is the switch's cabling: `show interface | json` and `show
	// lldp neighbors detail | json` answer from it (links.go). nil: every
	// port down, no neighbours.
	Links portlink.Source
	// Chassis is the chassis_id `show version | json` prints (default
	// DefaultChassis; "Nexus9000 C9808 Chassis" makes a Nexus 9800).
	Chassis string
}

// DefaultChassis is the chassis of NAPALM's real NX-OSv capture
// (testdata/vendor/nxos/napalm-show-version.json).
const DefaultChassis = "NX-OSv Chassis"

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
	sw.running.DefaultSwitchport = opts.DefaultSwitchport
	for _, n := range opts.ExtraPorts {
		sw.running.Interfaces[n] = &Interface{}
	}
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

// invalidMsg is NX-OS's parse error (session.txt: real output). The
// corpus holds no real "Incomplete command" output, so a command missing
// its arguments gets the same message.
const invalidMsg = "% Invalid command at '^' marker."

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
	case "running-config":
		// show-running-config-header.txt:10-12 (real 10.3(1) output).
		return "!Command: show running-config\n!Running configuration last done at: " +
			s.sw.lastChange.UTC().Format("Mon Jan  2 15:04:05 2006") + "\n!Time: " +
			time.Now().UTC().Format("Mon Jan  2 15:04:05 2006") + "\n\n" + s.sw.running.Render()
	case "startup-config":
		// show-startup-config.txt:1-3 (real 7.3 output kept by napalm):
		// "!Command:", "!Time:", "!Startup config saved at:".
		return "!Command: show startup-config\n!Time: " + time.Now().UTC().Format("Mon Jan  2 15:04:05 2006") +
			"\n!Startup config saved at: " + s.sw.savedAt.UTC().Format("Mon Jan  2 15:04:05 2006") + "\n\n" + s.sw.startup.Render()
	case "running-config all | incl 'system default switchport'":
		// cisco.nxos @154aa540 config/interfaces/interfaces.py l.92-98
		// sends exactly this to learn the default interface mode and
		// parses "(no )*system default switchport$" (l.205-211);
		// `running-config all` shows the default line too.
		if s.sw.running.DefaultSwitchport {
			return "system default switchport\n"
		}
		return "no system default switchport\n"
	case "interface | json":
		// napalm-show-interface.json, harvest-show-interface.json (links.go)
		return s.showInterfaceJSON()
	case "lldp neighbors detail | json":
		// harvest-show-lldp-neighbors-detail.json (links.go)
		return s.showLLDPJSON()
	case "version | json":
		// napalm-show-version.json: the capture's fields, chassis_id
		// and host_name this switch's.
		return s.showVersionJSON()
	case "checkpoint summary":
		// checkpoint-rollback.txt (6): layout of third-party output (learnduty.com).
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
	case "exit":
		// scrapligo's cisco_nxos on-close (session.txt).
		return "", true
	case "terminal":
		// terminal length 0 / terminal width 511 (session.txt:14-15).
		if len(toks) == 3 && (toks[1] == "width" || toks[1] == "length") {
			if _, err := strconv.Atoi(toks[2]); err == nil {
				return "", false
			}
		}
		return s.caret(line, 1, invalidMsg), false
	case "configure", "conf":
		// `conf` (cisco-roce-enable.cfg:10) and its full form `configure
		// terminal` (scrapligo's cisco_nxos escalate; shapes.txt DERIVED).
		if toks[0] == "conf" && len(toks) == 1 || toks[0] == "configure" && len(toks) == 2 && toks[1] == "terminal" {
			s.stack = []frame{{kind: "config", prompt: "config"}}
			return "Enter configuration commands, one per line. End with CNTL/Z.\n", false
		}
		return s.caret(line, 1, invalidMsg), false
	case "copy":
		// copy running-config startup-config (save.txt:18). Success prints
		// the progress bar and "Copy complete." (cisco.nxos cliconf and
		// napalm nxos_ssh look for "Copy complete"/"complete"); FailSave's
		// text replaces it, as "Configuration update aborted: ..." does on
		// a switch (save.txt:21-22).
		if len(toks) != 3 || toks[1] != "running-config" || toks[2] != "startup-config" {
			return s.caret(line, 1, invalidMsg), false
		}
		if s.sw.failSave != "" {
			return "[########################################]  99%" + s.sw.failSave + "\n", false
		}
		s.sw.startup, s.sw.savedAt = s.sw.running.Clone(), time.Now()
		return "[########################################] 100%\nCopy complete.\n", false
	case "checkpoint":
		// checkpoint <name> (checkpoint-rollback.txt:13): at most ten,
		// unique names (l.14-15); name up to 32 characters (l.9, N5K help).
		if len(toks) != 2 || !validName(toks[1]) || len(toks[1]) > 32 {
			return s.caret(line, 1, invalidMsg), false
		}
		if _, ok := s.sw.checkpoints[toks[1]]; ok {
			return "ERROR: Checkpoint name already in use\n", false // wording: emulator's own
		}
		if len(s.sw.checkpoints) >= MaxCheckpoints {
			return "ERROR: Maximum number of checkpoints reached\n", false // wording: emulator's own
		}
		s.sw.checkpoints[toks[1]] = &checkpoint{cfg: s.sw.running.Clone(), user: s.user, created: time.Now()}
		return "...........Done\n", false
	case "no":
		// no checkpoint <name> (checkpoint-rollback.txt:17).
		if len(toks) == 3 && toks[1] == "checkpoint" {
			if _, ok := s.sw.checkpoints[toks[2]]; !ok {
				return "ERROR: No checkpoint with name " + toks[2] + "\n", false // wording: emulator's own
			}
			delete(s.sw.checkpoints, toks[2])
			return "", false
		}
		return s.caret(line, 1, invalidMsg), false
	case "rollback":
		// rollback running-config checkpoint <name> [atomic]
		// (checkpoint-rollback.txt:19; atomic, the default: learnduty.com).
		if len(toks) < 4 || toks[1] != "running-config" || toks[2] != "checkpoint" || len(toks) > 5 ||
			len(toks) == 5 && toks[4] != "atomic" {
			return s.caret(line, 1, invalidMsg), false
		}
		cp, ok := s.sw.checkpoints[toks[3]]
		if !ok {
			return "ERROR: No checkpoint with name " + toks[3] + "\n", false // wording: emulator's own
		}
		s.sw.running = cp.cfg.Clone()
		s.sw.lastChange = time.Now()
		s.sw.rollbacks++
		return "Rollback completed successfully.\n", false // "Rollback completed successfully." wording: emulator's own
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
	n, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(first, "inc:"), "tok:"))
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
// (nil: none), its output, and false when not valid in this mode. Only
// the `no` forms the corpus shows are accepted; each grammar function
// names its sources. Corpus files are in testdata/vendor/nxos/.
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
		if p == nil || no {
			return bad(0) // no `no class ...` in the corpus
		}
		return applyPolicy(c, p, m, a, off)
	case "pclass":
		p := c.Policies[m.ptype][m.name]
		if p == nil || p.class(m.class) == nil || no {
			return bad(0) // no negation inside a policy class in the corpus
		}
		return applyClass(p.class(m.class), m.ptype, a, off)
	case "sysqos":
		return applySystemQoS(c, a, no, off)
	case "if":
		return applyInterface(c, c.Interfaces[m.name], a, no, off)
	}
	return bad(0)
}

var promptOf = map[string]string{"qos": "qos", "queuing": "que", "network-qos": "nqos"}

// applyGlobal: the global configuration commands.
func applyGlobal(c *Config, a []string, no bool, off int) (*frame, string, bool) {
	switch a[0] {
	case "hostname":
		// hostname NAME (show-running-config-header.txt:15, running-config line).
		if no || len(a) != 2 || !validName(a[1]) {
			return bad(off + 1)
		}
		c.Hostname = a[1]
		return ok()
	case "interface":
		// interface Ethernet1/1 (show-running-config-header.txt:19) or
		// interface ethernet 1/1 (microsoft-azure-local-n9k.cfg:48).
		if no {
			return bad(off)
		}
		name := ""
		switch {
		case len(a) == 2:
			name = canonIf(a[1])
		case len(a) == 3 && strings.EqualFold(a[1], "ethernet"):
			name = "Ethernet" + a[2]
		}
		if _, found := c.Interfaces[name]; !found {
			return bad(off + 1)
		}
		return &frame{kind: "if", name: name, prompt: "config-if"}, "", true
	case "class-map":
		// class-map type qos match-any NAME (cisco-roce-enable.cfg:20),
		// class-map type qos match-all NAME (microsoft-azure-local-n9k.cfg:18),
		// no class-map type qos match-any NAME (cisco-roce-enable.cfg:76).
		if len(a) != 5 || a[1] != "type" || a[2] != "qos" || a[3] != "match-any" && (a[3] != "match-all" || no) {
			return bad(off + min(len(a), 4))
		}
		matchAll, name := a[3] == "match-all", a[4]
		if !validName(name) || strings.HasPrefix(name, "c-") || name == "class-default" {
			return bad(off + 4)
		}
		if no {
			if c.ClassMaps[name] == nil {
				return fail("Class-map " + name + " does not exist") // wording: emulator's own
			}
			for _, pn := range sortedKeys(c.Policies["qos"]) {
				if c.Policies["qos"][pn].class(name) != nil {
					return fail("Class-map " + name + " is being used by policy-map " + pn) // wording: emulator's own
				}
			}
			delete(c.ClassMaps, name)
			return ok()
		}
		cm := c.ClassMaps[name]
		if cm == nil {
			c.ClassMaps[name] = &ClassMap{MatchAll: matchAll}
		} else if cm.MatchAll != matchAll {
			return fail("Class-map " + name + " exists with a different match type") // wording: emulator's own
		}
		return &frame{kind: "cmap", name: name, prompt: "config-cmap-qos"}, "", true
	case "policy-map":
		// policy-map type qos|queuing|network-qos NAME (cisco-roce-enable.cfg:24,33,12)
		// and their no forms (cisco-roce-enable.cfg:73-75).
		if len(a) != 4 || a[1] != "type" || promptOf[a[2]] == "" {
			return bad(off + min(len(a), 2))
		}
		name := a[3]
		if !validName(name) || strings.HasPrefix(name, "default-") {
			return bad(off + 3)
		}
		pm := c.Policies[a[2]]
		if no {
			if pm[name] == nil {
				return fail("Policy-map " + name + " does not exist") // wording: emulator's own
			}
			if inUse(c, a[2], name) {
				return fail("Policy-map " + name + " is in use; remove it from system qos and interfaces first") // wording: emulator's own
			}
			delete(pm, name)
			return ok()
		}
		if pm[name] == nil {
			pm[name] = &Policy{}
		}
		return &frame{kind: "pmap", ptype: a[2], name: name, prompt: "config-pmap-" + promptOf[a[2]]}, "", true
	case "system":
		// system qos (cisco-roce-enable.cfg:51); no `no system qos` in the corpus.
		if no || len(a) != 2 || a[1] != "qos" {
			return bad(off + 1)
		}
		return &frame{kind: "sysqos", prompt: "config-sys-qos"}, "", true
	case "priority-flow-control":
		// priority-flow-control watch-dog-interval on (cisco-roce-enable.cfg:11)
		// and its removal, the full line negated (cisco-roce-enable.cfg:68).
		// No other global PFC form has a source (cisco-pfc-guide.txt, audit N12-N14).
		if len(a) != 3 || a[1] != "watch-dog-interval" || a[2] != "on" {
			return bad(off + min(len(a), 2))
		}
		c.WDInterval = "on"
		if no {
			c.WDInterval = ""
		}
		return ok()
	}
	return bad(off)
}

func inUse(c *Config, ptype, name string) bool {
	switch ptype {
	case "qos":
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

// applyClassMap: match dscp LIST (cisco-roce-enable.cfg:23, ranges
// "24-31"), no match dscp LIST (Cisco NX-OS command reference,
// cisco-cmdref-qos.txt), match cos N (microsoft-azure-local-n9k.cfg:19).
//
// A match-all class-map holds one match statement, as every source shows
// it (azure-local-tor-qos.cfg, microsoft-azure-local-n9k.cfg: `match cos
// 3`); how NX-OS stores and prints several in one (a packet has one CoS)
// has no source, so a second is refused (the NX-OS driver reads such a
// class-map as a classification it cannot say: drivers/switch/nxos/
// foreign.go).
func applyClassMap(cm *ClassMap, a []string, no bool, off int) (*frame, string, bool) {
	if a[0] != "match" || len(a) != 3 {
		return bad(off + min(len(a), 1))
	}
	if cm.MatchAll && !no && !cm.empty() {
		return bad(off)
	}
	switch {
	case a[1] == "dscp":
		vals, good := parseList(a[2], 63)
		if !good {
			return bad(off + 2)
		}
		for _, v := range vals {
			if no && !cm.DSCP[v] {
				return fail("match statement not found in class-map") // wording: emulator's own
			}
		}
		for _, v := range vals {
			cm.DSCP[v] = !no
		}
		return ok()
	case a[1] == "cos" && !no:
		n, err := strconv.Atoi(a[2])
		if err != nil || n < 0 || n > 7 {
			return bad(off + 2)
		}
		cm.COS[n] = true
		return ok()
	}
	return bad(off + 1)
}

// systemClass: the system-defined classes of the 8-queue template a
// user policy may configure: c-out-8q-q-default, c-out-8q-q1..7
// (cisco-roce-enable.cfg:34-49) and c-8q-nq-default, c-8q-nq1..7
// (cisco-roce-enable.cfg:13,16; microsoft-azure-local-n9k.cfg:14).
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

// applyPolicy: class NAME / class class-default in a qos policy
// (cisco-roce-enable.cfg:25,29); class type queuing|network-qos
// SYSCLASS in the others (cisco-roce-enable.cfg:34,13).
func applyPolicy(c *Config, p *Policy, m frame, a []string, off int) (*frame, string, bool) {
	if a[0] != "class" {
		return bad(off)
	}
	var name string
	switch m.ptype {
	case "qos":
		if len(a) != 2 {
			return bad(off + 1)
		}
		name = a[1]
		if name != "class-default" && c.ClassMaps[name] == nil {
			return fail("Class-map " + name + " does not exist") // wording: emulator's own
		}
	default:
		if len(a) != 4 || a[1] != "type" || a[2] != m.ptype {
			return bad(off + min(len(a), 2))
		}
		name = a[3]
		if !systemClass(m.ptype, name) {
			return bad(off + 3)
		}
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

// applyClass: the commands inside a policy class; no negation has a source.
func applyClass(cl *Class, ptype string, a []string, off int) (*frame, string, bool) {
	num := func(i, lo, hi int) (int, bool) {
		if len(a) != i+1 {
			return 0, false
		}
		n, err := strconv.Atoi(a[i])
		return n, err == nil && n >= lo && n <= hi
	}
	switch ptype {
	case "qos":
		// set qos-group N (cisco-roce-enable.cfg:26,30).
		if a[0] != "set" || len(a) < 2 || a[1] != "qos-group" {
			return bad(off + min(len(a)-1, 1))
		}
		n, good := num(2, 0, 7)
		if !good {
			return bad(off + 2)
		}
		cl.QosGroup = n
		return ok()
	case "queuing":
		switch {
		case a[0] == "bandwidth" && len(a) >= 3 && a[1] == "remaining" && a[2] == "percent":
			// bandwidth remaining percent N (cisco-roce-enable.cfg:35,41).
			n, good := num(3, 0, 100)
			if !good {
				return bad(off + 3)
			}
			if cl.Priority > 0 {
				return fail("bandwidth remaining cannot be configured in a priority class") // wording: emulator's own
			}
			cl.Bandwidth = n
			return ok()
		case a[0] == "bandwidth" && len(a) >= 2 && a[1] == "percent":
			// bandwidth percent N (microsoft-azure-local-n9k.cfg:44).
			n, good := num(2, 0, 100)
			if !good {
				return bad(off + 2)
			}
			cl.BandwidthPct = n
			return ok()
		case a[0] == "priority":
			// priority level 1 (cisco-roce-enable.cfg:50).
			if len(a) != 3 || a[1] != "level" || a[2] != "1" {
				return bad(off + min(len(a)-1, 2))
			}
			if cl.Bandwidth >= 0 {
				return fail("priority cannot be configured in a class with bandwidth remaining") // wording: emulator's own
			}
			cl.Priority = 1
			return ok()
		case a[0] == "random-detect":
			return wred(cl, a, off)
		}
	case "network-qos":
		switch a[0] {
		case "mtu":
			// mtu N (cisco-roce-enable.cfg:14, 9216); the 1500..9216 range is
			// the emulator's own assumption.
			n, good := num(1, 1500, 9216)
			if !good {
				return bad(off + 1)
			}
			cl.MTU = n
			return ok()
		case "pause":
			// pause pfc-cos N (cisco-roce-enable.cfg:15).
			if len(a) != 3 || a[1] != "pfc-cos" {
				return bad(off + 1)
			}
			n, good := num(2, 0, 7)
			if !good {
				return bad(off + 2)
			}
			cl.PauseCOS[n] = true
			return ok()
		}
	}
	return bad(off)
}

// wred: exactly the documented line (cisco-roce-enable.cfg:42,
// microsoft-azure-local-n9k.cfg:30): random-detect minimum-threshold N
// kbytes maximum-threshold N kbytes drop-probability P weight 0 ecn.
func wred(cl *Class, a []string, off int) (*frame, string, bool) {
	kw := []string{"random-detect", "minimum-threshold", "", "kbytes", "maximum-threshold", "", "kbytes", "drop-probability", "", "weight", "0", "ecn"}
	for i, k := range kw {
		if i >= len(a) || k != "" && a[i] != k {
			return bad(off + i)
		}
	}
	if len(a) != len(kw) {
		return bad(off + len(kw))
	}
	mn, err1 := strconv.Atoi(a[2])
	mx, err2 := strconv.Atoi(a[5])
	p, err3 := strconv.Atoi(a[8])
	switch {
	case err1 != nil || mn < 0:
		return bad(off + 2)
	case err2 != nil || mx < 0:
		return bad(off + 5)
	case err3 != nil || p < 0 || p > 100:
		return bad(off + 8)
	case mx < mn:
		return fail("maximum threshold must be greater than or equal to minimum threshold") // wording: emulator's own
	}
	cl.WRED = strings.Join(a[1:], " ")
	return ok()
}

// applySystemQoS: service-policy type queuing output NAME and
// service-policy type network-qos NAME (cisco-roce-enable.cfg:52-53) and
// their no forms (cisco-roce-enable.cfg:70-71).
func applySystemQoS(c *Config, a []string, no bool, off int) (*frame, string, bool) {
	if a[0] != "service-policy" || len(a) < 4 || a[1] != "type" {
		return bad(off + min(len(a)-1, 1))
	}
	var field *string
	var name string
	switch {
	case a[2] == "queuing" && len(a) == 5 && a[3] == "output":
		field, name = &c.SysQueuingOut, a[4]
	case a[2] == "network-qos" && len(a) == 4:
		field, name = &c.SysNetworkQoS, a[3]
	default:
		return bad(off + 2)
	}
	if no {
		if *field != name {
			return fail("service-policy " + name + " is not attached") // wording: emulator's own
		}
		*field = ""
		return ok()
	}
	if c.Policies[a[2]][name] == nil {
		return fail("policy-map " + name + " does not exist") // wording: emulator's own
	}
	*field = name
	return ok()
}

// jumboMTU is `system jumbomtu`, 9216 by default (Cisco TechNote 118994:
// "By default, the system jumbo MTU is 9216"); `system jumbomtu N` is not
// modelled.
const jumboMTU = 9216

// applyInterface: the interface commands of the corpus.
func applyInterface(c *Config, i *Interface, a []string, no bool, off int) (*frame, string, bool) {
	if i == nil {
		return bad(0)
	}
	switch a[0] {
	case "switchport":
		// switchport / no switchport (cisco.nxos rm_templates/interfaces.py
		// l.154-157; Cisco TechNote 118994: `no switchport` makes a port
		// layer 3). NX-OS resets a port's configuration when its mode
		// changes; not modelled.
		if len(a) != 1 {
			return bad(off + 1)
		}
		i.Mode = "switchport"
		if no {
			i.Mode = "no switchport"
		}
		return ok()
	case "mtu":
		// mtu N (cisco-roce-enable.cfg:57, microsoft-azure-local-n9k.cfg:52);
		// the 576..9216 range is the emulator's own assumption.
		if no || len(a) != 2 {
			return bad(off + 1)
		}
		n, err := strconv.Atoi(a[1])
		if err != nil || n < 576 || n > 9216 {
			return bad(off + 1)
		}
		if c.L2(i) && n != 1500 && n != jumboMTU {
			// Cisco TechNote 118994 "Configure and Verify Maximum
			// Transmission Unit on Nexus Platforms", Per-Port MTU
			// Configuration (Nexus 9000): an L2 port takes only the
			// default or the system jumbo MTU ("mtu 9000" -> "ERROR: MTU
			// can only be default or system jumbo MTU").
			return fail("MTU can only be default or system jumbo MTU")
		}
		i.MTU = n
		if n == 1500 {
			i.MTU = 0
		}
		return ok()
	case "priority-flow-control":
		switch {
		case len(a) == 3 && a[1] == "mode" && (a[2] == "on" || !no && (a[2] == "auto" || a[2] == "off")):
			// priority-flow-control mode {auto|on|off} (cisco-pfc-guide.txt:13);
			// removal: no priority-flow-control mode on (cisco-roce-enable.cfg:64).
			i.PFCMode = a[2]
			if no || a[2] == "auto" {
				i.PFCMode = ""
			}
			return ok()
		case len(a) == 4 && !no && a[1] == "mode" && a[2] == "on" && a[3] == "send-tlv":
			// priority-flow-control mode on send-tlv (microsoft-azure-local-n9k.cfg:51).
			i.PFCMode = "on send-tlv"
			return ok()
		case len(a) == 3 && a[1] == "watch-dog-interval" && a[2] == "on":
			// priority-flow-control watch-dog-interval on (cisco-roce-enable.cfg:56)
			// and no ... on (cisco-roce-enable.cfg:65).
			i.WD = "on"
			if no {
				i.WD = ""
			}
			return ok()
		}
		return bad(off + min(len(a)-1, 2))
	case "service-policy":
		// service-policy type qos input NAME (cisco-roce-enable.cfg:58) and
		// its no form (cisco-roce-enable.cfg:66).
		if len(a) != 5 || a[1] != "type" || a[2] != "qos" || a[3] != "input" {
			return bad(off + min(len(a)-1, 3))
		}
		if no {
			if i.QoSInput != a[4] {
				return fail("service-policy " + a[4] + " is not attached to the interface") // wording: emulator's own
			}
			i.QoSInput = ""
			return ok()
		}
		if c.Policies["qos"][a[4]] == nil {
			return fail("policy-map " + a[4] + " does not exist") // wording: emulator's own
		}
		i.QoSInput = a[4]
		return ok()
	case "description":
		// description TEXT (microsoft-azure-local-n9k.cfg:49).
		if no || len(a) < 2 {
			return bad(off + 1)
		}
		i.Description = strings.Join(a[1:], " ")
		return ok()
	case "shutdown":
		// no shutdown (cisco-roce-enable.cfg:59); `shutdown` itself has no source.
		if !no || len(a) != 1 {
			return bad(off)
		}
		i.Shutdown = false
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

// showVersionJSON prints `show version | json` in the shape of NAPALM's
// capture (napalm-show-version.json), with this switch's chassis and
// host name.
func (s *shell) showVersionJSON() string {
	chassis := s.sw.opts.Chassis
	if chassis == "" {
		chassis = DefaultChassis
	}
	b, _ := json.MarshalIndent(map[string]any{
		"kickstart_ver_str": "7.3(1)D1(1) [build 7.3(1)D1(0.10)]",
		"sys_ver_str":       "7.3(1)D1(1) [build 7.3(1)D1(0.10)]",
		"chassis_id":        chassis,
		"mem_type":          "kB",
		"host_name":         s.sw.running.Hostname,
		"manufacturer":      "Cisco Systems, Inc.",
	}, "", "    ")
	return string(b) + "\n"
}
