package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/safefile"
)

// Applied records, per device, the desired state fabctl last applied and
// verified. Plans diff it against live state to report drift (settings
// changed outside fabctl). It lives in the state directory beside the spec
// (.fabctl/ by default), one JSON file per fabric.
type Applied struct {
	FormatVersion string                  `json:"format_version"`
	Fabric        string                  `json:"fabric"`
	Devices       map[string]intent.State `json:"devices"`
}

// AppliedPath is where a fabric's applied record is kept.
func AppliedPath(stateDir, fabric string) string {
	return filepath.Join(stateDir, fabric+".applied.json")
}

// LoadApplied reads the record; a missing file is an empty record.
func LoadApplied(stateDir, fabric string) (*Applied, error) {
	a := &Applied{FormatVersion: FormatVersion, Fabric: fabric, Devices: map[string]intent.State{}}
	b, err := safefile.ReadFile(AppliedPath(stateDir, fabric), safefile.Record)
	if errors.Is(err, fs.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, a); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v); delete it to forget what fabctl applied (drift is then not reported until the next apply)", AppliedPath(stateDir, fabric), err)
	}
	if a.Devices == nil {
		a.Devices = map[string]intent.State{}
	}
	return a, nil
}

// Save writes the record atomically.
func (a *Applied) Save(stateDir string) error {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(a, "", " ")
	if err != nil {
		return err
	}
	// Atomic, through an unpredictable temporary name; a link planted at
	// the record's name is replaced, never written through.
	return safefile.WriteFile(AppliedPath(stateDir, a.Fabric), append(b, '\n'), 0o600, safefile.Record)
}

// Forget drops the devices ids from the record, the devices fabctl's
// apply no longer describes (a testbed's emulators that were removed),
// and returns the ones it held, sorted.
func (a *Applied) Forget(ids []string) []string {
	var gone []string
	for _, id := range ids {
		if _, ok := a.Devices[id]; ok {
			delete(a.Devices, id)
			gone = append(gone, id)
		}
	}
	sort.Strings(gone)
	return gone
}

// Store writes the record, or removes its file when it holds no device.
func (a *Applied) Store(stateDir string) error {
	if len(a.Devices) > 0 {
		return a.Save(stateDir)
	}
	if err := os.Remove(AppliedPath(stateDir, a.Fabric)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
