package plan

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	// Signature is an HMAC-SHA256 over the content under the key in
	// FABCTL_PLAN_KEY, when it was set (DecodeKey checks it).
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

// Write saves the plan to path (mode 0600: plans name devices and addresses).
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

// Read loads and checks a saved plan file (and its signature: DecodeKey).
func Read(path, key string) (*SavedPlan, error) {
	b, err := safefile.ReadFile(path, safefile.Plan)
	if err != nil {
		return nil, err
	}
	return DecodeKey(b, path, key)
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
	} else if src := rebase(s.Sources, s.SpecPath); SourceHash(files) != s.Plan.SpecHash && SourceHash(files) != SourceHash(src) {
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

// rebase names the plan's spec files as spec.ReadFiles(specPath) names
// them: a spec directory is not recursive, so each file is its base name
// in the spec directory (or the spec file itself).
func rebase(files []spec.File, specPath string) []spec.File {
	dir := specPath
	if st, err := os.Stat(specPath); err != nil || !st.IsDir() {
		dir = filepath.Dir(specPath)
	}
	out := make([]spec.File, len(files))
	for i, f := range files {
		out[i] = spec.File{Name: filepath.Join(dir, filepath.Base(f.Name)), Data: f.Data}
	}
	return out
}

func minor(v string) int {
	_, m, ok := strings.Cut(v, ".")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(m)
	return n
}

// KeyEnv is the environment variable holding the key that signs saved
// plans (HMAC-SHA256). With it set, plan -out signs and apply and show
// refuse a plan without a valid signature.
const KeyEnv = "FABCTL_PLAN_KEY"

func (s *SavedPlan) sign(key string) (string, error) {
	c := *s
	c.Signature = ""
	c.ContentHash = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write(b)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil)), nil
}

// EncodeSigned seals the plan and, when key is not empty, signs it with
// an HMAC-SHA256 under key.
func (s *SavedPlan) EncodeSigned(key string) ([]byte, error) {
	s.Signature = ""
	if key != "" {
		s.FormatVersion = FormatVersion
		sig, err := s.sign(key)
		if err != nil {
			return nil, err
		}
		s.Signature = sig
	}
	return s.Encode()
}

// WriteSigned saves the plan as Write does, signed with key when it is
// not empty.
func (s *SavedPlan) WriteSigned(path, key string) error {
	b, err := s.EncodeSigned(key)
	if err != nil {
		return err
	}
	return writeFile(path, b)
}

// DecodeKey parses and checks a saved plan as Decode, and its signature:
// with a key, the plan must be signed with it; without one, a signed plan
// is refused (it cannot be checked).
func DecodeKey(b []byte, name, key string) (*SavedPlan, error) {
	s, err := Decode(b, name)
	if err != nil {
		return nil, err
	}
	switch {
	case key == "" && s.Signature != "":
		return nil, fmt.Errorf("%s is signed: set %s to the key it was signed with to check it", name, KeyEnv)
	case key != "" && s.Signature == "":
		return nil, fmt.Errorf("%s has no signature, and %s is set: only plans signed with that key are applied; re-run fabctl plan -out with the key", name, KeyEnv)
	case key != "":
		want, err := s.sign(key)
		if err != nil {
			return nil, err
		}
		if !hmac.Equal([]byte(want), []byte(s.Signature)) {
			return nil, fmt.Errorf("%s: the signature does not match %s (edited, or signed with another key): re-run fabctl plan -out", name, KeyEnv)
		}
	}
	return s, nil
}
