// Package eosemu is a stateful Arista EOS CLI emulator over real SSH,
// written from Arista's documentation (EOS User Manual: "Configuration
// Sessions", "Quality of Service" — qos map dscp, qos profile,
// tx-queue, random-detect ecn, priority-flow-control and its watchdog;
// "Ethernet Ports" — mtu, flowcontrol) and the configuration Arista's
// AVD (eos_cli_config_gen) renders, not from fabctl's renderer.
//
// Modes and prompts, as on EOS:
//
//	leaf>                                      exec (enable → privileged)
//	leaf#                                      privileged exec
//	leaf(config)#                              configure terminal (edits running-config)
//	leaf(config-s-NAME)#                       configure session NAME
//	leaf(config-s-NAME-if-Et1)#                interface Ethernet1
//	leaf(config-s-NAME-qos-profile-ROCE)#      qos profile ROCE
//	leaf(config-s-NAME-qos-profile-ROCE-txq-3)#  tx-queue 3 inside it
//
// A command that is not valid in a sub-mode is tried in the parent modes
// (EOS's implicit exit); `exit` leaves one mode, `end` returns to
// privileged exec (a session stays pending). Sessions: `configure session
// NAME` copies the running-config into the session; `show session-config
// diffs`, `commit`, `commit timer HH:MM:SS` (the running-config reverts
// when the timer expires unless `configure session NAME commit` confirms
// it), `abort`, and from privileged exec `configure session NAME
// commit|abort`, `no configure session NAME`, `show configuration
// sessions`. Invalid input prints "% Invalid input detected at '^'
// marker." under a caret; missing arguments "% Incomplete command".
//
// Faults (reject a command, drop the connection before/after it, hang)
// and per-command latency come from testbed/sshemu.
package eosemu

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	gossh "golang.org/x/crypto/ssh"

	"github.com/fabctl/fabctl/testbed/sshemu"
)

// Options configure an emulated switch.
type Options struct {
	Hostname string // default "leaf"
	User     string // default "admin"
	Password string
	Ports    int // Ethernet1..N (default 8)
	// CommitLatency delays commit commands (the benchmark uses 200 ms).
	CommitLatency time.Duration
	// ShowLatency delays every show command: a real switch takes
	// 0.3-1 s to answer show running-config (benchmarks state it).
	ShowLatency time.Duration
	// EnablePassword, when set, is asked for by `enable` (EOS `enable
	// secret`), without echo.
	EnablePassword string
	// AuthorizedKeys log in as User without a password (key or agent).
	AuthorizedKeys []gossh.PublicKey
	Addr           string // default 127.0.0.1:0
}

// Switch is one emulated EOS switch.
type Switch struct {
	*sshemu.Server
	opts Options

	mu       sync.Mutex
	running  *Config
	sessions map[string]*Config
	// A commit timer in progress: the session it belongs to, the
	// configuration it reverts to, and the timer.
	timerSession string
	timerPrior   *Config
	timer        *time.Timer
	commits      int
	reverts      int
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
	sw := &Switch{opts: opts, running: NewConfig(opts.Hostname, opts.Ports), sessions: map[string]*Config{}}
	srv, err := sshemu.Start(sshemu.Config{
		Addr:           opts.Addr,
		Users:          map[string]string{opts.User: opts.Password},
		AuthorizedKeys: opts.AuthorizedKeys,
		Banner:         "Last login: Sat Nov 21 20:00:00 2026 from 10.0.0.1\n",
		NewShell: func(string) sshemu.Shell {
			return &shell{sw: sw}
		},
		CommandLatency: func(line string) time.Duration {
			f := strings.Fields(line)
			if len(f) > 0 && f[0] == "commit" || len(f) == 3 && f[0] == "configure" && f[2] == "commit" {
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

// Close stops the server and any commit timer.
func (sw *Switch) Close() error {
	sw.mu.Lock()
	if sw.timer != nil {
		sw.timer.Stop()
	}
	sw.mu.Unlock()
	return sw.Server.Close()
}

// RunningConfig is `show running-config` as bytes.
func (sw *Switch) RunningConfig() []byte {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return []byte(sw.running.Render())
}

// Edit changes the running configuration by hand (drift in tests).
func (sw *Switch) Edit(fn func(c *Config)) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	fn(sw.running)
}

// Sessions lists the pending configuration sessions.
func (sw *Switch) Sessions() []string {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	var out []string
	for n := range sw.sessions {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Commits and Reverts count commits and commit-timer reverts.
func (sw *Switch) Commits() int {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.commits
}

// Reverts counts commit timers that expired and restored the prior config.
func (sw *Switch) Reverts() int {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.reverts
}

// frame is one configuration (sub-)mode.
type frame struct {
	kind string // config, if, qos-profile, txq
	name string // interface or profile name
	q    int    // tx-queue
}

type shell struct {
	sw      *Switch
	enabled bool
	askPW   bool   // `enable` asked for the enable password
	config  bool   // in a configuration mode
	session string // "" for configure terminal
	stack   []frame
}

func (s *shell) Prompt() string {
	h := s.sw.opts.Hostname
	if s.askPW {
		return "Password: "
	}
	if !s.config {
		if s.enabled {
			return h + "#"
		}
		return h + ">"
	}
	m := "config"
	if s.session != "" {
		m += "-s-" + s.session
	}
	for _, f := range s.stack[1:] {
		switch f.kind {
		case "if":
			m += "-if-" + shortIf(f.name)
		case "qos-profile":
			m += "-qos-profile-" + f.name
		case "txq":
			m += "-txq-" + strconv.Itoa(f.q)
		}
	}
	return h + "(" + m + ")#"
}

// shortIf abbreviates interface names in prompts: Ethernet1/1 → Et1/1.
func shortIf(n string) string {
	if strings.HasPrefix(n, "Ethernet") {
		return "Et" + n[len("Ethernet"):]
	}
	return n
}

func (s *shell) invalid(line string, tok int) string {
	col := 0
	f := strings.Fields(line)
	if tok > 0 && tok < len(f) {
		// column of token tok in the line as typed
		rest := line
		for i := 0; i < tok; i++ {
			rest = strings.TrimLeft(rest, " \t")
			rest = rest[len(f[i]):]
		}
		col = len(line) - len(strings.TrimLeft(rest, " \t"))
	} else {
		col = len(line) - len(strings.TrimLeft(line, " \t"))
	}
	return strings.Repeat(" ", len(s.Prompt())+col) + "^\n% Invalid input detected at '^' marker.\n"
}

const incomplete = "% Incomplete command\n"

// Handle runs one line.
// Echo is off while the enable password is typed.
func (s *shell) Echo() bool { return !s.askPW }

func (s *shell) Handle(line string) (string, bool) {
	if s.askPW {
		s.askPW = false
		if line != s.sw.opts.EnablePassword {
			return "% Access denied\n", false
		}
		s.enabled = true
		return "", false
	}
	toks := strings.Fields(line)
	if len(toks) == 0 || strings.HasPrefix(toks[0], "!") {
		return "", false
	}
	s.sw.mu.Lock()
	defer s.sw.mu.Unlock()
	if toks[0] == "show" {
		return s.show(line, toks), false
	}
	if !s.config {
		return s.exec(line, toks)
	}
	return s.configLine(line, toks), false
}

func (s *shell) show(line string, toks []string) string {
	arg := strings.Join(toks[1:], " ")
	switch {
	case !s.enabled && arg != "version":
		return s.invalid(line, 1)
	case arg == "running-config" || arg == "running-config all":
		return s.sw.running.Render()
	case arg == "version":
		return "Arista cEOSLab\nHardware version:\nSerial number:\nSystem MAC address:  001c.7300.0001\n\nSoftware image version: 4.32.2F-38195967.4322F (engineering build)\nArchitecture: x86_64\n"
	case arg == "session-config diffs" || arg == "session-config diff":
		if s.session == "" {
			return "% Not in a configuration session\n"
		}
		sc := s.sw.sessions[s.session]
		d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(s.sw.running.Render()), B: difflib.SplitLines(sc.Render()),
			FromFile: "system:/running-config", ToFile: "session:/" + s.session + "-session-config", Context: 3})
		return d
	case arg == "configuration sessions":
		var b strings.Builder
		b.WriteString("Maximum number of completed sessions: 1\nMaximum number of pending sessions: 5\n\n   Name          State         User    Terminal\n   ------------- ------------- ------- --------\n")
		names := make([]string, 0, len(s.sw.sessions))
		for n := range s.sw.sessions {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			st := "pending"
			if n == s.session {
				st = "pending *"
			}
			b.WriteString(fmt.Sprintf("   %-13s %-13s\n", n, st))
		}
		if s.sw.timerSession != "" {
			b.WriteString(fmt.Sprintf("   %-13s %-13s\n", s.sw.timerSession, "pendingCommitTimer"))
		}
		return b.String()
	}
	return s.invalid(line, 1)
}

func (s *shell) exec(line string, toks []string) (string, bool) {
	switch toks[0] {
	case "exit", "logout", "quit":
		return "", true
	case "enable":
		if s.sw.opts.EnablePassword != "" && !s.enabled {
			s.askPW = true
			return "", false
		}
		s.enabled = true
		return "", false
	case "disable":
		s.enabled = false
		return "", false
	case "terminal":
		if len(toks) == 3 && (toks[1] == "width" || toks[1] == "length") {
			if _, err := strconv.Atoi(toks[2]); err == nil {
				return "", false
			}
		}
		return s.invalid(line, 1), false
	}
	if !s.enabled {
		return s.invalid(line, 0), false
	}
	switch {
	case line == "configure" || strings.Join(toks, " ") == "configure terminal":
		s.config, s.session, s.stack = true, "", []frame{{kind: "config"}}
		return "", false
	case len(toks) >= 3 && toks[0] == "configure" && toks[1] == "session":
		name := toks[2]
		if len(toks) == 4 {
			switch toks[3] {
			case "commit":
				return s.confirm(name), false
			case "abort":
				if _, ok := s.sw.sessions[name]; !ok {
					return "% Session " + name + " does not exist\n", false
				}
				delete(s.sw.sessions, name)
				return "", false
			}
			return s.invalid(line, 3), false
		}
		if len(toks) != 3 {
			return s.invalid(line, 3), false
		}
		if name == s.sw.timerSession {
			return "% Session " + name + " is pending commit timer; confirm it with 'configure session " + name + " commit'\n", false
		}
		if _, ok := s.sw.sessions[name]; !ok {
			s.sw.sessions[name] = s.sw.running.Clone()
		}
		s.config, s.session, s.stack = true, name, []frame{{kind: "config"}}
		return "", false
	case len(toks) == 4 && toks[0] == "no" && toks[1] == "configure" && toks[2] == "session":
		delete(s.sw.sessions, toks[3])
		return "", false
	}
	return s.invalid(line, 0), false
}

// confirm makes a commit-timer commit permanent.
func (s *shell) confirm(name string) string {
	if s.sw.timerSession != name {
		if _, ok := s.sw.sessions[name]; ok {
			return s.commitSession(name, 0)
		}
		return "% Session " + name + " does not exist\n"
	}
	s.sw.timer.Stop()
	s.sw.timer, s.sw.timerPrior, s.sw.timerSession = nil, nil, ""
	return ""
}

// commitSession replaces the running-config with the session's, with
// an optional auto-revert timer.
func (s *shell) commitSession(name string, timer time.Duration) string {
	sc, ok := s.sw.sessions[name]
	if !ok {
		return "% Session " + name + " does not exist\n"
	}
	if timer > 0 && s.sw.timerSession != "" {
		return "% Cannot commit: session " + s.sw.timerSession + " is pending commit timer\n"
	}
	prior := s.sw.running
	s.sw.running = sc.Clone()
	s.sw.commits++
	delete(s.sw.sessions, name)
	if timer > 0 {
		sw := s.sw
		sw.timerSession, sw.timerPrior = name, prior
		var t *time.Timer
		t = time.AfterFunc(timer, func() {
			sw.mu.Lock()
			defer sw.mu.Unlock()
			if sw.timer != t {
				return // confirmed or replaced meanwhile
			}
			sw.running = sw.timerPrior
			sw.reverts++
			sw.timer, sw.timerPrior, sw.timerSession = nil, nil, ""
		})
		sw.timer = t
	}
	return ""
}

// configLine runs one line in a configuration mode.
func (s *shell) configLine(line string, toks []string) string {
	switch toks[0] {
	case "exit":
		if len(s.stack) > 1 {
			s.stack = s.stack[:len(s.stack)-1]
		} else {
			s.config, s.session, s.stack = false, "", nil
		}
		return ""
	case "end":
		s.config, s.session, s.stack = false, "", nil
		return ""
	case "abort":
		if s.session == "" {
			return s.invalid(line, 0)
		}
		delete(s.sw.sessions, s.session)
		s.config, s.session, s.stack = false, "", nil
		return ""
	case "commit":
		if s.session == "" {
			return s.invalid(line, 0)
		}
		var d time.Duration
		if len(toks) == 2 && toks[1] == "timer" {
			return incomplete
		}
		if len(toks) == 3 && toks[1] == "timer" {
			var h, m, sec int
			if n, err := fmt.Sscanf(toks[2], "%d:%d:%d", &h, &m, &sec); err != nil || n != 3 || m > 59 || sec > 59 || h > 23 || h*3600+m*60+sec == 0 {
				return s.invalid(line, 2)
			}
			d = time.Duration(h*3600+m*60+sec) * time.Second
		} else if len(toks) != 1 {
			return s.invalid(line, 1)
		}
		out := s.commitSession(s.session, d)
		if out == "" {
			s.config, s.session, s.stack = false, "", nil
		}
		return out
	}
	cfg := s.sw.running
	if s.session != "" {
		cfg = s.sw.sessions[s.session]
		if cfg == nil { // aborted from another connection
			s.config, s.session, s.stack = false, "", nil
			return "% Session does not exist\n"
		}
	}
	// Try the current mode, then its parents (EOS's implicit exit).
	firstErr := ""
	for lvl := len(s.stack) - 1; lvl >= 0; lvl-- {
		enter, out, ok := apply(cfg, s.stack[lvl], toks)
		if !ok {
			if firstErr == "" {
				firstErr = out
			}
			continue
		}
		s.stack = s.stack[:lvl+1]
		if enter != nil {
			s.stack = append(s.stack, *enter)
		}
		return out
	}
	if firstErr == incomplete {
		return incomplete
	}
	bad := 0
	if n, err := strconv.Atoi(strings.TrimPrefix(firstErr, "tok:")); err == nil {
		bad = n
	}
	return s.invalid(line, bad)
}

// errTok reports invalid input at token i.
func errTok(i int) (*frame, string, bool) { return nil, "tok:" + strconv.Itoa(i), false }

// apply runs one configuration command in a mode. It returns the mode
// the command enters (nil: none), its output, and false when the command
// is not valid in this mode (out then says where: "tok:N" or
// incomplete).
func apply(c *Config, m frame, t []string) (*frame, string, bool) {
	no := t[0] == "no" || t[0] == "default"
	a := t
	off := 0
	if no {
		a, off = t[1:], 1
		if len(a) == 0 {
			return nil, incomplete, false
		}
	}
	switch m.kind {
	case "config":
		return applyGlobal(c, a, no, off)
	case "if":
		return applyInterface(c.Interfaces[m.name], a, no, off)
	case "qos-profile":
		p := c.Profiles[m.name]
		if p == nil { // removed meanwhile by `no qos profile`
			return errTok(0)
		}
		return applyProfile(p, m.name, a, no, off)
	case "txq":
		p := c.Profiles[m.name]
		if p == nil {
			return errTok(0)
		}
		q := p.TxQueues[m.q]
		if q == nil {
			q = &TxQueue{}
			p.TxQueues[m.q] = q
		}
		return applyTxQueue(q, a, no, off)
	}
	return errTok(0)
}

func applyGlobal(c *Config, a []string, no bool, off int) (*frame, string, bool) {
	switch a[0] {
	case "hostname":
		if no {
			c.Hostname = "localhost"
			return nil, "", true
		}
		if len(a) != 2 {
			return nil, incomplete, false
		}
		c.Hostname = a[1]
		return nil, "", true
	case "interface":
		if len(a) < 2 {
			return nil, incomplete, false
		}
		name := canonIf(a[1])
		i, ok := c.Interfaces[name]
		if !ok || len(a) > 2 {
			return errTok(off + 1)
		}
		if no {
			*i = Interface{}
			return nil, "", true
		}
		return &frame{kind: "if", name: name}, "", true
	case "qos":
		if len(a) < 2 {
			return nil, incomplete, false
		}
		switch a[1] {
		case "map":
			return qosMap(c, a, no, off)
		case "profile":
			if len(a) < 3 {
				return nil, incomplete, false
			}
			if len(a) > 3 || !validName(a[2]) {
				return errTok(off + 2)
			}
			if no {
				delete(c.Profiles, a[2])
				return nil, "", true
			}
			if c.Profiles[a[2]] == nil {
				c.Profiles[a[2]] = &Profile{TxQueues: map[int]*TxQueue{}, NoDrop: map[int]bool{}}
			}
			return &frame{kind: "qos-profile", name: a[2]}, "", true
		}
		return errTok(off + 1)
	case "priority-flow-control":
		// priority-flow-control pause watchdog default timeout T recovery-time R polling-interval P
		// priority-flow-control pause watchdog override action drop
		if len(a) < 3 || a[1] != "pause" || a[2] != "watchdog" {
			return errTok(off + 1)
		}
		if len(a) < 4 {
			return nil, incomplete, false
		}
		switch a[3] {
		case "default":
			if no {
				c.WDTimeout, c.WDRecovery, c.WDPolling = "", "", ""
				return nil, "", true
			}
			if len(a) != 10 {
				if len(a) < 10 {
					return nil, incomplete, false
				}
				return errTok(off + 10)
			}
			kw := []string{"timeout", "recovery-time", "polling-interval"}
			var v [3]float64
			for i := range kw {
				if a[4+2*i] != kw[i] {
					return errTok(off + 4 + 2*i)
				}
				x, err := strconv.ParseFloat(a[5+2*i], 64)
				if err != nil || x < 0.005 || x > 60 {
					return errTok(off + 5 + 2*i)
				}
				v[i] = x
			}
			if v[0] < 0.01 || v[1] < 0.01 || v[2] > v[0]/2 {
				return nil, "% Polling interval must be at most half of the timeout\n", false
			}
			c.WDTimeout, c.WDRecovery, c.WDPolling = a[5], a[7], a[9]
			return nil, "", true
		case "override":
			if len(a) != 6 || a[4] != "action" || a[5] != "drop" {
				return errTok(off + 4)
			}
			c.WDOverrideDrop = !no
			return nil, "", true
		}
		return errTok(off + 3)
	}
	return errTok(off)
}

// qosMap: qos map dscp D [D...] to traffic-class T.
func qosMap(c *Config, a []string, no bool, off int) (*frame, string, bool) {
	if len(a) < 3 || a[2] != "dscp" {
		if len(a) < 3 {
			return nil, incomplete, false
		}
		return errTok(off + 2)
	}
	var ds []int
	i := 3
	for ; i < len(a) && a[i] != "to"; i++ {
		d, err := strconv.Atoi(a[i])
		if err != nil || d < 0 || d > 63 {
			return errTok(off + i)
		}
		ds = append(ds, d)
	}
	if len(ds) == 0 {
		return nil, incomplete, false
	}
	if i == len(a) {
		if no { // no qos map dscp D...: back to the default
			for _, d := range ds {
				delete(c.DSCP, d)
			}
			return nil, "", true
		}
		return nil, incomplete, false
	}
	if i+1 >= len(a) || a[i+1] != "traffic-class" {
		if i+1 >= len(a) {
			return nil, incomplete, false
		}
		return errTok(off + i + 1)
	}
	if i+2 >= len(a) {
		return nil, incomplete, false
	}
	tc, err := strconv.Atoi(a[i+2])
	if err != nil || tc < 0 || tc > 7 || len(a) > i+3 {
		return errTok(off + i + 2)
	}
	for _, d := range ds {
		if no || tc == d/8 { // `no`, or the default mapping: not stored
			delete(c.DSCP, d)
		} else {
			c.DSCP[d] = tc
		}
	}
	return nil, "", true
}

func applyInterface(i *Interface, a []string, no bool, off int) (*frame, string, bool) {
	switch a[0] {
	case "mtu":
		if no {
			i.MTU = 0
			return nil, "", true
		}
		if len(a) != 2 {
			return nil, incomplete, false
		}
		n, err := strconv.Atoi(a[1])
		if err != nil || n < 68 || n > 9214 {
			return errTok(off + 1)
		}
		i.MTU = n
		if n == 1500 {
			i.MTU = 0
		}
		return nil, "", true
	case "service-profile":
		if no {
			i.ServiceProfile = ""
			return nil, "", true
		}
		if len(a) != 2 || !validName(a[1]) {
			return nil, incomplete, false
		}
		i.ServiceProfile = a[1]
		return nil, "", true
	case "flowcontrol":
		if len(a) < 2 {
			return nil, incomplete, false
		}
		var p *bool
		switch a[1] {
		case "send":
			p = &i.FlowSend
		case "receive":
			p = &i.FlowReceive
		default:
			return errTok(off + 1)
		}
		if no {
			*p = false
			return nil, "", true
		}
		if len(a) != 3 || (a[2] != "on" && a[2] != "off") {
			return errTok(off + 2)
		}
		*p = a[2] == "on"
		return nil, "", true
	case "description":
		if no {
			i.Description = ""
			return nil, "", true
		}
		i.Description = strings.Join(a[1:], " ")
		return nil, "", true
	}
	return errTok(off)
}

func applyProfile(p *Profile, name string, a []string, no bool, off int) (*frame, string, bool) {
	switch a[0] {
	case "qos":
		if len(a) < 2 || a[1] != "trust" {
			return errTok(off + 1)
		}
		if no {
			p.Trust = ""
			return nil, "", true
		}
		if len(a) != 3 || (a[2] != "dscp" && a[2] != "cos") {
			return errTok(off + 2)
		}
		p.Trust = a[2]
		return nil, "", true
	case "tx-queue":
		if len(a) < 2 {
			return nil, incomplete, false
		}
		q, err := strconv.Atoi(a[1])
		if err != nil || q < 0 || q > 7 || len(a) > 2 {
			return errTok(off + 1)
		}
		if no {
			delete(p.TxQueues, q)
			return nil, "", true
		}
		if p.TxQueues[q] == nil {
			p.TxQueues[q] = &TxQueue{}
		}
		return &frame{kind: "txq", name: name, q: q}, "", true
	case "priority-flow-control":
		if len(a) < 2 {
			return nil, incomplete, false
		}
		switch {
		case a[1] == "on" && len(a) == 2:
			p.PFCOn = !no
		case a[1] == "priority":
			if len(a) < 3 {
				return nil, incomplete, false
			}
			q, err := strconv.Atoi(a[2])
			if err != nil || q < 0 || q > 7 {
				return errTok(off + 2)
			}
			if len(a) != 4 || a[3] != "no-drop" {
				if len(a) == 3 {
					return nil, incomplete, false
				}
				return errTok(off + 3)
			}
			if no {
				delete(p.NoDrop, q)
			} else {
				p.NoDrop[q] = true
			}
		case a[1] == "pause" && len(a) >= 3 && a[2] == "watchdog":
			switch {
			case len(a) == 3:
				p.Watchdog = !no
				if no {
					p.WDPortDrop = false
				}
			case len(a) == 6 && a[3] == "port" && a[4] == "action" && a[5] == "drop":
				p.WDPortDrop = !no
			default:
				return errTok(off + 3)
			}
		default:
			return errTok(off + 1)
		}
		return nil, "", true
	}
	return errTok(off)
}

// ecnUnits are the threshold units EOS accepts for random-detect ecn.
var ecnUnits = map[string]bool{"bytes": true, "kbytes": true, "mbytes": true, "segments": true, "milliseconds": true}

func applyTxQueue(q *TxQueue, a []string, no bool, off int) (*frame, string, bool) {
	switch a[0] {
	case "bandwidth":
		if len(a) < 2 || a[1] != "percent" {
			if len(a) < 2 {
				return nil, incomplete, false
			}
			return errTok(off + 1)
		}
		if no {
			q.Bandwidth = 0
			return nil, "", true
		}
		if len(a) != 3 {
			return nil, incomplete, false
		}
		n, err := strconv.Atoi(a[2])
		if err != nil || n < 1 || n > 100 {
			return errTok(off + 2)
		}
		q.Bandwidth = n
		return nil, "", true
	case "priority":
		if no {
			if len(a) != 1 {
				return errTok(off + 1)
			}
			q.RoundRobin = true
			return nil, "", true
		}
		if len(a) != 2 || a[1] != "strict" {
			return errTok(off + 1)
		}
		q.RoundRobin = false
		return nil, "", true
	case "random-detect":
		if len(a) < 2 || a[1] != "ecn" {
			return errTok(off + 1)
		}
		if no {
			q.ECN = ""
			return nil, "", true
		}
		// random-detect ecn minimum-threshold N U maximum-threshold N U [max-mark-probability P] [weight W]
		if len(a) < 8 {
			return nil, incomplete, false
		}
		if a[2] != "minimum-threshold" {
			return errTok(off + 2)
		}
		mn, err := strconv.Atoi(a[3])
		if err != nil || mn < 1 {
			return errTok(off + 3)
		}
		if !ecnUnits[a[4]] {
			return errTok(off + 4)
		}
		if a[5] != "maximum-threshold" {
			return errTok(off + 5)
		}
		mx, err := strconv.Atoi(a[6])
		if err != nil || mx < 1 {
			return errTok(off + 6)
		}
		if a[7] != a[4] {
			return errTok(off + 7) // both thresholds take the same unit
		}
		if mx < mn {
			return nil, "% Maximum threshold must be greater than or equal to minimum threshold\n", false
		}
		i := 8
		for i < len(a) {
			if i+1 >= len(a) {
				return nil, incomplete, false
			}
			n, err := strconv.Atoi(a[i+1])
			switch {
			case a[i] == "max-mark-probability" && err == nil && n >= 1 && n <= 100:
			case a[i] == "weight" && err == nil && n >= 0 && n <= 15:
			default:
				return errTok(off + i)
			}
			i += 2
		}
		q.ECN = strings.Join(a[2:], " ")
		return nil, "", true
	}
	return errTok(off)
}

func validName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// canonIf expands EOS's accepted abbreviations: et1, Eth1/1 → Ethernet1/1.
func canonIf(n string) string {
	l := strings.ToLower(n)
	for _, p := range []string{"ethernet", "eth", "et"} {
		if strings.HasPrefix(l, p) && len(l) > len(p) && l[len(p)] >= '0' && l[len(p)] <= '9' {
			return "Ethernet" + n[len(p):]
		}
	}
	return n
}
