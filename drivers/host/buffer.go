package host

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/safchain/ethtool"
)

// NIC receive buffers (dcb buffer; mlnx_qos --buffer_size/--prio2buffer)
// from the links: the layout is intent's (NIC.Prio2Buffer: each lossless
// priority on a buffer of its own, the rest on buffer 0), the size of a
// lossless buffer is the PFC headroom the kernel driver demands for the
// link's cable length, speed and MTU. Only mlx5 has the dcbnl buffer ops
// (en_dcbnl.c mlx5e_dcbnl_getbuffer/setbuffer); ice (ice_dcb_nl.c
// dcbnl_ops) and bnxt (bnxt_dcb.c dcbnl_ops) have none: their port
// buffers are the firmware's.
//
// The plan shows the steps as iproute2's dcb takes them (dcb/dcb_buffer.c
// dcb_buffer_parse_mapping_prio_buffer: prio-buffer PRIO:BUFFER;
// dcb_buffer_parse_mapping_buffer_size: buffer-size BUFFER:SIZE in bytes
// through get_size; each `dcb buffer set` reads struct dcbnl_buffer and
// writes it back whole in one DCB_ATTR_DCB_BUFFER, as fabctl's SETs do).
//
// mlx5 (drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c,
// torvalds/linux 06449e9):
//   - calculate_xoff: xoff = (301 + 216*cable_len/100) * speed/1000 +
//     272*mtu/100 bytes, in u32 arithmetic, speed in Mb/s from PTYS (the
//     link's operational speed: fabctl takes the larger of it and the
//     spec's) and at least SPEED_40000, mtu the netdev's;
//   - update_xoff_threshold: a lossless buffer must hold xoff + max_mtu +
//     one cell, else -ENOMEM, max_mtu = max(netdev max_mtu, 9216)
//     (MINIMUM_MAX_MTU);
//   - port_set_buffer: sizes are kept in cells (the remainder cut off);
//     the cell is the SBCAM register's cap_cell_size, or 128 bytes
//     without it (en_dcbnl.c mlx5e_query_port_buffers_cell_size,
//     MLX5E_BUFFER_CELL_SHIFT 7); dcbnl does not report it, so fabctl
//     writes whole 128-byte cells;
//   - mlx5e_port_manual_buffer_config runs a new prio2buffer before new
//     sizes and checks the buffers the mapping makes lossless with the
//     sizes the port has then, so fabctl writes the sizes first and the
//     mapping in a second SET; the sizes must fit the port (-EINVAL).

const (
	mlx5BufferCell  = 128   // 1 << MLX5E_BUFFER_CELL_SHIFT
	mlx5MinMaxMTU   = 9216  // MINIMUM_MAX_MTU
	mlx5MinSpeedMbs = 40000 // SPEED_40000, calculate_xoff's floor
	mlx5DefaultMTU  = 1500
)

// mlx5Xoff is calculate_xoff for a cable length (m), a link speed (Mb/s)
// and the netdev MTU, in the driver's u32 arithmetic.
func mlx5Xoff(cableM, speedMbs, mtu uint32) uint32 {
	if speedMbs < mlx5MinSpeedMbs {
		speedMbs = mlx5MinSpeedMbs
	}
	return (301+216*cableM/100)*speedMbs/1000 + 272*mtu/100
}

// mlx5LosslessMin is the smallest lossless buffer update_xoff_threshold
// accepts: xoff + max(max_mtu, 9216) + one cell.
func mlx5LosslessMin(cableM, speedMbs, mtu, maxMTU uint32) uint32 {
	if maxMTU < mlx5MinMaxMTU {
		maxMTU = mlx5MinMaxMTU
	}
	return mlx5Xoff(cableM, speedMbs, mtu) + maxMTU + mlx5BufferCell
}

// roundCell rounds a size up to whole cells (port_set_buffer keeps cells).
func roundCell(b uint32) uint32 {
	return (b + mlx5BufferCell - 1) / mlx5BufferCell * mlx5BufferCell
}

// bufferNeeds is what a NIC's lossless buffers need on this link: the
// driver's minimum for the spec's cable length and, while the NIC still
// holds another cable length (cur), for that one too (the driver checks
// new sizes with the cable length it has; fabctl sets the new one after
// the buffers).
type bufferNeeds struct {
	cableM, speedMbs, mtu, maxMTU uint32
}

// needsOf is what the NIC's lossless buffers need at the larger of the
// spec's link speed and the speed the link runs at (liveMbs, 0 when
// unknown): calculate_xoff takes the port's operational speed
// (mlx5e_port_linkspeed, PTYS), and a buffer sized for a slower link is
// refused (-ENOMEM) as soon as the driver checks it at the faster one.
func needsOf(n *intent.NIC, liveMTU, maxMTU int, liveMbs uint32) bufferNeeds {
	mtu := n.MTU
	if liveMTU > mtu {
		mtu = liveMTU
	}
	if mtu <= 0 {
		mtu = mlx5DefaultMTU
	}
	return bufferNeeds{
		cableM:   uint32(math.Ceil(float64(n.CableLength))),
		speedMbs: max(uint32(float64(n.Speed)/1e6), liveMbs),
		mtu:      uint32(mtu),
		maxMTU:   uint32(maxMTU),
	}
}

// linkSpeedMbs is the speed a NIC's link runs at, in Mb/s (ethtool
// ETHTOOL_GSET, as `ethtool IF` shows it), 0 when unknown (link down:
// SPEED_UNKNOWN).
func linkSpeedMbs(s *session, nic string) uint32 {
	e, err := s.ethtool()
	if err != nil {
		return 0
	}
	var cmd ethtool.EthtoolCmd
	v, err := e.CmdGet(&cmd, nic)
	if err != nil || v == math.MaxUint32 {
		return 0
	}
	return v
}

// min is the smallest lossless buffer for the spec's cable length.
func (b bufferNeeds) min() uint32 { return mlx5LosslessMin(b.cableM, b.speedMbs, b.mtu, b.maxMTU) }

// write is the size fabctl writes: whole cells, enough for the spec's
// cable length and for the one the NIC has now (curCable, 0: unknown).
func (b bufferNeeds) write(curCable uint16) uint32 {
	need := b.min()
	if curCable > 0 {
		if old := mlx5LosslessMin(uint32(curCable), b.speedMbs, b.mtu, b.maxMTU); old > need {
			need = old
		}
	}
	return roundCell(need)
}

// desiredBuffer is the buffer configuration fabctl writes: cur with the
// spec's prio2buffer and every lossless buffer at least write(); other
// buffers keep their sizes.
func desiredBuffer(n *intent.NIC, cur dcbnl.Buffer, need bufferNeeds, curCable uint16) dcbnl.Buffer {
	m, lossless := n.Prio2Buffer()
	b := cur
	for p, v := range m {
		b.Prio2Buffer[p] = uint8(v)
	}
	w := need.write(curCable)
	for _, k := range lossless {
		if b.BufferSize[k] < w {
			b.BufferSize[k] = w
		}
	}
	return b
}

func sumSizes(b dcbnl.Buffer) uint64 {
	var t uint64
	for _, v := range b.BufferSize {
		t += uint64(v)
	}
	return t
}

// readBuffer reports a NIC's receive buffers when the spec manages them:
// buffer/prio is prio2buffer, buffer/<k>/size "headroom" when lossless
// buffer k holds at least the headroom the driver needs for the link,
// else its size. ice and bnxt have no dcbnl buffer ops; an mlx5 port
// without PBMC/PPTB reports none (mlx5e_dcbnl_getbuffer -EOPNOTSUPP,
// MLX5_BUFFER_SUPPORTED); buffers the port cannot hold are listed too.
func readBuffer(s *session, n *intent.NIC, fam family, ieee *dcbnl.IEEE, st map[string]string, unsup map[string]string) {
	if !n.ManagesBuffers() {
		return
	}
	p := "nic/" + n.Name + "/"
	switch {
	case fam == famICE:
		unsup[p+"buffer"] = n.Name + ": ice has no dcbnl buffer ops (ice_dcb_nl.c dcbnl_ops: no dcbnl_setbuffer): the E810's receive buffers and PFC headroom are the firmware's"
		return
	case fam == famBNXT:
		unsup[p+"buffer"] = n.Name + ": bnxt has no dcbnl buffer ops (bnxt_dcb.c dcbnl_ops: no dcbnl_setbuffer): the receive buffers and PFC headroom are the firmware's"
		return
	case ieee.Buffer == nil:
		unsup[p+"buffer"] = n.Name + ": the driver reports no port buffers (mlx5e_dcbnl_getbuffer: -EOPNOTSUPP without the PBMC/PPTB registers, MLX5_BUFFER_SUPPORTED)"
		return
	case n.Speed <= 0:
		unsup[p+"buffer"] = n.Name + ": the link has no speed in the spec: the PFC headroom grows with it (mlx5 port_buffer.c calculate_xoff); give the link a speed"
		return
	}
	maxMTU, liveMTU := 0, 0
	if v, err := s.dcb.LinkMaxMTU(n.Name); err == nil {
		maxMTU = v
	}
	if l, err := s.nl.LinkByName(n.Name); err == nil {
		liveMTU = l.Attrs().MTU
	}
	need := needsOf(n, liveMTU, maxMTU, linkSpeedMbs(s, n.Name))
	putBuffer(n, *ieee.Buffer, need, st, unsup, p, pfcDelay(ieee))
}

func pfcDelay(ieee *dcbnl.IEEE) uint16 {
	if ieee.PFC == nil {
		return 0
	}
	return ieee.PFC.Delay
}

// putBuffer is readBuffer's state for a live buffer configuration.
func putBuffer(n *intent.NIC, live dcbnl.Buffer, need bufferNeeds, st, unsup map[string]string, p string, curCable uint16) {
	st[p+"buffer/prio"] = u8s(live.Prio2Buffer[:])
	_, lossless := n.Prio2Buffer()
	min := need.min()
	for _, k := range lossless {
		v := strconv.FormatUint(uint64(live.BufferSize[k]), 10)
		if live.BufferSize[k] >= min {
			v = intent.BufferHeadroom
		}
		st[p+"buffer/"+strconv.Itoa(k)+"/size"] = v
	}
	want := desiredBuffer(n, live, need, curCable)
	if live.TotalSize > 0 && sumSizes(want) > uint64(live.TotalSize) {
		unsup[p+"buffer"] = fmt.Sprintf("%s: the port buffer holds %d B; the lossless buffers need %d B each for %dm of cable at %d Mb/s (mlx5 update_xoff_threshold: xoff %d B + max_mtu + one cell), with the other buffers %d B in all",
			n.Name, live.TotalSize, need.write(curCable), need.cableM, max(need.speedMbs, mlx5MinSpeedMbs), mlx5Xoff(need.cableM, need.speedMbs, need.mtu), sumSizes(want))
	}
}

// applyBuffer writes the receive buffers: the lossless buffers' sizes
// first (with the mapping the port has), then prio2buffer, each SET only
// when it changes something (a changed SET puts an mlx5 port in manual
// buffer mode for good).
func applyBuffer(s *session, n *intent.NIC, cur *dcbnl.IEEE) error {
	if cur.Buffer == nil {
		return fmt.Errorf("%s: the driver reports no port buffers", n.Name)
	}
	maxMTU, _ := s.dcb.LinkMaxMTU(n.Name)
	liveMTU := 0
	if l, err := s.nl.LinkByName(n.Name); err == nil {
		liveMTU = l.Attrs().MTU
	}
	want := desiredBuffer(n, *cur.Buffer, needsOf(n, liveMTU, maxMTU, linkSpeedMbs(s, n.Name)), pfcDelay(cur))
	sizes := *cur.Buffer
	sizes.BufferSize = want.BufferSize
	if sizes != *cur.Buffer {
		if err := s.dcb.SetBuffer(n.Name, &sizes); err != nil {
			return fmt.Errorf("%s: dcb buffer set dev %s buffer-size %s: %w", n.Name, n.Name, bufferSizesArg(sizes), err)
		}
	}
	if want != sizes {
		if err := s.dcb.SetBuffer(n.Name, &want); err != nil {
			return fmt.Errorf("%s: dcb buffer set dev %s prio-buffer %s: %w", n.Name, n.Name, prioBufferArg(want), err)
		}
	}
	return nil
}

func bufferSizesArg(b dcbnl.Buffer) string {
	parts := make([]string, 0, 8)
	for i, v := range b.BufferSize {
		parts = append(parts, fmt.Sprintf("%d:%d", i, v))
	}
	return strings.Join(parts, " ")
}

func prioBufferArg(b dcbnl.Buffer) string {
	parts := make([]string, 0, 8)
	for i, v := range b.Prio2Buffer {
		parts = append(parts, fmt.Sprintf("%d:%d", i, v))
	}
	return strings.Join(parts, " ")
}

// describeBuffer is the plan's step for the buffers.
func describeBuffer(nic string, n *intent.NIC, where string) (string, []string) {
	m, lossless := n.Prio2Buffer()
	need := needsOf(n, 0, 0, 0)
	pb := make([]string, 8)
	for p, v := range m {
		pb[p] = fmt.Sprintf("%d:%d", p, v)
	}
	bs := make([]string, len(lossless))
	for i, k := range lossless {
		bs[i] = fmt.Sprintf("%d:>=%d", k, roundCell(need.min()))
	}
	return fmt.Sprintf("%s: receive buffers: lossless priorities %s on their own buffers, sized for %dm of cable", nic, intsList(n.PFC), need.cableM), []string{
		fmt.Sprintf("dcb buffer set dev %s buffer-size %s (bytes: xoff %d + max_mtu + 128, port_buffer.c update_xoff_threshold; shown for max_mtu 9216, the NIC's own max_mtu is read on apply)%s", nic, strings.Join(bs, " "), mlx5Xoff(need.cableM, need.speedMbs, need.mtu), where),
		fmt.Sprintf("dcb buffer set dev %s prio-buffer %s (mlnx_qos --prio2buffer; after the sizes: mlx5 checks a new mapping with the sizes it has)%s", nic, strings.Join(pb, " "), where),
	}
}
