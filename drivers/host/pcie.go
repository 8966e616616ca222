package host

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
)

// PCIe link and request sizes, read-only. A NIC that trained at x8
// instead of x16, or Gen3 instead of Gen4 (riser, slot, BIOS), has half
// the PCIe bandwidth and caps RDMA throughput below line rate whatever the
// fabric does. The PCI core shows the negotiated and the maximum link in
// sysfs (current_link_speed "16.0 GT/s PCIe", current_link_width "16",
// max_link_speed, max_link_width). Max Read Request and Max Payload Size
// are not in sysfs: they are the PCI Express capability's Device Control
// register (bits 14:12 and 7:5, size = 128 << value), read from the
// device's config space file (the first 64 bytes only without root).

type pcieInfo struct {
	BDF                string
	CurSpeed, MaxSpeed string // as sysfs says, "16.0 GT/s PCIe"
	CurWidth, MaxWidth int
	HasLink            bool // the link files exist (PCI Express device)
	MRRS, MPS          int  // bytes; 0 unknown
}

func readPCIe(dev string) (pcieInfo, bool) {
	if dev == "" {
		return pcieInfo{}, false
	}
	target, err := filepath.EvalSymlinks(dev)
	if err != nil {
		return pcieInfo{}, false
	}
	info := pcieInfo{BDF: filepath.Base(target)}
	cs, ok1 := readTrim(filepath.Join(target, "current_link_speed"))
	ms, ok2 := readTrim(filepath.Join(target, "max_link_speed"))
	cw, ok3 := readTrim(filepath.Join(target, "current_link_width"))
	mw, ok4 := readTrim(filepath.Join(target, "max_link_width"))
	if ok1 && ok2 && ok3 && ok4 {
		info.HasLink = true
		info.CurSpeed, info.MaxSpeed = cs, ms
		info.CurWidth, _ = strconv.Atoi(cw)
		info.MaxWidth, _ = strconv.Atoi(mw)
	}
	if cfg, err := os.ReadFile(filepath.Join(target, "config")); err == nil {
		info.MRRS, info.MPS = pcieRequestSizes(cfg)
	}
	if _, err := os.Stat(filepath.Join(target, "config")); err != nil && !info.HasLink {
		return pcieInfo{}, false // not a PCI device (platform, virtual)
	}
	return info, true
}

// pcieRequestSizes walks the capability list of a config space dump to the
// PCI Express capability (ID 0x10) and decodes Device Control. Zeroes
// when the dump is too short (unprivileged reads get 64 bytes) or the
// device has no PCI Express capability (conventional PCI).
func pcieRequestSizes(cfg []byte) (mrrs, mps int) {
	if len(cfg) < 0x40 || binary.LittleEndian.Uint16(cfg[0x06:])&0x10 == 0 {
		return 0, 0 // no capability list
	}
	ptr := int(cfg[0x34]) &^ 3
	for hops := 0; ptr >= 0x40 && ptr+2 <= len(cfg) && hops < 48; hops++ {
		if cfg[ptr] == 0x10 {
			if ptr+10 > len(cfg) {
				return 0, 0
			}
			ctl := binary.LittleEndian.Uint16(cfg[ptr+8:])
			return 128 << ((ctl >> 12) & 7), 128 << ((ctl >> 5) & 7)
		}
		ptr = int(cfg[ptr+1]) &^ 3
	}
	return 0, 0
}

// gts parses "16.0 GT/s PCIe" (or "8 GT/s") to 16.0; NaN if unknown.
func gts(s string) float64 {
	f := strings.Fields(s)
	if len(f) < 2 || f[1] != "GT/s" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// pcieFindings reports a link below its maximum (warning) and the request
// sizes (info; a warning for ConnectX/BlueField below 4096 bytes, which
// NVIDIA's tuning guides raise to 4096).
func pcieFindings(nic, model string, p pcieInfo) []drivers.Finding {
	var out []drivers.Finding
	path := "nic/" + nic + "/pcie"
	if p.HasLink {
		cur, max := gts(p.CurSpeed), gts(p.MaxSpeed)
		slow := !math.IsNaN(cur) && !math.IsNaN(max) && cur < max
		narrow := p.CurWidth > 0 && p.MaxWidth > 0 && p.CurWidth < p.MaxWidth
		if slow || narrow {
			msg := fmt.Sprintf("%s (%s): PCIe link trained at %s x%d, the device supports %s x%d",
				nic, p.BDF, strings.TrimSuffix(p.CurSpeed, " PCIe"), p.CurWidth, strings.TrimSuffix(p.MaxSpeed, " PCIe"), p.MaxWidth)
			if !math.IsNaN(cur) && !math.IsNaN(max) && p.MaxWidth > 0 {
				msg += fmt.Sprintf(": about %.0f%% of its PCIe bandwidth (check the slot, riser and BIOS link settings)",
					100*cur*float64(p.CurWidth)/(max*float64(p.MaxWidth)))
			}
			out = append(out, drivers.Finding{Severity: "warning", Path: path, Message: msg})
		}
	}
	if p.MRRS > 0 {
		sev, hint := "info", ""
		m := strings.ToLower(model)
		if p.MRRS < 4096 && (strings.HasPrefix(m, "connectx") || strings.HasPrefix(m, "bluefield")) {
			sev = "warning"
			hint = fmt.Sprintf(" (NVIDIA recommends 4096 for ConnectX: setpci -s %s CAP_EXP+08.w=5000:F000, not persistent)", p.BDF)
		}
		out = append(out, drivers.Finding{Severity: sev, Path: path, Message: fmt.Sprintf(
			"%s (%s): PCIe MaxReadReq %d bytes, MaxPayload %d bytes%s", nic, p.BDF, p.MRRS, p.MPS, hint)})
	}
	return out
}
