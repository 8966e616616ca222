package host

import (
	"errors"
	"sort"

	"github.com/fabctl/fabctl/drivers"
)

var _ drivers.Reporter = (*Driver)(nil)

// Findings returns what the last Read of the target's host observed and
// the spec cannot change (DCBX owner, NUMA locality, PCIe link, device
// limits), warnings first, each group by path.
func (d *Driver) Findings(t drivers.Target) []drivers.Finding {
	h, err := hostOf(t)
	if err != nil {
		return nil
	}
	d.mu.Lock()
	fs := append([]drivers.Finding(nil), d.findings[h.Name]...)
	d.mu.Unlock()
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Severity != fs[j].Severity {
			return fs[i].Severity == "warning"
		}
		return fs[i].Path < fs[j].Path
	})
	return fs
}

func joinErrs(errs []error) error { return errors.Join(errs...) }
