package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
)

// SavedPlan is a plan written with `fabctl plan -out FILE`: the plan, the
// spec sources it was computed from and the variables given, sealed with a
// SHA-256 over the content so an edited file is refused.
type SavedPlan struct {
	FormatVersion string `json:"format_version"`
	FabctlVersion string `json:"fabctl_version"`
	// SpecPath is the spec path given to plan (file or directory), so
	// show can tell whether the spec on disk still hashes the same.
	SpecPath string      `json:"spec_path,omitempty"`
	Sources  []spec.File `json:"sources"`
	Vars     []string    `json:"vars,omitempty"`
	VarFiles []spec.File `json:"var_files,omitempty"`
	// Env holds the FAB_VAR_* environment entries that set variables.
	Env []string `json:"env,omitempty"`
	// StateDir is the absolute state directory of the fabric the plan
	// was made for (lock, applied record, journals): apply uses it
	// wherever it runs from.
	StateDir string `json:"state_dir,omitempty"`
	Plan     *Plan  `json:"plan"`
	// SpecDir is the absolute directory of the spec files: apply names
	// the embedded sources as files in it, so a relative known_hosts,
	// ca_file or file() path means the same file wherever apply runs
	// (never apply's working directory). Plans without it (older
	// fabctl) derive it from SpecPath (SavedPlan.Dir).
	SpecDir string `json:"spec_dir,omitempty"`
	// Signature signs the content (sign.go): "hmac-sha256:<hex>" under
	// FABCTL_PLAN_KEY, or "ed25519:<key id>:<base64>" under an ed25519
	// key; DecodeKey checks it against the keys configured.
	Signature   string `json:"signature,omitempty"`
	ContentHash string `json:"content_hash"`
}

func (s *SavedPlan) hash() (string, error) {
	c := *s
	c.ContentHash = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Encode seals and serialises the saved plan.
func (s *SavedPlan) Encode() ([]byte, error) {
	s.FormatVersion = FormatVersion
	h, err := s.hash()
	if err != nil {
		return nil, err
	}
	s.ContentHash = h
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write saves the plan to path (mode 0600: plans name devices and
// addresses), unsigned.
func (s *SavedPlan) Write(path string) error {
	b, err := s.Encode()
	if err != nil {
		return err
	}
	return writeFile(path, b)
}

// writeFile replaces path atomically (safefile: an unpredictable
// temporary name created exclusively, never a planted link followed).
func writeFile(path string, b []byte) error {
	return safefile.WriteFile(path, b, 0o600, safefile.Plan)
}

// Decode parses and checks a saved plan.
func Decode(b []byte, name string) (*SavedPlan, error) {
	var s SavedPlan
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s is not a fabctl plan file: %v", name, err)
	}
	if s.FormatVersion == "" || s.Plan == nil {
		return nil, fmt.Errorf("%s is not a fabctl plan file (no format_version or plan)", name)
	}
	if major(s.FormatVersion) != major(FormatVersion) {
		return nil, fmt.Errorf("%s has plan format %s; this fabctl reads %s.x: re-run fabctl plan", name, s.FormatVersion, major(FormatVersion))
	}
	h, err := s.hash()
	if err != nil {
		return nil, err
	}
	if h != s.ContentHash {
		return nil, fmt.Errorf("%s was modified after fabctl wrote it (content hash mismatch): re-run fabctl plan -out", name)
	}
	return &s, nil
}

// Read loads and checks a saved plan file: its seal, its signature
// under keys (Verify) and what binds it to its embedded spec (Check).
func Read(path string, keys Keys) (*SavedPlan, error) {
	b, err := safefile.ReadFile(path, safefile.Plan)
	if err != nil {
		return nil, err
	}
	return DecodeKey(b, path, keys)
}

func major(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] == '.' {
			return v[:i]
		}
	}
	return v
}

// SourceHash is the hash spec.LoadFiles records as Spec.SourceHash: a
// SHA-256 over every file's name and content, in the order given
// (spec.ReadFiles returns name order).
func SourceHash(files []spec.File) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%d:%s\n%d:", len(f.Name), f.Name, len(f.Data))
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Staleness says why a saved plan may no longer describe what applying
// the spec would do: the spec files on disk (at the plan's spec path)
// hash differently from the plan's spec hash, a var file changed, or the
// plan file is an older format. It reads the files but never a device;
// apply additionally compares each device's fingerprint. No reasons: not
// stale as far as the files tell.
func (s *SavedPlan) Staleness() []string {
	var out []string
	if minor(s.FormatVersion) < minor(FormatVersion) {
		out = append(out, fmt.Sprintf("the plan file has format %s, older than this fabctl's %s", s.FormatVersion, FormatVersion))
	}
	if s.SpecPath == "" {
		out = append(out, "the plan file does not record its spec path, so the spec on disk cannot be compared")
	} else if files, diags := spec.ReadFiles(s.SpecPath); diags.HasErrors() {
		out = append(out, fmt.Sprintf("the spec at %s cannot be read (%s), so it cannot be compared", s.SpecPath, diagSummary(diags)))
	} else if src := s.SpecFiles(); SourceHash(files) != s.Plan.SpecHash && SourceHash(files) != SourceHash(src) {
		// Compared by file name within the spec directory: the plan may
		// record the files under the path given to plan (relative), the
		// disk is read at the absolute spec path.
		out = append(out, fmt.Sprintf("the spec at %s changed since the plan was made (%s)", s.SpecPath, changedFiles(src, files)))
	}
	for _, vf := range s.VarFiles {
		b, err := safefile.ReadFile(vf.Name, safefile.VarFile)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("var file %s cannot be read (%v)", vf.Name, err))
		case !bytes.Equal(b, vf.Data):
			out = append(out, fmt.Sprintf("var file %s changed since the plan was made", vf.Name))
		}
	}
	return out
}

func diagSummary(d hcl.Diagnostics) string {
	for _, x := range d {
		if x.Severity == hcl.DiagError {
			if x.Detail != "" {
				return x.Detail
			}
			return x.Summary
		}
	}
	return d.Error()
}

// changedFiles names the files added, removed or edited between two
// versions of a spec.
func changedFiles(before, after []spec.File) string {
	old := map[string][]byte{}
	for _, f := range before {
		old[f.Name] = f.Data
	}
	var parts []string
	seen := map[string]bool{}
	for _, f := range after {
		seen[f.Name] = true
		b, ok := old[f.Name]
		switch {
		case !ok:
			parts = append(parts, f.Name+" added")
		case !bytes.Equal(b, f.Data):
			parts = append(parts, f.Name+" edited")
		}
	}
	for _, f := range before {
		if !seen[f.Name] {
			parts = append(parts, f.Name+" removed")
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "the files differ from the ones embedded in the plan"
	}
	return strings.Join(parts, ", ")
}

func minor(v string) int {
	_, m, ok := strings.Cut(v, ".")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(m)
	return n
}
