// Package sonicemu is a stateful SONiC switch emulator over real SSH,
// written from SONiC's vendor sources (testdata/vendor/sonic/ and the
// files they cite: sonic-buildimage src/sonic-yang-models/doc/
// Configuration.md for CONFIG_DB, sonic-utilities config/main.py,
// show/main.py, doc/Command-Reference.md and generic_config_updater/ for
// the commands, sonic-swss orchagent/cfgmgr for what the daemons do), not
// from fabctl's renderer.
//
// It offers the bash login shell of a SONiC switch (prompt
// "admin@sonic:~$ ") and accepts exactly these commands:
//
//   - show runningconfiguration all        CONFIG_DB as JSON (indent 4) plus
//     the "bgpraw" string (show/main.py; gcu-and-save.txt:5-6, 23)
//   - show version [--brief]: the image's build_version and asic_type
//     (Options.BuildVersion, Options.ASICType) and DEVICE_METADATA's
//     HWSKU and platform, in show/main.py's layout (show-version.txt)
//   - sonic-cfggen -d --print-data, sonic-cfggen -j FILE --print-data
//     (sonic-buildimage src/sonic-config-engine/sonic-cfggen: -d reads
//     CONFIG_DB, -j a JSON file, --print-data prints the data as JSON)
//   - sudo config apply-patch FILE [-f CONFIGDB] [-d|--dry-run] [-v] [-p] [-i PATH]
//     RFC 6902 patch, all or nothing, then the GCU checks: no empty
//     tables, and the YANG constraints: with Options.YANGDir (or YANG) the
//     whole target CONFIG_DB is validated against the SONiC YANG models
//     by yangval, like GCU does with libyang; without, the hand-copied
//     constraints of validate.go (ranges, leafrefs to PORT / maps / profiles)
//     (gcu-and-save.txt:12-13, 24-31)
//   - sudo config replace FILE, sudo config checkpoint|rollback|delete-checkpoint NAME,
//     config list-checkpoints (gcu-and-save.txt:14-18)
//   - sudo config save [-y|--yes] [FILE]: running CONFIG_DB to
//     /etc/sonic/config_db.json, the startup configuration
//     (gcu-and-save.txt:19-22); Reload brings it back
//   - cat > FILE <<'EOF' ... EOF (an in-memory file system), cat FILE,
//     rm [-f] FILE (POSIX shell: shell-file-transport.txt)
//   - show pfc counters, show queue counters, show queue wredcounters,
//     show pfcwd stats: the counters a test sets with SetCounters, in
//     sonic-utilities' format (counters.go, testdata/vendor/sonic/show-counters.txt)
//   - echo $?, hostname, exit/logout
//
// Anything else is refused with the real tool's words: bash's
// "-bash: foo: command not found", click 8's usage errors for config and
// show subcommands and options ("Error: No such command 'foo'.", "Error:
// No such option: --foo", sonic-utilities pins click>=8.0,<8.2 and its
// tests show the wording), sonic-cfggen's argparse error. `config`
// without sudo fails like on the switch ("Root privileges are required
// for this operation").
//
// What the daemons do that shows in CONFIG_DB or matters for read-back is
// modelled with its source: in the traditional buffer model buffermgrd
// writes BUFFER_PG/BUFFER_PROFILE for every port's pfc_enable PGs
// (buffermgr.go); orchagent programs the port MTU as PORT mtu + 22
// (SAIPortMTU).
package sonicemu

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fabctl/fabctl/testbed/portlink"
	"github.com/fabctl/fabctl/testbed/sshemu"
	"github.com/fabctl/fabctl/yangval"
)

// Options configure an emulated switch.
type Options struct {
	Hostname string // default "sonic"
	User     string // default "admin"
	Password string
	Ports    int // Ethernet0, Ethernet4, ... (default 32)
	// ExtraPorts are more PORT rows (breakout lanes such as Ethernet1).
	ExtraPorts []string
	// CommitLatency delays apply-patch, replace and rollback.
	CommitLatency time.Duration
	// ShowLatency delays every show command: a real switch takes
	// 0.3-1 s to answer show running-config (benchmarks state it).
	ShowLatency time.Duration
	// AuthorizedKeys log in as User without a password (key or agent).
	AuthorizedKeys []gossh.PublicKey
	// Addr to listen on (default 127.0.0.1:0).
	Addr string
	// YANGDir, when set, is a directory of SONiC YANG models
	// (sonic-*.yang and their imports): every apply-patch and replace
	// result is validated against them with yangval, and an invalid one is
	// refused like GCU does. Start fails when the models do not load.
	YANGDir string
	// YANG is an already loaded schema (takes precedence over YANGDir;
	// lets many emulators share one).
	YANG *yangval.Schema
	// Profile is how libyang loads the models (the SONiC platform's,
	// sonic.Descriptor.YANG.Profile): with it and a libyang build, the
	// whole patched CONFIG_DB is also validated with its must, when and
	// mandatory, as GCU's sonic-yang validation does.
	Profile *yangval.Profile
	// BufferModel is DEVICE_METADATA|localhost buffer_model, what the
	// image's init_cfg.json sets (testdata/vendor/sonic/
	// buffermgrd-traditional.txt:29-33): "dynamic" (default: images built
	// for Mellanox and Barefoot platforms, SONIC_BUFFER_MODEL=dynamic) or
	// "traditional" (docker-sonic-vs and every other platform; buffermgrd
	// then writes BUFFER_PG itself, buffermgr.go). The default keeps the
	// shared testbeds, whose 1 m cables have no pg_profile_lookup.ini
	// entry in the traditional model, on the model fabctl can converge.
	BufferModel string
	// ASICType is sonic_version.yml's asic_type, which GCU's
	// rdma_config_update_validator reads with the HWSKU of
	// DEVICE_METADATA|localhost to name the ASIC (sonic-utilities
	// field_operation_validators.py get_asic_name l.23-78: "mellanox",
	// "broadcom", "vs", "cisco-8000", "marvell-teralynx"). Default "vs",
	// the virtual switch image this emulator's DEVICE_METADATA platform
	// (x86_64-kvm_x86_64-r0) names; with it the HWSKU is looked up in the
	// Mellanox and the Broadcom lists (gcu.go).
	ASICType string
	// BuildVersion is sonic_version.yml's build_version; its 8-digit
	// part is the branch GCU compares with a platform's minimum
	// (field_operation_validators.py l.102-109, l.168-173). Default "":
	// no 8-digit part, no branch check.
	BuildVersion string
	// NoDefaultPFCWD starts a switch whose DEVICE_METADATA has
	// default_pfcwd_status "disable": `pfcwd start_default` writes nothing,
	// so CONFIG_DB has no PFC_WD table (and GCU refuses to create one,
	// gcu.go). By default the factory CONFIG_DB is what start_default
	// leaves with default_pfcwd_status "enable" (DefaultConfigDB).
	NoDefaultPFCWD bool
	// Links is the switch's cabling (testbed/portlink): what `show
	// interfaces status`, `show interfaces counters` and `show lldp
	// table` report per port (links.go). nil: every port down, no
	// neighbour.
	Links portlink.Source
}

// Switch is one emulated SONiC switch.
type Switch struct {
	*sshemu.Server
	opts Options

	mu          sync.Mutex
	db          map[string]any
	files       map[string][]byte
	checkpoints map[string][]byte
	// startup is /etc/sonic/config_db.json: what `config save` writes and
	// a reload or reboot loads (gcu-and-save.txt:19-22).
	startup []byte
	// failSave, when set, is what `config save` prints instead of saving.
	failSave string
	// RejectPatch, when set, makes every apply-patch fail with this
	// error text (as from a GCU validator) after parsing the patch.
	rejectPatch string
	patches     int
	counters    map[string]*PortCounters // counters.go
}

// Start starts an emulated switch with a factory-default CONFIG_DB.
func Start(opts Options) (*Switch, error) {
	if opts.Hostname == "" {
		opts.Hostname = "sonic"
	}
	if opts.User == "" {
		opts.User = "admin"
	}
	if opts.Ports == 0 {
		opts.Ports = 32
	}
	if opts.BufferModel == "" {
		opts.BufferModel = "dynamic"
	}
	if opts.ASICType == "" {
		opts.ASICType = "vs"
	}
	if opts.YANG == nil && opts.YANGDir != "" {
		schema, err := yangval.Load(opts.YANGDir)
		if err != nil {
			return nil, fmt.Errorf("sonicemu: YANG models in %s: %w", opts.YANGDir, err)
		}
		opts.YANG = schema
	}
	db := DefaultConfigDB(opts.Hostname, opts.Ports)
	if opts.NoDefaultPFCWD {
		rowOf(db, "DEVICE_METADATA", "localhost")["default_pfcwd_status"] = "disable"
		delete(db, "PFC_WD")
	}
	for i, n := range opts.ExtraPorts {
		db["PORT"].(map[string]any)[n] = map[string]any{"admin_status": "up", "alias": n, "index": fmt.Sprint(opts.Ports + i + 1),
			"lanes": fmt.Sprint(4*opts.Ports + i + 1), "mtu": "9100", "speed": "100000"}
	}
	db["DEVICE_METADATA"].(map[string]any)["localhost"].(map[string]any)["buffer_model"] = opts.BufferModel
	// A factory switch boots from its config_db.json: saved = running.
	sw := &Switch{opts: opts, db: db, startup: render(db),
		files: map[string][]byte{}, checkpoints: map[string][]byte{}}
	srv, err := sshemu.Start(sshemu.Config{
		Addr:           opts.Addr,
		Users:          map[string]string{opts.User: opts.Password},
		AuthorizedKeys: opts.AuthorizedKeys,
		Banner:         "Linux " + opts.Hostname + " 6.1.0-11-2-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.38-4 x86_64\nYou are on\n  ____   ___  _   _ _  ____\n / ___| / _ \\| \\ | (_)/ ___|\n \\___ \\| | | |  \\| | | |\n  ___) | |_| | |\\  | | |___\n |____/ \\___/|_| \\_|_|\\____|\n\n-- Software for Open Networking in the Cloud --\n\nUnauthorized access and/or use are prohibited.\nAll access and/or use are subject to monitoring.\n\n",
		NewShell: func(user string) sshemu.Shell {
			return &shell{sw: sw, user: user}
		},
		CommandLatency: func(line string) time.Duration {
			if strings.Contains(line, "config apply-patch") || strings.Contains(line, "config rollback") ||
				strings.Contains(line, "config replace") {
				return opts.CommitLatency
			}
			if strings.HasPrefix(line, "show ") || strings.HasPrefix(line, "sudo show ") {
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

// DefaultConfigDB is a factory CONFIG_DB: DEVICE_METADATA, PORT and
// what `pfcwd start_default` writes at boot when DEVICE_METADATA's
// default_pfcwd_status is "enable" (sonic-utilities @691b1bbc
// pfcwd/main.py start_default l.405-444): PFC_WD|GLOBAL POLL_INTERVAL,
// 200 ms (DEFAULT_POLL_INTERVAL l.39) times max(1, (ports-1)/32+1),
// at most 1000 (l.421-428); port rows only for ports with neighbours and
// PFC enabled, which a factory CONFIG_DB has none of.
func DefaultConfigDB(hostname string, ports int) map[string]any {
	port := map[string]any{}
	for i := 0; i < ports; i++ {
		name := fmt.Sprintf("Ethernet%d", 4*i)
		port[name] = map[string]any{
			"admin_status": "up", "alias": fmt.Sprintf("etp%d", i+1), "index": fmt.Sprint(i + 1),
			"lanes": fmt.Sprintf("%d,%d,%d,%d", 4*i+1, 4*i+2, 4*i+3, 4*i+4),
			"mtu":   "9100", "speed": "100000",
		}
	}
	return map[string]any{
		"DEVICE_METADATA": map[string]any{"localhost": map[string]any{
			"hostname": hostname, "hwsku": "Force10-S6000", "platform": "x86_64-kvm_x86_64-r0",
			"mac": "52:54:00:12:34:56", "type": "LeafRouter", "buffer_model": "dynamic",
			"default_pfcwd_status": "enable",
		}},
		"PORT":   port,
		"PFC_WD": map[string]any{"GLOBAL": map[string]any{"POLL_INTERVAL": fmt.Sprint(min(200*max(1, (ports-1)/32+1), 1000))}},
	}
}

// bgpraw is what "show runningconfiguration all" adds under "bgpraw":
// FRR's `show running-config` as one string (show/main.py l.1850-1867).
// PLAUSIBLE, not from a source: the text of an FRR with no BGP configured.
const bgpraw = "Building configuration...\n\nCurrent configuration:\n!\nfrr defaults traditional\nhostname sonic\nno service integrated-vtysh-config\n!\nend\n"

// RunningConfig is what `show runningconfiguration all` prints: the
// running CONFIG_DB (indent 4) plus "bgpraw", as the driver reads it.
func (sw *Switch) RunningConfig() []byte {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return showAll(sw.db)
}

func showAll(db map[string]any) []byte {
	out := make(map[string]any, len(db)+1)
	for k, v := range db {
		out[k] = v
	}
	out["bgpraw"] = bgpraw
	return render(out)
}

// StartupConfig is /etc/sonic/config_db.json.
func (sw *Switch) StartupConfig() []byte {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return append([]byte(nil), sw.startup...)
}

// Reload makes the running CONFIG_DB what /etc/sonic/config_db.json holds,
// as `config reload` (sonic-cfggen -j /etc/sonic/config_db.json
// --write-to-db after clearing CONFIG_DB: sonic-utilities
// doc/Command-Reference.md "config reload") and a reboot do. GCU
// checkpoints are files in /etc/sonic/checkpoints (sonic-utilities
// generic_config_updater/generic_updater.py CHECKPOINTS_DIR) and survive
// it; so do the emulator's other files.
func (sw *Switch) Reload() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	var db map[string]any
	if err := json.Unmarshal(sw.startup, &db); err != nil {
		return
	}
	sw.db = db
}

// version is `show version` (sonic-utilities show/main.py version,
// l.1727-1756): the image's build_version and asic_type as
// device_info.get_sonic_version_info() and get_platform_info() read them
// from /etc/sonic/sonic_version.yml, which is also where GCU's
// field_operation_validators.py reads them (l.33, l.103-105); the HWSKU
// and platform as DEVICE_METADATA|localhost holds them. A missing
// build_version prints "N/A" (`.get('build_version', 'N/A')`). The other
// lines are the values of sonic-utilities' tests/show_test.py
// test_show_version (l.227-262), "Docker images:" without the table.
func (sw *Switch) version() string {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	build := sw.opts.BuildVersion
	if build == "" {
		build = "N/A"
	}
	md := rowOf(sw.db, "DEVICE_METADATA", "localhost")
	return "\nSONiC Software Version: SONiC." + build + "\nSONiC OS Version: 11\nDistribution: Debian 11.6\nKernel: 5.10\n" +
		"Build commit: 7d94c0c28\nBuild date: Wed Feb 15 06:17:08 UTC 2023\nBuilt by: AzDevOps\n\n" +
		"Platform: " + str(md["platform"]) + "\nHwSKU: " + str(md["hwsku"]) + "\nASIC: " + sw.opts.ASICType + "\nASIC Count: 1\n" +
		"Serial Number: N/A\nModel Number: N/A\nHardware Revision: N/A\nUptime: 10:00:00 up 1 day,  1 user,  load average: 0.00, 0.00, 0.00\n" +
		"Date: Sun 29 Nov 2026 10:00:00\n\nDocker images:\n"
}

// SetBuildVersion changes the image's build_version, as installing
// another SONiC image and rebooting into it does (the CONFIG_DB is kept):
// `show version` and GCU's branch check see the new one.
func (sw *Switch) SetBuildVersion(v string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.opts.BuildVersion = v
}

// FailSave makes `config save` print output and save nothing while output
// is not empty; "" clears it. `config save` runs
// "sonic-cfggen -d --print-data > /etc/sonic/config_db.json" in a shell
// and exits with its status (config/main.py save, utilities_common/cli.py
// run_command): a failure prints the shell's or sonic-cfggen's own words,
// e.g. (PLAUSIBLE, dash's redirection error format, no captured sample)
// "/bin/sh: 1: cannot create /etc/sonic/config_db.json: Read-only file system".
func (sw *Switch) FailSave(output string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.failSave = output
}

// SAIPortMTU is the MTU orchagent programs into the ASIC for a port:
// CONFIG_DB PORT mtu + 22 (Ethernet header 14, FCS 4, one VLAN tag 4;
// sonic-swss orchagent/portsorch.cpp setPortMtu,
// testdata/vendor/sonic/orchagent-port-mtu.txt). 0 for an unknown port.
func (sw *Switch) SAIPortMTU(port string) int {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	p, _ := sw.db["PORT"].(map[string]any)
	row, _ := p[port].(map[string]any)
	mtu, err := strconv.Atoi(str(row["mtu"]))
	if err != nil {
		return 0
	}
	return mtu + 22
}

func render(db map[string]any) []byte {
	b, _ := json.MarshalIndent(db, "", "    ")
	return append(b, '\n')
}

// Edit changes CONFIG_DB directly (like redis-cli on the box): drift.
func (sw *Switch) Edit(fn func(db map[string]any)) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	fn(sw.db)
}

// Save makes /etc/sonic/config_db.json the running CONFIG_DB, as
// `config save -y` does (save below): a switch that booted with the
// configuration Edit typed.
func (sw *Switch) Save() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.startup = render(sw.db)
}

// Checkpoints lists the stored checkpoints.
func (sw *Switch) Checkpoints() []string {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	out := make([]string, 0, len(sw.checkpoints))
	for n := range sw.checkpoints {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// RejectPatches makes apply-patch fail with msg ("" stops it).
func (sw *Switch) RejectPatches(msg string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.rejectPatch = msg
}

// Patches counts successfully applied (non dry-run) patches.
func (sw *Switch) Patches() int {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.patches
}

// File returns a file of the in-memory file system.
func (sw *Switch) File(path string) ([]byte, bool) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	b, ok := sw.files[path]
	return b, ok
}

type shell struct {
	sw   *Switch
	user string
	last int // $?
	// heredoc in progress
	hdFile, hdDelim string
	hdBuf           strings.Builder
	hdOn            bool
}

func (s *shell) Prompt() string {
	if s.hdOn {
		return "> "
	}
	return s.user + "@" + s.sw.opts.Hostname + ":~$ "
}

func (s *shell) Handle(line string) (string, bool) {
	if s.hdOn {
		if line == s.hdDelim {
			s.hdOn = false
			s.sw.mu.Lock()
			s.sw.files[s.hdFile] = []byte(s.hdBuf.String())
			s.sw.mu.Unlock()
			s.hdBuf.Reset()
			s.last = 0
			return "", false
		}
		s.hdBuf.WriteString(line)
		s.hdBuf.WriteByte('\n')
		return "", false
	}
	args := fields(line)
	if len(args) == 0 {
		return "", false
	}
	out, code, exit := s.run(args, line)
	s.last = code
	return out, exit
}

// fields splits a command line like a shell, honouring quotes.
func fields(line string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	in := false
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

func (s *shell) run(args []string, line string) (string, int, bool) {
	sudo := false
	if args[0] == "sudo" {
		sudo = true
		args = args[1:]
		if len(args) == 0 {
			return "usage: sudo -h | -K | -k | -V\n", 1, false
		}
	}
	switch args[0] {
	case "exit", "logout":
		return "logout\n", 0, true
	case "hostname":
		return s.sw.opts.Hostname + "\n", 0, false
	case "echo":
		rest := strings.Join(args[1:], " ")
		return strings.ReplaceAll(rest, "$?", fmt.Sprint(s.last)) + "\n", 0, false
	case "cat":
		return s.cat(args[1:], line)
	case "rm":
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			s.sw.mu.Lock()
			_, ok := s.sw.files[a]
			delete(s.sw.files, a)
			s.sw.mu.Unlock()
			if !ok && !strings.Contains(line, "-f") {
				return fmt.Sprintf("rm: cannot remove '%s': No such file or directory\n", a), 1, false
			}
		}
		return "", 0, false
	case "show":
		return s.show(args[1:])
	case "sonic-cfggen":
		return s.cfggen(args[1:])
	case "config":
		if !sudo {
			return "Root privileges are required for this operation\n", 1, false
		}
		return s.config(args[1:])
	}
	return fmt.Sprintf("-bash: %s: command not found\n", args[0]), 127, false
}

func (s *shell) cat(args []string, line string) (string, int, bool) {
	// cat > FILE <<'EOF'  |  cat <<'EOF' > FILE  |  cat FILE
	if strings.Contains(line, "<<") {
		var file, delim string
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == ">" && i+1 < len(args):
				file = args[i+1]
				i++
			case strings.HasPrefix(a, ">") && len(a) > 1:
				file = a[1:]
			case a == "<<" && i+1 < len(args):
				delim = args[i+1]
				i++
			case strings.HasPrefix(a, "<<"):
				delim = strings.TrimPrefix(strings.TrimPrefix(a, "<<"), "-")
			}
		}
		if delim == "" {
			return "-bash: syntax error near unexpected token `newline'\n", 2, false
		}
		if file == "" {
			file = "/dev/stdout"
		}
		s.hdOn, s.hdFile, s.hdDelim = true, file, delim
		return "", 0, false
	}
	var out strings.Builder
	for _, a := range args {
		s.sw.mu.Lock()
		b, ok := s.sw.files[a]
		s.sw.mu.Unlock()
		if !ok {
			return out.String() + fmt.Sprintf("cat: %s: No such file or directory\n", a), 1, false
		}
		out.Write(b)
	}
	return out.String(), 0, false
}

func (s *shell) show(args []string) (string, int, bool) {
	// show/main.py: "runningconfiguration" is an AliasedGroup (prefixes
	// allowed), "all" takes only --verbose.
	if len(args) >= 1 && strings.HasPrefix("runningconfiguration", args[0]) && len(args[0]) >= 7 {
		if len(args) >= 2 && args[1] == "all" {
			for _, a := range args[2:] {
				if a != "--verbose" {
					return clickError("show runningconfiguration all", "[OPTIONS]", noSuchOption(a)), 2, false
				}
			}
			return string(s.sw.RunningConfig()), 0, false
		}
		if len(args) >= 2 {
			return clickError("show runningconfiguration", "[OPTIONS] COMMAND [ARGS]...", fmt.Sprintf("No such command '%s'.", args[1])), 2, false
		}
		return clickError("show runningconfiguration", "[OPTIONS] COMMAND [ARGS]...", "Missing command."), 2, false
	}
	if out, code, ok := s.showLinks(args); ok { // links.go
		return out, code, false
	}
	if len(args) >= 1 && args[0] == "version" {
		for _, a := range args[1:] {
			if a != "--brief" {
				return clickError("show version", "[OPTIONS]", noSuchOption(a)), 2, false
			}
		}
		return s.sw.version(), 0, false
	}
	if out, code, ok := s.showCounters(args); ok { // counters.go
		return out, code, false
	}
	name := ""
	if len(args) > 0 {
		name = args[0]
	}
	return clickError("show", "[OPTIONS] COMMAND [ARGS]...", fmt.Sprintf("No such command '%s'.", name)), 2, false
}

// clickError is click 8's usage error (sonic-utilities pins
// click>=8.0,<8.2; its tests show "Usage: summary [OPTIONS]\nTry
// 'summary --help' for help.\n\nError: ..." and "No such command 'eni'"):
// the help hint names the first help option, "-h" for SONiC's config and
// show (CONTEXT_SETTINGS help_option_names=['-h', '--help', '-?']).
func clickError(path, params, msg string) string {
	return fmt.Sprintf("Usage: %s %s\nTry '%s -h' for help.\n\nError: %s\n", path, params, path, msg)
}

// noSuchOption is click 8.0's unknown option message
// (sonic-utilities tests/config_dpb_test.py: "No such option: -p").
func noSuchOption(o string) string { return "No such option: " + o }

// cfggen runs the two sonic-cfggen forms the emulator knows: -d
// --print-data (CONFIG_DB) and -j FILE --print-data (a JSON file).
// Anything else is refused with argparse's usage error (PLAUSIBLE
// wording: argparse's "prog: error: ..." format, usage line shortened).
func (s *shell) cfggen(args []string) (string, int, bool) {
	const use = "usage: sonic-cfggen [-h] [-m [MINIGRAPH] | -Y [YANG] | -M DEVICE_DESCRIPTION | -k HWSKU] [-n [NAMESPACE]] [-p [PORT_CONFIG]] [-S [HWSKU_CONFIG]] [-y YAML] [-j JSON] [-a ADDITIONAL_DATA] [-d] [-H] [-s REDIS_UNIX_SOCK_FILE] [-t TEMPLATE | -v VAR | --var-json VAR_JSON | --preset {empty,l2,l1,l3} | --print-data | -w | -K KEY]\n"
	var files []string
	fromDB, print := false, false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-d", "--from-db":
			fromDB = true
		case "--print-data":
			print = true
		case "-j", "--json":
			if i+1 >= len(args) {
				return use + "sonic-cfggen: error: argument -j/--json: expected one argument\n", 2, false
			}
			files = append(files, args[i+1])
			i++
		default:
			return use + "sonic-cfggen: error: unrecognized arguments: " + strings.Join(args[i:], " ") + "\n", 2, false
		}
	}
	if !print {
		return use + "sonic-cfggen: error: only --print-data is emulated\n", 2, false
	}
	data := map[string]any{}
	sw := s.sw
	for _, f := range files {
		sw.mu.Lock()
		b, ok := sw.files[f]
		if f == StartupFile {
			b, ok = sw.startup, true
		}
		sw.mu.Unlock()
		if !ok {
			// PLAUSIBLE: Python's uncaught open() error, last line.
			return fmt.Sprintf("FileNotFoundError: [Errno 2] No such file or directory: '%s'\n", f), 1, false
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Sprintf("json.decoder.JSONDecodeError: %v\n", err), 1, false
		}
		for k, v := range m {
			data[k] = v
		}
	}
	if fromDB {
		sw.mu.Lock()
		for k, v := range sw.db {
			data[k] = v
		}
		sw.mu.Unlock()
	}
	return string(render(data)), 0, false
}

// StartupFile is the startup configuration (config/main.py
// DEFAULT_CONFIG_DB_FILE).
const StartupFile = "/etc/sonic/config_db.json"

func usage(cmd, params, msg string) string {
	return clickError("config "+cmd, "[OPTIONS] "+params, msg)
}

// configOptions are the options each config subcommand the emulator
// knows accepts (sonic-utilities config/main.py: apply-patch l.1957-1990,
// replace, rollback, checkpoint, delete-checkpoint, list-checkpoints,
// save l.1830-1837; gcu-and-save.txt:12-19); true = takes a value.
var configOptions = map[string]map[string]bool{
	"apply-patch":       {"-f": true, "--format": true, "-d": false, "--dry-run": false, "-p": false, "--parallel": false, "-n": false, "--ignore-non-yang-tables": false, "-i": true, "--ignore-path": true, "-v": false, "--verbose": false},
	"replace":           {"-f": true, "--format": true, "-d": false, "--dry-run": false, "-n": false, "--ignore-non-yang-tables": false, "-i": true, "--ignore-path": true, "-v": false, "--verbose": false},
	"rollback":          {"-d": false, "--dry-run": false, "-n": false, "--ignore-non-yang-tables": false, "-i": true, "--ignore-path": true, "-v": false, "--verbose": false},
	"checkpoint":        {"-v": false, "--verbose": false},
	"delete-checkpoint": {"-v": false, "--verbose": false},
	"list-checkpoints":  {"-t": false, "--time": false, "-v": false, "--verbose": false},
	"save":              {"-y": false, "--yes": false},
}

func (s *shell) config(args []string) (string, int, bool) {
	if len(args) == 0 {
		return "Usage: config [OPTIONS] COMMAND [ARGS]...\n", 0, false
	}
	opts, ok := configOptions[args[0]]
	if !ok {
		return clickError("config", "[OPTIONS] COMMAND [ARGS]...", fmt.Sprintf("No such command '%s'.", args[0])), 2, false
	}
	var pos []string
	dry, yes := false, false
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		takes, known := opts[a]
		if !known {
			return usage(args[0], "...", noSuchOption(a)), 2, false
		}
		if takes {
			if i+1 >= len(args) {
				return usage(args[0], "...", fmt.Sprintf("Option '%s' requires an argument.", a)), 2, false
			}
			i++
		}
		switch a {
		case "-d", "--dry-run":
			dry = true
		case "-y", "--yes":
			yes = true
		}
	}
	sw := s.sw
	switch args[0] {
	case "apply-patch":
		if len(pos) != 1 {
			return usage("apply-patch", "PATCH_FILE_PATH", "Missing argument 'PATCH_FILE_PATH'."), 2, false
		}
		return s.applyPatch(pos[0], dry)
	case "replace":
		if len(pos) != 1 {
			return usage("replace", "TARGET_FILE_PATH", "Missing argument 'TARGET_FILE_PATH'."), 2, false
		}
		sw.mu.Lock()
		b, ok := sw.files[pos[0]]
		sw.mu.Unlock()
		if !ok {
			return usage("replace", "TARGET_FILE_PATH", fmt.Sprintf("Invalid value for 'TARGET_FILE_PATH': Path '%s' does not exist.", pos[0])), 2, false
		}
		var target map[string]any
		if err := json.Unmarshal(b, &target); err != nil {
			return failed("replace config", "replace", "TARGET_FILE_PATH", err.Error()), 2, false
		}
		sw.mu.Lock()
		cur := sw.db
		sw.mu.Unlock()
		// ConfigReplacer.replace applies the diff through PatchApplier
		// (generic_updater.py l.171-183): the same field checks (gcu.go).
		if err := sw.validateFieldOperation(cur, target); err != nil {
			return replaceFailed("replace", "TARGET_FILE_PATH", err.Error()), 2, false
		}
		if err := sw.validate(target); err != nil {
			return replaceFailed("replace", "TARGET_FILE_PATH", err.Error()), 2, false
		}
		if !dry {
			sw.mu.Lock()
			sw.commit(target)
			sw.mu.Unlock()
		}
		return "Config Replacer: Config replacement starting.\nConfig Replacer: Target config length: " + fmt.Sprint(len(b)) + ".\nConfig Replacer: Getting current config db.\nConfig Replacer: Generating patch between target config and current config db.\nConfig Replacer: Applying patch using 'Patch Applier'.\nConfig Replacer: Verifying config replacement is reflected on ConfigDB.\nConfig Replacer: Config replacement completed.\nConfig replaced successfully.\n", 0, false
	case "checkpoint":
		if len(pos) != 1 {
			return usage("checkpoint", "CHECKPOINT_NAME", "Missing argument 'CHECKPOINT_NAME'."), 2, false
		}
		sw.mu.Lock()
		sw.checkpoints[pos[0]] = render(sw.db)
		sw.mu.Unlock()
		return fmt.Sprintf("Config Rollbacker: Config checkpoint starting.\nConfig Rollbacker: Checkpoint name: %s.\nConfig Rollbacker: Getting current config db.\nConfig Rollbacker: Getting checkpoint full-path.\nConfig Rollbacker: Ensuring checkpoint directory exist.\nConfig Rollbacker: Saving config db content to /etc/sonic/checkpoints/%s.cp.json.\nConfig Rollbacker: Config checkpoint completed.\nCheckpoint created successfully.\n", pos[0], pos[0]), 0, false
	case "rollback":
		if len(pos) != 1 {
			return usage("rollback", "CHECKPOINT_NAME", "Missing argument 'CHECKPOINT_NAME'."), 2, false
		}
		sw.mu.Lock()
		b, ok := sw.checkpoints[pos[0]]
		cur := sw.db
		sw.mu.Unlock()
		if !ok {
			return replaceFailed("rollback", "CHECKPOINT_NAME", fmt.Sprintf("Checkpoint '%s' does not exist", pos[0])), 2, false
		}
		var db map[string]any
		_ = json.Unmarshal(b, &db)
		// FileSystemConfigRollbacker.rollback replaces with the
		// checkpoint (generic_updater.py l.208-220): the same field
		// checks as apply-patch (gcu.go).
		if err := sw.validateFieldOperation(cur, db); err != nil {
			return replaceFailed("rollback", "CHECKPOINT_NAME", err.Error()), 2, false
		}
		// ConfigReplacer.replace applies through PatchApplier, whose
		// StrictPatchSorter.sort validates the whole target against the
		// YANG (patch_sorter.py l.2401-2415), as replace does above.
		if err := sw.validate(db); err != nil {
			return replaceFailed("rollback", "CHECKPOINT_NAME", err.Error()), 2, false
		}
		if !dry {
			sw.mu.Lock()
			sw.commit(db)
			sw.mu.Unlock()
		}
		return fmt.Sprintf("Config Rollbacker: Config rollbacking starting.\nConfig Rollbacker: Checkpoint name: %s.\nConfig Rollbacker: Verifying '%s' exists.\nConfig Rollbacker: Loading checkpoint into memory.\nConfig Rollbacker: Replacing config using 'Config Replacer'.\nConfig Replacer: Config replacement starting.\nConfig Replacer: Config replacement completed.\nConfig Rollbacker: Config rollbacking completed.\nConfig rolled back successfully.\n", pos[0], pos[0]), 0, false
	case "delete-checkpoint":
		if len(pos) != 1 {
			return usage("delete-checkpoint", "CHECKPOINT_NAME", "Missing argument 'CHECKPOINT_NAME'."), 2, false
		}
		sw.mu.Lock()
		_, ok := sw.checkpoints[pos[0]]
		delete(sw.checkpoints, pos[0])
		sw.mu.Unlock()
		if !ok {
			return failed("delete checkpoint", "delete-checkpoint", "CHECKPOINT_NAME", fmt.Sprintf("Checkpoint '%s' does not exist", pos[0])), 2, false
		}
		return fmt.Sprintf("Config Rollbacker: Deleting checkpoint starting.\nConfig Rollbacker: Checkpoint name: %s.\nConfig Rollbacker: Checking checkpoint exists.\nConfig Rollbacker: Deleting checkpoint.\nConfig Rollbacker: Deleting checkpoint completed.\nCheckpoint deleted successfully.\n", pos[0]), 0, false
	case "list-checkpoints":
		b, _ := json.MarshalIndent(sw.Checkpoints(), "", "    ")
		return string(b) + "\n", 0, false
	case "save":
		return s.save(pos, yes)
	}
	return clickError("config", "[OPTIONS] COMMAND [ARGS]...", fmt.Sprintf("No such command '%s'.", args[0])), 2, false
}

// save is `config save [-y] [FILENAME]` on a single-ASIC switch
// (config/main.py save l.1830-1890): without -y click prompts "Existing
// files will be overwritten, continue?" (the emulator answers no, as an
// unattended session would: "Aborted!"); it prints "Running command:
// /usr/local/bin/sonic-cfggen -d --print-data > FILE" (sonic-utilities
// tests/config_test.py save_config_output) and writes the CONFIG_DB there,
// keys sorted, indent 4.
func (s *shell) save(pos []string, yes bool) (string, int, bool) {
	if !yes {
		return "Existing files will be overwritten, continue? [y/N]: \nAborted!\n", 1, false
	}
	if len(pos) > 1 {
		return usage("save", "[FILENAME]", fmt.Sprintf("Got unexpected extra argument (%s)", pos[1])), 2, false
	}
	file := StartupFile
	if len(pos) == 1 {
		file = pos[0]
	}
	out := "Running command: /usr/local/bin/sonic-cfggen -d --print-data > " + file + "\n"
	sw := s.sw
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.failSave != "" {
		return out + strings.TrimSuffix(sw.failSave, "\n") + "\n", 2, false
	}
	b := render(sw.db)
	if file == StartupFile {
		sw.startup = b
	} else {
		sw.files[file] = b
	}
	return out, 0, false
}

// failed is sonic-utilities' failure shape: a red line, then click's
// ctx.fail usage block.
func failed(what, cmd, params, msg string) string {
	return fmt.Sprintf("Failed to %s due to: %s\n", what, msg) + usage(cmd, params, msg)
}

// replaceFailed is `config replace` and `config rollback` failing
// (config/main.py l.2074-2076, l.2097-2099): "Failed to replace config"
// or "Failed to rollback config" in red, then click's ctx.fail(ex).
func replaceFailed(cmd, params, msg string) string {
	return fmt.Sprintf("Failed to %s config\n", cmd) + usage(cmd, params, msg)
}

func (s *shell) applyPatch(file string, dry bool) (string, int, bool) {
	sw := s.sw
	sw.mu.Lock()
	b, ok := sw.files[file]
	reject := sw.rejectPatch
	sw.mu.Unlock()
	if !ok {
		return usage("apply-patch", "PATCH_FILE_PATH", fmt.Sprintf("Invalid value for 'PATCH_FILE_PATH': Path '%s' does not exist.", file)), 2, false
	}
	var out strings.Builder
	if dry {
		// print_dry_run_message (config/main.py l.1952-1954, called first in
		// apply_patch l.1995). A dry run then runs the same PatchApplier,
		// validators included, with DryRunChangeApplier writing only an
		// imitated CONFIG_DB (generic_updater.py l.503-533, change_applier.py
		// l.63-70): the same checks below, no commit.
		out.WriteString("** DRY RUN EXECUTION **\n")
	}
	out.WriteString("Patch Applier: localhost: Patch application starting.\n")
	ops, err := parsePatch(b)
	if err != nil {
		return out.String() + failed("apply patch", "apply-patch", "PATCH_FILE_PATH", err.Error()), 2, false
	}
	compact, _ := json.Marshal(ops)
	fmt.Fprintf(&out, "Patch Applier: localhost: Patch: %s\n", compact)
	out.WriteString("Patch Applier: localhost getting current config db.\n")
	out.WriteString("Patch Applier: localhost: simulating the target full config after applying the patch.\n")
	sw.mu.Lock()
	cur := sw.db
	sw.mu.Unlock()
	target, err := applyPatch(cur, ops)
	if err != nil {
		return out.String() + failed("apply patch", "apply-patch", "PATCH_FILE_PATH", err.Error()), 2, false
	}
	out.WriteString("Patch Applier: localhost: validating all JsonPatch operations are permitted on the specified fields\n")
	if err := sw.validateFieldOperation(cur, target); err != nil {
		return out.String() + failed("apply patch", "apply-patch", "PATCH_FILE_PATH", err.Error()), 2, false
	}
	if reject != "" {
		return out.String() + failed("apply patch", "apply-patch", "PATCH_FILE_PATH", reject), 2, false
	}
	out.WriteString("Patch Applier: localhost: validating target config does not have empty tables, since they do not show up in ConfigDb.\n")
	for _, t := range sortedKeys(target) {
		if m, ok := target[t].(map[string]any); ok && len(m) == 0 {
			return out.String() + failed("apply patch", "apply-patch", "PATCH_FILE_PATH",
				"Given patch is not valid because it will result in empty tables which is not allowed in ConfigDb. Table: "+t), 2, false
		}
	}
	if err := sw.validate(target); err != nil {
		return out.String() + failed("apply patch", "apply-patch", "PATCH_FILE_PATH",
			"Given patch will produce invalid config. Error: "+err.Error()), 2, false
	}
	out.WriteString("Patch Applier: localhost: sorting patch updates.\n")
	fmt.Fprintf(&out, "Patch Applier: The localhost patch was converted into %d changes:\n", len(ops))
	fmt.Fprintf(&out, "Patch Applier: localhost: applying %d changes in order:\n", len(ops))
	if !dry {
		sw.mu.Lock()
		sw.commit(target)
		sw.patches++
		sw.mu.Unlock()
	}
	out.WriteString("Patch Applier: localhost: verifying patch updates are reflected on ConfigDB.\n")
	out.WriteString("Patch Applier: localhost patch application completed.\n")
	out.WriteString("Patch applied successfully.\n")
	return out.String(), 0, false
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
