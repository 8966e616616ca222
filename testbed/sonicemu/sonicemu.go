// Package sonicemu is a stateful SONiC switch emulator over real SSH,
// written from SONiC's documentation (sonic-buildimage
// src/sonic-yang-models/doc/Configuration.md for CONFIG_DB, and
// sonic-utilities doc/Command-Reference.md plus generic_config_updater/
// for the GCU commands), not from fabctl's renderer.
//
// It offers the bash login shell of a SONiC switch (prompt
// "admin@sonic:~$ ") with:
//
//   - show runningconfiguration all        CONFIG_DB as JSON (indent 4, sorted keys)
//   - sudo config apply-patch FILE [-d|--dry-run] [-v]
//     RFC 6902 patch, all or nothing, then the GCU checks: no empty
//     tables, and the YANG constraints: with Options.YANGDir (or YANG) the
//     whole target CONFIG_DB is validated against the SONiC YANG models
//     by yangval, like GCU does with libyang; without, the hand-copied
//     constraints of validate.go (ranges, leafrefs to PORT / maps / profiles)
//   - sudo config replace FILE
//   - sudo config checkpoint|rollback|delete-checkpoint NAME, config list-checkpoints
//   - cat > FILE <<'EOF' ... EOF (an in-memory file system), cat FILE, rm [-f] FILE
//   - echo $?, hostname, exit/logout
//
// `config` without sudo fails like on the switch ("Root privileges are
// required for this operation"); unknown commands print bash's
// "-bash: foo: command not found".
package sonicemu

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fabctl/fabctl/testbed/sshemu"
	"github.com/fabctl/fabctl/yangval"
)

// Options configure an emulated switch.
type Options struct {
	Hostname string // default "sonic"
	User     string // default "admin"
	Password string
	Ports    int // Ethernet0, Ethernet4, ... (default 32)
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
}

// Switch is one emulated SONiC switch.
type Switch struct {
	*sshemu.Server
	opts Options

	mu          sync.Mutex
	db          map[string]any
	files       map[string][]byte
	checkpoints map[string][]byte
	// RejectPatch, when set, makes every apply-patch fail with this
	// error text (as from a GCU validator) after parsing the patch.
	rejectPatch string
	patches     int
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
	if opts.YANG == nil && opts.YANGDir != "" {
		schema, err := yangval.Load(opts.YANGDir)
		if err != nil {
			return nil, fmt.Errorf("sonicemu: YANG models in %s: %w", opts.YANGDir, err)
		}
		opts.YANG = schema
	}
	sw := &Switch{opts: opts, db: DefaultConfigDB(opts.Hostname, opts.Ports),
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

// DefaultConfigDB is a factory CONFIG_DB: DEVICE_METADATA and PORT.
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
		}},
		"PORT": port,
	}
}

// RunningConfig is what `show runningconfiguration all` prints.
func (sw *Switch) RunningConfig() []byte {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return render(sw.db)
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
	if len(args) >= 1 && strings.HasPrefix("runningconfiguration", args[0]) && len(args[0]) >= 7 {
		if len(args) >= 2 && args[1] == "all" {
			return string(s.sw.RunningConfig()), 0, false
		}
		return "Usage: show runningconfiguration [OPTIONS] COMMAND [ARGS]...\nTry \"show runningconfiguration -h\" for help.\n\nError: Missing command.\n", 2, false
	}
	name := ""
	if len(args) > 0 {
		name = args[0]
	}
	return fmt.Sprintf("Usage: show [OPTIONS] COMMAND [ARGS]...\nTry \"show -h\" for help.\n\nError: No such command \"%s\".\n", name), 2, false
}

func usage(cmd, params, msg string) string {
	return fmt.Sprintf("Usage: config %s [OPTIONS] %s\nTry \"config %s -h\" for help.\n\nError: %s\n", cmd, params, cmd, msg)
}

func (s *shell) config(args []string) (string, int, bool) {
	if len(args) == 0 {
		return "Usage: config [OPTIONS] COMMAND [ARGS]...\n", 0, false
	}
	var pos []string
	dry, verbose := false, false
	for _, a := range args[1:] {
		switch a {
		case "-d", "--dry-run":
			dry = true
		case "-v", "--verbose":
			verbose = true
		default:
			pos = append(pos, a)
		}
	}
	_ = verbose
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
		if err := sw.validate(target); err != nil {
			return failed("replace config", "replace", "TARGET_FILE_PATH", err.Error()), 2, false
		}
		if !dry {
			sw.mu.Lock()
			sw.db = target
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
		if ok && !dry {
			var db map[string]any
			_ = json.Unmarshal(b, &db)
			sw.db = db
		}
		sw.mu.Unlock()
		if !ok {
			return failed("rollback config", "rollback", "CHECKPOINT_NAME", fmt.Sprintf("Checkpoint '%s' does not exist", pos[0])), 2, false
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
	}
	return fmt.Sprintf("Usage: config [OPTIONS] COMMAND [ARGS]...\nTry \"config -h\" for help.\n\nError: No such command \"%s\".\n", args[0]), 2, false
}

// failed is sonic-utilities' failure shape: a red line, then click's
// ctx.fail usage block.
func failed(what, cmd, params, msg string) string {
	return fmt.Sprintf("Failed to %s due to: %s\n", what, msg) + usage(cmd, params, msg)
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
		sw.db = target
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
