// Package eosemu is a stateful Arista EOS CLI emulator over real SSH. It
// accepts exactly the command forms the vendor corpus in
// testdata/vendor/eos/ documents (Arista's AVD generator output and
// schema, Arista's pyeapi client and its real `show running-config all`
// fixture, NAPALM's EOS driver and real vEOS output) and refuses every
// other line with EOS's "% Invalid input detected at '^' marker." under a
// caret (scrapligo's arista_eos failed-when-contains list names it). Each
// accepted form carries a comment naming its corpus file; shapes.txt
// indexes them.
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
// (EOS's implicit exit: NAPALM sends session lines without exits,
// napalm-config-session.txt:11); `exit` leaves one mode, `end` returns to
// privileged exec with the session still pending. Sessions: `configure
// session NAME` copies the running-config into the session; `show
// session-config diffs`, `commit`, `abort` inside it; from privileged exec
// `configure session NAME commit`, `configure session NAME commit timer
// HH:MM:SS` (the running-config reverts when the timer expires unless
// `configure session NAME commit` confirms it) and `configure session NAME
// abort` (which also reverts a commit-timer commit, as NAPALM's rollback
// uses it).
//
// The switch keeps a startup configuration: `copy running-config
// startup-config` and `write memory` (save.txt) copy running to startup,
// `show startup-config` prints it, Reload makes running what startup holds
// and drops sessions and commit timers, FailSave makes the save print an
// error and save nothing.
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

	"github.com/fabctl/fabctl/testbed/portlink"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

// Options configure an emulated switch.
type Options struct {
	Hostname string // default "leaf"
	User     string // default "admin"
	Password string
	Ports    int // Ethernet1..N (default 8)
	// ExtraPorts are more interfaces the switch has, named as EOS names
	// them (a split port's lanes Ethernet1/1, a linecard's Ethernet3/1/1).
	ExtraPorts []string
	// Model is the model `show version` names and decides the chip
	// family (family.go): "" is DefaultModel, a Sand switch.
	Model string
	// DSCPDefault is the platform's built-in DSCP -> traffic-class map
	// (code point -> class), which `show running-config` does not print
	// and `show running-config all` does. nil: vEOS's map for a vEOS
	// switch (every code point to traffic-class 9, the only built-in map
	// a source prints: pyeapi-running-config-all.txt:48), none modelled
	// otherwise (no source gives a hardware platform's).
	DSCPDefault map[int]int
	// CoSDefault is the same for the CoS -> traffic-class map: nil is
	// vEOS's for a vEOS switch (every CoS to traffic-class 8,
	// pyeapi-running-config-all.txt:49), none modelled otherwise.
	CoSDefault map[int]int
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
	// Links is the switch's cabling: `show interfaces | json` and `show
	// lldp neighbors detail | json` answer from it (links.go). nil: every
	// port down, no neighbours.
	Links portlink.Source
}

// Switch is one emulated EOS switch.
type Switch struct {
	*sshemu.Server
	opts Options

	mu       sync.Mutex
	running  *Config
	startup  *Config
	saved    time.Time // when startup was last written
	failSave string    // FailSave's output ("" saves)
	sessions map[string]*Config
	// A commit timer in progress: the session it belongs to, the
	// configuration it reverts to, and the timer.
	timerSession string
	timerPrior   *Config
	timer        *time.Timer
	commits      int
	reverts      int
	saves        int
}

// Start starts an emulated switch with a factory-default configuration,
// saved (startup holds what runs).
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
	if opts.Model == "" {
		opts.Model = DefaultModel
	}
	fam, ok := familyOf(opts.Model)
	if !ok {
		return nil, fmt.Errorf("eosemu: model %q: no source says which transmit-queue keyword it takes (family.go)", opts.Model)
	}
	run := NewConfig(opts.Hostname, opts.Ports)
	run.Model, run.Queue = opts.Model, fam
	run.DSCPDefault, run.CoSDefault = opts.DSCPDefault, opts.CoSDefault
	if run.DSCPDefault == nil && opts.Model == "vEOS" {
		run.DSCPDefault = map[int]int{}
		for d := 0; d < 64; d++ {
			run.DSCPDefault[d] = 9
		}
	}
	if run.CoSDefault == nil && opts.Model == "vEOS" {
		run.CoSDefault = map[int]int{} // pyeapi-running-config-all.txt:49
		for c := 0; c < 8; c++ {
			run.CoSDefault[c] = 8
		}
	}
	for _, n := range opts.ExtraPorts {
		run.Interfaces[n] = NewInterface()
	}
	sw := &Switch{opts: opts, running: run, startup: run.Clone(), saved: time.Date(2026, 11, 21, 19, 0, 0, 0, time.UTC),
		sessions: map[string]*Config{}}
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
			if len(f) > 0 && f[0] == "commit" || len(f) >= 4 && f[0] == "configure" && f[3] == "commit" {
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

// queue is the transmit-queue keyword of the switch's model.
func (sw *Switch) queue() string {
	if q, ok := familyOf(sw.opts.Model); ok {
		return q
	}
	q, _ := familyOf(DefaultModel)
	return q
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

// StartupConfig is `show startup-config` as bytes.
func (sw *Switch) StartupConfig() []byte {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return []byte(sw.startup.RenderStartup(sw.saved))
}

// Reload reboots the switch: running becomes what startup holds; pending
// sessions and a commit timer in progress are dropped.
func (sw *Switch) Reload() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.timer != nil {
		sw.timer.Stop()
	}
	sw.timer, sw.timerPrior, sw.timerSession = nil, nil, ""
	sw.sessions = map[string]*Config{}
	sw.running = sw.startup.Clone()
}

// FailSave makes the save commands print output and save nothing while
// output is not empty; "" clears it.
func (sw *Switch) FailSave(output string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.failSave = output
}

// Saves counts successful saves.
func (sw *Switch) Saves() int {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.saves
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
			// PLAUSIBLE for uc-tx-queue (no prompt of that mode is in the corpus)
			m += "-" + strings.TrimSuffix(s.sw.queue(), "-queue") + "q-" + strconv.Itoa(f.q)
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

// invalid is EOS's refusal: a caret under the offending token and
// "% Invalid input detected at '^' marker." (the text scrapligo's
// arista_eos platform, assets/platforms/arista_eos.yaml, fails on).
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

// incomplete is EOS's answer to a command missing its arguments (listed in
// scrapligo's arista_eos failed-when-contains).
const incomplete = "% Incomplete command\n"

// Echo is off while the enable password is typed.
func (s *shell) Echo() bool { return !s.askPW }

// Handle runs one line.
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
	// "!" lines are comments (NAPALM skips them: napalm-config-session.txt:11).
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

// sessionDiffs is `show session-config diffs`: a unified diff of the
// running-config against the session whose first two lines are the
// `--- system:/running-config` / `+++ session:/<S>-session-config` header
// (pyeapi-session-config-diffs.txt:11-12). The corpus does not show the
// output for a session without changes; the emulator prints the header
// alone, the case NAPALM's header stripping (napalm-config-session.txt:12)
// is written for.
func (s *shell) sessionDiffs(name string) string {
	sc := s.sw.sessions[name]
	if sc == nil {
		return "% Session " + name + " does not exist\n" // PLAUSIBLE: not in the corpus
	}
	from, to := "system:/running-config", "session:/"+name+"-session-config"
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(s.sw.running.Render()), B: difflib.SplitLines(sc.Render()),
		FromFile: from, ToFile: to, Context: 3})
	if d == "" {
		return "--- " + from + "\n+++ " + to + "\n"
	}
	return d
}

func (s *shell) show(line string, toks []string) string {
	arg := strings.Join(toks[1:], " ")
	switch {
	case !s.enabled:
		return s.invalid(line, 1)
	case arg == "running-config":
		// napalm-show-running-config.txt; pyeapi-commands.txt:25
		return s.sw.running.Render()
	case arg == "running-config all":
		// pyeapi-running-config-all.txt (what pyeapi reads by default,
		// pyeapi-commands.txt:26)
		return s.sw.running.RenderAll()
	case arg == "startup-config":
		// napalm-show-startup-config.txt; pyeapi-commands.txt:24
		return s.sw.startup.RenderStartup(s.sw.saved)
	case arg == "version":
		// goeapi-show-version.txt: "Arista <model>" first, then the
		// hardware and software lines
		return showVersion(s.sw.opts.Model)
	case arg == "interfaces | json":
		// napalm-show-interfaces.json (links.go)
		return s.showInterfacesJSON()
	case arg == "lldp neighbors detail | json":
		// napalm-show-lldp-neighbors-detail.json (links.go)
		return s.showLLDPJSON()
	case arg == "session-config diffs":
		// pyeapi-session-config-diffs.txt:11 (inside the session)
		if s.session == "" {
			return s.invalid(line, 1)
		}
		return s.sessionDiffs(s.session)
	case len(toks) == 5 && toks[1] == "session-config" && toks[2] == "named" && toks[4] == "diffs":
		// napalm-config-session.txt:12
		return s.sessionDiffs(toks[3])
	}
	return s.invalid(line, 1)
}

// save copies running to startup (`copy running-config startup-config`,
// `write memory`: save.txt:11-12). The corpus shows no output of a
// successful save; the emulator prints none. With FailSave set it prints
// that output and saves nothing.
func (s *shell) save() string {
	if s.sw.failSave != "" {
		out := s.sw.failSave
		if !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		return out
	}
	s.sw.startup = s.sw.running.Clone()
	s.sw.saved = s.sw.saved.Add(time.Minute)
	s.sw.saves++
	return ""
}

func (s *shell) exec(line string, toks []string) (string, bool) {
	switch toks[0] {
	case "exit":
		// the session end scrapligo's arista_eos sends on close (arista_eos.yaml network-on-close)
		return "", true
	case "enable":
		// arista_eos.yaml privilege-exec escalate
		if s.sw.opts.EnablePassword != "" && !s.enabled {
			s.askPW = true
			return "", false
		}
		s.enabled = true
		return "", false
	case "disable":
		// arista_eos.yaml privilege-exec deescalate
		s.enabled = false
		return "", false
	case "terminal":
		// arista_eos.yaml network-on-open: terminal width 32767, terminal length 0
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
	t := strings.Join(toks, " ")
	switch {
	case t == "configure terminal":
		// arista_eos.yaml configuration escalate
		s.config, s.session, s.stack = true, "", []frame{{kind: "config"}}
		return "", false
	case t == "copy running-config startup-config" || t == "write memory":
		// save.txt:11-12
		return s.save(), false
	case len(toks) >= 3 && toks[0] == "configure" && toks[1] == "session":
		name := toks[2]
		switch {
		case len(toks) == 3:
			// configure session <S>: napalm-config-session.txt:9
		case len(toks) == 4 && toks[3] == "commit":
			// configure session <S> commit: napalm-config-session.txt:16, 20
			return s.confirm(name), false
		case len(toks) == 5 && toks[3] == "commit" && toks[4] == "timer":
			return incomplete, false
		case len(toks) == 6 && toks[3] == "commit" && toks[4] == "timer":
			// configure session <S> commit timer <HH:MM:SS>: napalm-config-session.txt:19
			d, ok := hms(toks[5])
			if !ok {
				return s.invalid(line, 5), false
			}
			return s.commitSession(name, d), false
		case len(toks) == 4 && toks[3] == "abort":
			// configure session <S> abort: napalm-config-session.txt:22, 24 (also
			// NAPALM's rollback of a pending commit-timer session)
			return s.abort(name), false
		default:
			return s.invalid(line, 3), false
		}
		if name == s.sw.timerSession {
			// PLAUSIBLE: the corpus does not show this refusal's text
			return "% Cannot commit: session " + name + " is pending commit timer\n", false
		}
		if _, ok := s.sw.sessions[name]; !ok {
			s.sw.sessions[name] = s.sw.running.Clone()
		}
		s.config, s.session, s.stack = true, name, []frame{{kind: "config"}}
		return "", false
	}
	return s.invalid(line, 0), false
}

// hms parses a commit timer HH:MM:SS (napalm: time.strftime("%H:%M:%S")).
func hms(v string) (time.Duration, bool) {
	var h, m, sec int
	if n, err := fmt.Sscanf(v, "%d:%d:%d", &h, &m, &sec); err != nil || n != 3 || m > 59 || sec > 59 || h > 23 || h*3600+m*60+sec == 0 {
		return 0, false
	}
	return time.Duration(h*3600+m*60+sec) * time.Second, true
}

// abort drops a pending session, or reverts a commit-timer commit.
func (s *shell) abort(name string) string {
	if name == s.sw.timerSession {
		s.sw.timer.Stop()
		s.sw.running = s.sw.timerPrior
		s.sw.timer, s.sw.timerPrior, s.sw.timerSession = nil, nil, ""
		return ""
	}
	if _, ok := s.sw.sessions[name]; !ok {
		return "% Session " + name + " does not exist\n" // PLAUSIBLE: not in the corpus
	}
	delete(s.sw.sessions, name)
	return ""
}

// confirm makes a commit-timer commit permanent, or commits a pending
// session.
func (s *shell) confirm(name string) string {
	if s.sw.timerSession != name {
		return s.commitSession(name, 0)
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
		return "% Session " + name + " does not exist\n" // PLAUSIBLE: not in the corpus
	}
	if timer > 0 && s.sw.timerSession != "" {
		// "% Cannot commit" is in scrapligo's arista_eos failed-when-contains; the rest is PLAUSIBLE
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

func (s *shell) leave() { s.config, s.session, s.stack = false, "", nil }

// configLine runs one line in a configuration mode.
func (s *shell) configLine(line string, toks []string) string {
	switch toks[0] {
	case "exit":
		// exit leaves one mode: pyeapi-commands.txt:23
		if len(toks) != 1 {
			return s.invalid(line, 1)
		}
		if len(s.stack) > 1 {
			s.stack = s.stack[:len(s.stack)-1]
		} else {
			s.leave()
		}
		return ""
	case "end":
		// end returns to privileged exec, the session stays pending: napalm-config-session.txt:29
		if len(toks) != 1 {
			return s.invalid(line, 1)
		}
		s.leave()
		return ""
	case "abort":
		// abort inside the session: pyeapi-session-config-diffs.txt:5
		if s.session == "" || len(toks) != 1 {
			return s.invalid(line, 0)
		}
		delete(s.sw.sessions, s.session)
		s.leave()
		return ""
	case "rollback":
		// rollback clean-config inside a session empties its candidate, so
		// that the lines typed next replace the whole running-config on
		// commit: NAPALM's replace (napalm-config-session.txt:9-11; also
		// arista.eos cliconf/eos.py l.142). Only in a session, at its top
		// level.
		if s.session == "" || len(s.stack) != 1 || len(toks) != 2 || toks[1] != "clean-config" {
			return s.invalid(line, len(toks)-1)
		}
		if cfg := s.sw.sessions[s.session]; cfg != nil {
			s.sw.sessions[s.session] = cfg.Clean()
		}
		return ""
	case "commit":
		// commit inside the session: pyeapi-session-config-diffs.txt:6. The
		// in-session `commit timer` form has no source (NAPALM commits with a
		// timer from exec, napalm-config-session.txt:19): refused.
		if s.session == "" || len(toks) != 1 {
			return s.invalid(line, len(toks)-1)
		}
		out := s.commitSession(s.session, 0)
		if out == "" {
			s.leave()
		}
		return out
	}
	cfg := s.sw.running
	if s.session != "" {
		cfg = s.sw.sessions[s.session]
		if cfg == nil { // aborted from another connection, or reloaded
			s.leave()
			return "% Session does not exist\n" // PLAUSIBLE: not in the corpus
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
