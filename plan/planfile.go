package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/fabctl/fabctl/spec"
)

// SavedPlan is a plan written with `fabctl plan -out FILE`: the plan, the
// spec sources it was computed from and the variables given, sealed with a
// SHA-256 over the content so an edited file is refused.
type SavedPlan struct {
	FormatVersion string      `json:"format_version"`
	FabctlVersion string      `json:"fabctl_version"`
	Sources       []spec.File `json:"sources"`
	Vars          []string    `json:"vars,omitempty"`
	VarFiles      []spec.File `json:"var_files,omitempty"`
	Plan          *Plan       `json:"plan"`
	ContentHash   string      `json:"content_hash"`
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
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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

// Read loads and checks a saved plan file.
func Read(path string) (*SavedPlan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(b, path)
}

func major(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] == '.' {
			return v[:i]
		}
	}
	return v
}
