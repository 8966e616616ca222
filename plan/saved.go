package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
)

// This file is what apply and show trust a saved plan for, and how they
// load it: a saved plan is an artifact anyone with write access to it
// can edit and seal again. It is trusted for which spec, variables and
// devices to apply, and nothing else: the sources must hash to the
// plan's spec_hash (Check), and every connection detail, driver and
// path is derived again from them (SpecFiles, CheckDerived, Endpoints,
// StateDirFor), never read from the plan's other fields.

// Sniff tells a saved plan from a spec by content (a JSON object with
// "plan" or "content_hash") and returns it checked (DecodeKey: seal,
// signature under keys, binding to its spec); nil, nil for a spec. A
// directory or a path that is not a regular file is a spec too: the spec
// loader reports it.
func Sniff(path string, keys Keys) (*SavedPlan, error) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	b, err := safefile.ReadFile(path, safefile.Plan)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return nil, nil
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(b, &probe) != nil {
		return nil, nil
	}
	_, hasPlan := probe["plan"]
	_, hasHash := probe["content_hash"]
	if !hasPlan && !hasHash {
		return nil, nil // a JSON spec (*.fab.hcl.json)
	}
	return DecodeKey(b, path, keys)
}

// Check verifies what binds a saved plan to its embedded spec: the
// sources hash to the plan's spec_hash (so the spec the plan shows and
// records in the journal is the one apply loads), the spec and state
// directories are absolute, the sources are plain file names of one
// directory, and the device plans are unique. name is the plan file, for
// errors.
func (s *SavedPlan) Check(name string) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s is inconsistent: %s; nothing was applied: re-run fabctl plan -out", name, fmt.Sprintf(format, a...))
	}
	if len(s.Sources) == 0 {
		return bad("it embeds no spec files")
	}
	if h := SourceHash(s.Sources); h != s.Plan.SpecHash {
		return bad("its embedded spec files hash to %s, but the plan says it was made from spec %s (the embedded spec was replaced)", short(h), short(s.Plan.SpecHash))
	}
	dir := s.Dir()
	if dir == "" || !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return bad("its spec directory %q is not an absolute path", dir)
	}
	if s.StateDir != "" && (!filepath.IsAbs(s.StateDir) || filepath.Clean(s.StateDir) != s.StateDir) {
		return bad("its state directory %q is not an absolute path", s.StateDir)
	}
	seen := map[string]bool{}
	for _, f := range s.Sources {
		b := filepath.Base(f.Name)
		if f.Name == "" || b == "." || b == ".." || b == string(filepath.Separator) {
			return bad("an embedded spec file is named %q", f.Name)
		}
		if seen[b] {
			return bad("two embedded spec files are named %q (a spec is one directory)", b)
		}
		seen[b] = true
	}
	if s.Plan.Fabric == "" {
		return bad("it names no fabric")
	}
	addrs := map[string]bool{}
	for _, d := range s.Plan.Devices {
		if d == nil {
			return bad("it holds an empty device plan")
		}
		if addrs[d.Address] {
			return bad("it plans %s twice", d.Address)
		}
		addrs[d.Address] = true
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// Dir is the directory the spec files were read from (absolute): the
// recorded spec_dir, or for a plan made before it was recorded, the spec
// path (a directory) or its directory (a spec file given by name).
func (s *SavedPlan) Dir() string {
	if s.SpecDir != "" {
		return s.SpecDir
	}
	if s.SpecPath == "" {
		return ""
	}
	if len(s.Sources) == 1 && filepath.Base(s.Sources[0].Name) == filepath.Base(s.SpecPath) {
		return filepath.Dir(s.SpecPath)
	}
	return s.SpecPath
}

// SpecFiles are the embedded sources named as files of the recorded spec
// directory: every relative path the spec names (known_hosts, ca_file,
// cert_file, key_file, file() secrets) then resolves against that
// directory, wherever apply runs (spec.ResolvePath), never against the
// working directory.
func (s *SavedPlan) SpecFiles() []spec.File {
	dir := s.Dir()
	out := make([]spec.File, len(s.Sources))
	for i, f := range s.Sources {
		out[i] = spec.File{Name: filepath.Join(dir, filepath.Base(f.Name)), Data: f.Data}
	}
	return out
}

// LoadOptions are the spec inputs the plan embeds: its --var values, its
// --var-file contents and its FAB_VAR_* environment (never the current
// environment's).
func (s *SavedPlan) LoadOptions(platforms []spec.PlatformInfo) spec.LoadOptions {
	return spec.LoadOptions{Vars: append([]string(nil), s.Vars...), VarFileData: s.VarFiles,
		Env: append([]string(nil), s.Env...), Platforms: platforms}
}

// StateDirFor is the state directory (lock, applied record, journals)
// apply uses for the plan: the spec directory's .fabctl, or the
// directory plan -out was given with --state-dir. A state directory other
// than the spec's is used only when the operator names the same one with
// --state-dir (flag): a plan file alone cannot move the lock away from a
// run that holds it. A flag naming another directory is refused, and the
// directory must exist (a new one would hold a new lock).
func (s *SavedPlan) StateDirFor(flag string) (string, error) {
	derived := filepath.Join(s.Dir(), ".fabctl")
	recorded := s.StateDir
	if recorded == "" {
		recorded = derived
	}
	dir := recorded
	switch {
	case flag != "":
		abs, err := filepath.Abs(flag)
		if err != nil {
			return "", err
		}
		if !sameDir(abs, recorded) {
			return "", fmt.Errorf("--state-dir %s is not the state directory this plan was made for (%s): a lock there would not stop a run using %s; nothing was applied", flag, recorded, recorded)
		}
		dir = abs
	case !sameDir(recorded, derived):
		return "", fmt.Errorf("the plan was made with --state-dir %s (not the spec's %s): pass --state-dir %s to apply it (the operator, not the plan file, chooses where the lock is); nothing was applied", recorded, derived, recorded)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("the state directory of the fabric this plan was made for, %s, is not here, so its lock and applied record cannot be found: nothing was applied; pass --state-dir if it moved", dir)
	}
	return dir, nil
}

// sameDir reports whether two absolute paths name one directory (links
// resolved when they exist).
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, erra := filepath.EvalSymlinks(a)
	rb, errb := filepath.EvalSymlinks(b)
	return erra == nil && errb == nil && ra == rb
}

// CheckDerived checks that a saved plan's device plan is the device its
// spec declares: the address, kind, name, platform, role and driver
// (drivers.For) apply derives from the spec unit. A plan whose fields
// differ was edited (a forged driver would otherwise be used as is):
// apply refuses it before any device is contacted.
func CheckDerived(dp *DevicePlan, u Unit) error {
	d := u.Device
	want := DevicePlan{Address: d.Addr(), Kind: d.Kind, Name: d.Name, Platform: d.Platform, Role: d.Role, Driver: drivers.For(d)}
	var diffs []string
	for _, f := range []struct{ name, got, want string }{
		{"address", dp.Address, want.Address}, {"kind", dp.Kind, want.Kind}, {"name", dp.Name, want.Name},
		{"platform", dp.Platform, want.Platform}, {"role", dp.Role, want.Role}, {"driver", dp.Driver, want.Driver},
	} {
		if f.got != f.want {
			diffs = append(diffs, fmt.Sprintf("%s %q where its spec says %q", f.name, f.got, f.want))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	sort.Strings(diffs)
	return fmt.Errorf("the saved plan's %s does not follow from its spec (%s): the plan file was edited; nothing was applied", want.Address, joinAnd(diffs))
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for _, x := range s[1 : len(s)-1] {
		out += ", " + x
	}
	return out + " and " + s[len(s)-1]
}

// Endpoint is where and how fabctl connects to a device, as its spec
// says: never stored in a plan, always derived from the spec (show prints
// it for a saved plan, so a reviewer sees where apply will connect).
type Endpoint struct {
	Device string `json:"device"` // switch.leaf1
	Driver string `json:"driver"` // the device driver (platform, host)
	// Transport is how the driver reaches the device: ssh or gnmi for a
	// switch; local, netns or ssh for a host.
	Transport   string `json:"transport"`
	Address     string `json:"address,omitempty"`
	Credentials string `json:"credentials,omitempty"`
	Username    string `json:"username,omitempty"`
	// Secrets are the credentials' secret references with file paths
	// resolved: password=env("X"), private_key=file("/abs/key").
	Secrets []string `json:"secrets,omitempty"`
	// KnownHosts verifies an SSH device's host key (resolved path); CAFile,
	// CertFile and KeyFile are a gNMI device's TLS files.
	KnownHosts string `json:"known_hosts,omitempty"`
	CAFile     string `json:"ca_file,omitempty"`
	CertFile   string `json:"cert_file,omitempty"`
	KeyFile    string `json:"key_file,omitempty"`
	// Insecure is set when host keys and certificates are not verified.
	Insecure bool `json:"insecure,omitempty"`
}

// Endpoints lists the endpoint of every device of p, derived from the
// compiled spec's units and its credentials blocks (creds), in p's order.
func Endpoints(units []Unit, creds func(string) *spec.Credentials, p *Plan, insecure bool) []Endpoint {
	byAddr := map[string]Unit{}
	for _, u := range units {
		byAddr[u.Device.Addr()] = u
	}
	var out []Endpoint
	for _, dp := range p.Devices {
		u, ok := byAddr[dp.Address]
		if !ok {
			continue
		}
		d := u.Device
		e := Endpoint{Device: d.Addr(), Driver: drivers.For(d), Transport: d.Driver, Address: d.Address,
			Credentials: d.Credentials, Insecure: insecure}
		var c *spec.Credentials
		if creds != nil && d.Credentials != "" {
			c = creds(d.Credentials)
		}
		if c != nil {
			e.Username = c.Username
			for _, s := range c.Secrets() {
				ref := *s.Ref
				if ref.Kind == "file" {
					ref.Name = ref.Path()
				}
				e.Secrets = append(e.Secrets, s.Attr+"="+ref.String())
			}
			in := c.Src.Block.Filename
			e.CAFile = spec.ResolvePath(c.CAFile, in)
			e.CertFile = spec.ResolvePath(c.CertFile, in)
			e.KeyFile = spec.ResolvePath(c.KeyFile, in)
			e.KnownHosts = spec.ResolvePath(c.KnownHosts, in)
		}
		if e.Transport == "ssh" && e.KnownHosts == "" && !insecure {
			e.KnownHosts = "~/.ssh/known_hosts"
		}
		if e.Transport != "ssh" {
			e.KnownHosts = ""
		}
		if insecure {
			e.KnownHosts, e.CAFile = "", ""
		}
		out = append(out, e)
	}
	return out
}
