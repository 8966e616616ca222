// Package ibmad is fabctl's MAD client: it reads an InfiniBand fabric
// (topology, PortInfo, P_Key, SL-to-VL and VL arbitration tables) with
// subnet management packets from one process, many in flight at once,
// instead of one infiniband-diags process per attribute; it restores port
// tables from the subnet administrator's records with SMP Sets; and it
// runs as the `fabctl ibmad` command on the subnet manager host (or,
// under ibsim, with libumad2sim preloaded), which talks to the port
// through Debian's libibumad (umad_cgo.go).
//
// This file is the wire format, written from the IBTA-derived headers of
// the two projects Debian builds the stack from, never from a guess:
//
//   - the MAD and SMP headers: rdma-core v44.0 include (Debian
//     libibumad-dev 44.0-2) /usr/include/infiniband/umad_types.h
//     (struct umad_hdr) and umad_sm.h (struct umad_smp: hop_ptr, hop_cnt,
//     mkey, dr_slid, dr_dlid, data[64], initial_path[64],
//     return_path[64]; UMAD_SMP_DIRECTION 0x8000; the attribute ids);
//   - the attributes and SA records: opensm 3.3.23 include/iba/ib_types.h
//     (Debian libopensm-dev, /usr/include/infiniband/iba/ib_types.h):
//     ib_node_info_t, ib_switch_info_t, ib_port_info_t,
//     ib_pkey_table_t, ib_slvl_table_t (ib_slvl_table_get: SL 2i in the
//     high nibble of byte i), ib_vl_arb_table_t, ib_sa_mad_t,
//     ib_pkey_table_record_t, ib_slvl_table_record_t,
//     ib_vl_arb_table_record_t and the IB_*_COMPMASK_* bits; the bit
//     offsets agree with rdma-core v44.0 libibmad/fields.c (PortInfo
//     "Lid" at bit 128, "LinkWidthActive" 248, "NeighborMTU" 288,
//     "OperVLs" 344, "PartEnforceInb" 348, "LinkSpeedExtActive" 496;
//     SwitchInfo "PartEnforceCap" 112).
//
// Decoders never panic on short or odd input: they return an error
// naming the attribute (fuzz_test.go).
package ibmad

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// MAD sizes and classes.
const (
	MADSize    = 256 // every MAD is 256 bytes
	SMPData    = 64  // umad_smp.data
	maxHops    = 63  // umad_smp.initial_path has 64 bytes, [0] unused
	saDataSize = 200 // ib_sa_mad_t.data (IB_SA_DATA_SIZE)

	ClassSMILID = 0x01 // IB_MCLASS_SUBN_LID
	ClassSMIDR  = 0x81 // IB_MCLASS_SUBN_DIR
	ClassSA     = 0x03 // IB_MCLASS_SUBN_ADM

	MethodGet     = 0x01 // IB_MAD_METHOD_GET
	MethodSet     = 0x02 // IB_MAD_METHOD_SET
	MethodGetResp = 0x81 // IB_MAD_METHOD_GET_RESP

	directionBit = 0x8000 // UMAD_SMP_DIRECTION, in the status word of a DR SMP
	permissive   = 0xffff // IB_LID_PERMISSIVE
	// QP1Qkey is the well-known Q_Key of the GSI (IB_QP1_WELL_KNOWN_Q_KEY).
	QP1Qkey = 0x80010000
)

// Attribute ids (umad_sm.h UMAD_SM_ATTR_*; ib_types.h IB_MAD_ATTR_*).
const (
	AttrNodeDesc   = 0x0010
	AttrNodeInfo   = 0x0011
	AttrSwitchInfo = 0x0012
	AttrPortInfo   = 0x0015
	AttrPKeyTable  = 0x0016
	AttrSL2VL      = 0x0017
	AttrVLArb      = 0x0018

	AttrSL2VLRecord = 0x0013 // IB_MAD_ATTR_SLVL_RECORD
	AttrPKeyRecord  = 0x0033 // IB_MAD_ATTR_PKEY_TBL_RECORD
	AttrVLArbRecord = 0x0036 // IB_MAD_ATTR_VLARB_RECORD
)

// Request is one MAD to send: an SMP (directed route when Path is not
// nil, else LID routed to LID) or an SA query (Class ClassSA, to LID, the
// SM's).
type Request struct {
	Class   uint8
	Method  uint8
	Attr    uint16
	Mod     uint32
	Path    []int // DR: the output port at each hop (empty: this node)
	LID     int   // LID routed SMP or SA: the destination
	Data    []byte
	SMKey   uint64 // SA: the SM_Key (trusted requests)
	CompMsk uint64 // SA: the component mask
}

// Encode writes the MAD (256 bytes) with transaction id tid.
func (r Request) Encode(tid uint64) ([]byte, error) {
	b := make([]byte, MADSize)
	if err := r.EncodeTo(b, tid); err != nil {
		return nil, err
	}
	return b, nil
}

// EncodeTo writes the MAD with transaction id tid into b (MADSize bytes,
// cleared first): the engine encodes every request into one buffer.
func (r Request) EncodeTo(b []byte, tid uint64) error {
	if len(b) != MADSize {
		return fmt.Errorf("a MAD buffer of %d bytes", len(b))
	}
	clear(b)
	b[0] = 1 // base version
	b[1] = r.Class
	b[2] = 1 // class version: SMP 1
	b[3] = r.Method
	binary.BigEndian.PutUint64(b[8:], tid)
	binary.BigEndian.PutUint16(b[16:], r.Attr)
	binary.BigEndian.PutUint32(b[20:], r.Mod)
	switch r.Class {
	case ClassSMIDR:
		if len(r.Path) > maxHops {
			return fmt.Errorf("directed route of %d hops (at most %d)", len(r.Path), maxHops)
		}
		b[6] = 0                                       // hop_ptr
		b[7] = byte(len(r.Path))                       // hop_cnt
		binary.BigEndian.PutUint16(b[32:], permissive) // dr_slid
		binary.BigEndian.PutUint16(b[34:], permissive) // dr_dlid
		for i, p := range r.Path {
			if p < 0 || p > 254 {
				return fmt.Errorf("directed route hop %d: port %d", i+1, p)
			}
			b[128+1+i] = byte(p) // initial_path[1..hop_cnt]
		}
		if len(r.Data) > SMPData {
			return fmt.Errorf("SMP data of %d bytes", len(r.Data))
		}
		copy(b[64:], r.Data)
	case ClassSMILID:
		if len(r.Data) > SMPData {
			return fmt.Errorf("SMP data of %d bytes", len(r.Data))
		}
		copy(b[64:], r.Data)
	case ClassSA:
		b[2] = 2 // SA class version 2
		binary.BigEndian.PutUint64(b[36:], r.SMKey)
		binary.BigEndian.PutUint64(b[48:], r.CompMsk)
		if len(r.Data) > saDataSize {
			return fmt.Errorf("SA record of %d bytes", len(r.Data))
		}
		copy(b[56:], r.Data)
	default:
		return fmt.Errorf("management class 0x%02x", r.Class)
	}
	return nil
}

// Response is a decoded MAD answer.
type Response struct {
	Class  uint8
	Method uint8
	Status uint16 // without the DR direction bit
	TID    uint64
	Attr   uint16
	Mod    uint32
	Data   []byte // SMP: 64 bytes; SA: the 200 bytes of records
}

// DecodeResponse reads a MAD answer. Data is a part of b.
func DecodeResponse(b []byte) (*Response, error) {
	r := &Response{}
	if err := r.decode(b); err != nil {
		return nil, err
	}
	return r, nil
}

// decode reads a MAD answer into r (the engine reuses one Response).
func (r *Response) decode(b []byte) error {
	if len(b) < 64 {
		return fmt.Errorf("a MAD of %d bytes (want 256)", len(b))
	}
	*r = Response{Class: b[1], Method: b[3], TID: binary.BigEndian.Uint64(b[8:]),
		Attr: binary.BigEndian.Uint16(b[16:]), Mod: binary.BigEndian.Uint32(b[20:])}
	r.Status = binary.BigEndian.Uint16(b[4:])
	switch r.Class {
	case ClassSMIDR:
		r.Status &^= directionBit
		fallthrough
	case ClassSMILID:
		if len(b) < 64+SMPData {
			return fmt.Errorf("an SMP of %d bytes (want 256)", len(b))
		}
		r.Data = b[64 : 64+SMPData]
	case ClassSA:
		if len(b) < 56 {
			return fmt.Errorf("an SA MAD of %d bytes", len(b))
		}
		end := min(len(b), 56+saDataSize)
		r.Data = b[56:end]
	default:
		return fmt.Errorf("management class 0x%02x in an answer", r.Class)
	}
	return nil
}

// StatusText explains a MAD status (IBTA 13.4.7 MAD status field, as
// ib_types.h IB_MAD_STATUS_* and IB_SA_MAD_STATUS_* spell them).
func StatusText(st uint16) string {
	if st == 0 {
		return "ok"
	}
	var parts []string
	if st&0x0001 != 0 {
		parts = append(parts, "busy")
	}
	if st&0x0002 != 0 {
		parts = append(parts, "redirect required")
	}
	switch (st >> 2) & 0x7 {
	case 1:
		parts = append(parts, "bad version")
	case 2:
		parts = append(parts, "method unsupported")
	case 3:
		parts = append(parts, "method/attribute unsupported")
	case 7:
		parts = append(parts, "invalid attribute or modifier")
	}
	switch st >> 8 {
	case 1:
		parts = append(parts, "SA: no resources")
	case 2:
		parts = append(parts, "SA: request invalid")
	case 3:
		parts = append(parts, "SA: no records")
	case 4:
		parts = append(parts, "SA: too many records")
	case 5:
		parts = append(parts, "SA: invalid GID")
	case 6:
		parts = append(parts, "SA: insufficient components")
	case 7:
		parts = append(parts, "SA: denied")
	}
	if len(parts) == 0 {
		return fmt.Sprintf("status 0x%04x", st)
	}
	return fmt.Sprintf("status 0x%04x (%s)", st, strings.Join(parts, ", "))
}

// NodeInfo is ib_node_info_t.
type NodeInfo struct {
	Type         int // 1 CA, 2 switch, 3 router
	NumPorts     int
	SysGUID      uint64
	NodeGUID     uint64
	PortGUID     uint64 // of the port the SMP entered by
	PartitionCap int
	LocalPort    int // the port the SMP entered by
}

// DecodeNodeInfo reads NodeInfo.
func DecodeNodeInfo(d []byte) (NodeInfo, error) {
	if len(d) < 40 {
		return NodeInfo{}, fmt.Errorf("NodeInfo of %d bytes", len(d))
	}
	n := NodeInfo{Type: int(d[2]), NumPorts: int(d[3]), SysGUID: binary.BigEndian.Uint64(d[4:]),
		NodeGUID: binary.BigEndian.Uint64(d[12:]), PortGUID: binary.BigEndian.Uint64(d[20:]),
		PartitionCap: int(binary.BigEndian.Uint16(d[28:])), LocalPort: int(d[36])}
	switch {
	case n.Type < 1 || n.Type > 3:
		return n, fmt.Errorf("NodeInfo: node type %d", n.Type)
	case n.NumPorts < 1:
		return n, fmt.Errorf("NodeInfo: %d ports", n.NumPorts)
	case n.NodeGUID == 0:
		return n, fmt.Errorf("NodeInfo: node GUID 0")
	case n.LocalPort > n.NumPorts:
		return n, fmt.Errorf("NodeInfo: local port %d of %d", n.LocalPort, n.NumPorts)
	}
	return n, nil
}

// DecodeNodeDesc reads NodeDescription: 64 bytes of text, NUL padded.
// Bytes outside printable ASCII become '?' (a description is device
// output that lands in messages).
func DecodeNodeDesc(d []byte) string {
	if len(d) > 64 {
		d = d[:64]
	}
	var b strings.Builder
	for _, c := range d {
		if c == 0 {
			break
		}
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		b.WriteByte(c)
	}
	return strings.TrimSpace(b.String())
}

// SwitchInfo is the part of ib_switch_info_t fabctl reads.
type SwitchInfo struct {
	EnforceCap int // PartitionEnforcementCap: P_Key entries of an external port
}

// DecodeSwitchInfo reads SwitchInfo.
func DecodeSwitchInfo(d []byte) (SwitchInfo, error) {
	if len(d) < 16 {
		return SwitchInfo{}, fmt.Errorf("SwitchInfo of %d bytes", len(d))
	}
	return SwitchInfo{EnforceCap: int(binary.BigEndian.Uint16(d[14:]))}, nil
}

// PortInfo is the part of ib_port_info_t fabctl reads, as raw codes.
type PortInfo struct {
	LID          int
	SMLID        int // MasterSMLID: where the SA answers
	CapMask      uint32
	LocalPort    int
	WidthEnabled int // LinkWidthEnabled bits
	WidthActive  int // IB_LINK_WIDTH_ACTIVE_*: 1 1x, 2 4x, 4 8x, 8 12x, 16 2x
	State        int // PortState: 1 Down, 2 Init, 3 Armed, 4 Active
	PhysState    int // PortPhysicalState: 2 Polling, 3 Disabled, 5 LinkUp, ...
	SpeedActive  int // IB_LINK_SPEED_ACTIVE_*: 1 2.5, 2 5, 4 10 Gb/s
	NeighborMTU  int // code: 1 256 .. 5 4096
	VLCap        int // code: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7, 5 VL0-14
	VLHighLimit  int
	VLArbHighCap int
	VLArbLowCap  int
	MTUCap       int // code
	OperVLs      int // code
	PartEnfInb   bool
	PartEnfOutb  bool
	PKeyViol     int
	SpeedExt     int // LinkSpeedExtActive: 1 14.0625, 2 25.78125, 4 53.125, 8 106.25 Gb/s (rdma-core v44.0 libibmad/dump.c mad_dump_linkspeedext)
}

// capExtSpeeds is IB_PORT_CAP_HAS_EXT_SPEEDS: LinkSpeedExtActive is valid.
const capExtSpeeds = 0x00004000

// DecodePortInfo reads PortInfo.
func DecodePortInfo(d []byte) (PortInfo, error) {
	if len(d) < 64 {
		return PortInfo{}, fmt.Errorf("PortInfo of %d bytes", len(d))
	}
	p := PortInfo{
		LID: int(binary.BigEndian.Uint16(d[16:])), SMLID: int(binary.BigEndian.Uint16(d[18:])),
		CapMask: binary.BigEndian.Uint32(d[20:]), LocalPort: int(d[28]),
		WidthEnabled: int(d[29]), WidthActive: int(d[31]),
		State: int(d[32] & 0x0f), PhysState: int(d[33] >> 4),
		SpeedActive: int(d[35] >> 4), NeighborMTU: int(d[36] >> 4), VLCap: int(d[37] >> 4),
		VLHighLimit: int(d[38]), VLArbHighCap: int(d[39]), VLArbLowCap: int(d[40]),
		MTUCap: int(d[41] & 0x0f), OperVLs: int(d[43] >> 4),
		PartEnfInb: d[43]&0x08 != 0, PartEnfOutb: d[43]&0x04 != 0,
		PKeyViol: int(binary.BigEndian.Uint16(d[46:])),
	}
	p.SpeedExt = int(d[62] >> 4) // valid when the capability mask says so (scanNode.finish)
	if p.State < 1 || p.State > 5 {
		return p, fmt.Errorf("PortInfo: port state %d", p.State)
	}
	return p, nil
}

// DecodePKeyBlock reads a P_KeyTable block: 32 entries.
func DecodePKeyBlock(d []byte) ([]uint16, error) {
	if len(d) < 64 {
		return nil, fmt.Errorf("P_KeyTable block of %d bytes", len(d))
	}
	out := make([]uint16, 32)
	for i := range out {
		out[i] = binary.BigEndian.Uint16(d[2*i:])
	}
	return out, nil
}

// EncodePKeyBlock writes a P_KeyTable block.
func EncodePKeyBlock(keys []uint16) []byte {
	b := make([]byte, 64)
	for i := 0; i < 32 && i < len(keys); i++ {
		binary.BigEndian.PutUint16(b[2*i:], keys[i])
	}
	return b
}

// DecodeSL2VL reads an SLtoVLMappingTable: the VL of SL 0..15.
func DecodeSL2VL(d []byte) ([16]int, error) {
	var vl [16]int
	if len(d) < 8 {
		return vl, fmt.Errorf("SLtoVLMappingTable of %d bytes", len(d))
	}
	for i := 0; i < 8; i++ {
		vl[2*i] = int(d[i] >> 4)
		vl[2*i+1] = int(d[i] & 0x0f)
	}
	return vl, nil
}

// EncodeSL2VL writes an SLtoVLMappingTable.
func EncodeSL2VL(vl [16]int) []byte {
	b := make([]byte, SMPData)
	for i := 0; i < 8; i++ {
		b[i] = byte(vl[2*i]&0x0f)<<4 | byte(vl[2*i+1]&0x0f)
	}
	return b
}

// VLWeight is one VLArbitrationTable entry (ib_vl_arb_element_t: the VL
// in the low 4 bits of the first byte, the weight the second).
type VLWeight struct {
	VL, Weight int
}

// DecodeVLArbBlock reads a VLArbitrationTable block: 32 entries.
func DecodeVLArbBlock(d []byte) ([]VLWeight, error) {
	if len(d) < 64 {
		return nil, fmt.Errorf("VLArbitrationTable block of %d bytes", len(d))
	}
	out := make([]VLWeight, 32)
	for i := range out {
		out[i] = VLWeight{VL: int(d[2*i] & 0x0f), Weight: int(d[2*i+1])}
	}
	return out, nil
}

// EncodeVLArbBlock writes a VLArbitrationTable block.
func EncodeVLArbBlock(ws []VLWeight) []byte {
	b := make([]byte, SMPData)
	for i := 0; i < 32 && i < len(ws); i++ {
		b[2*i] = byte(ws[i].VL & 0x0f)
		b[2*i+1] = byte(ws[i].Weight)
	}
	return b
}

// SA records fabctl reads to restore a port as the subnet manager
// programmed it. Each Get selects one record by its component mask.

// Component mask bits (ib_types.h IB_PKEY_COMPMASK_*, IB_SLVL_COMPMASK_*,
// IB_VLA_COMPMASK_*).
const (
	PKeyCompLID   = 1 << 0
	PKeyCompBlock = 1 << 1
	PKeyCompPort  = 1 << 2
	SLVLCompLID   = 1 << 0
	SLVLCompIn    = 1 << 1
	SLVLCompOut   = 1 << 2
	VLACompLID    = 1 << 0
	VLACompPort   = 1 << 1
	VLACompBlock  = 1 << 2
)

// PKeyRecordQuery is the record of a PKeyTableRecord Get: the port's
// LID (a switch's base LID), the block and the port number (switches).
func PKeyRecordQuery(lid, block, port int) []byte {
	b := make([]byte, 72)
	binary.BigEndian.PutUint16(b[0:], uint16(lid))
	binary.BigEndian.PutUint16(b[2:], uint16(block))
	b[4] = byte(port)
	return b
}

// SL2VLRecordQuery is the record of an SL2VLTableRecord Get.
func SL2VLRecordQuery(lid, in, out int) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint16(b[0:], uint16(lid))
	b[2], b[3] = byte(in), byte(out)
	return b
}

// VLArbRecordQuery is the record of a VLArbitrationTableRecord Get
// (block 1..4, as the SMP attribute modifier counts them).
func VLArbRecordQuery(lid, port, block int) []byte {
	b := make([]byte, 72)
	binary.BigEndian.PutUint16(b[0:], uint16(lid))
	b[2], b[3] = byte(port), byte(block)
	return b
}

// RecordTable returns the table part of an SA record answer (the record
// header is 8 bytes in all three: lid, numbers, reserved), checking that
// the record is the LID's and (keyAt, for a P_Key or VL arbitration
// block, a switch's SL2VL ports) that its bytes there equal the query's.
func RecordTable(attr uint16, query, data []byte, keyAt ...int) ([]byte, error) {
	var size int
	switch attr {
	case AttrPKeyRecord, AttrVLArbRecord:
		size = 72
	case AttrSL2VLRecord:
		size = 16
	default:
		return nil, fmt.Errorf("SA attribute 0x%04x", attr)
	}
	if len(data) < size || len(query) < 8 {
		return nil, fmt.Errorf("SA record 0x%04x of %d bytes", attr, len(data))
	}
	for _, i := range append([]int{0, 1}, keyAt...) {
		if i < 0 || i >= 8 || data[i] != query[i] {
			return nil, fmt.Errorf("SA answered another record (%x, asked %x)", data[:8], query[:8])
		}
	}
	if attr == AttrPKeyRecord {
		// The query's block_num is in network order, but opensm writes
		// the record's in host order (opensm osm_sa_pkey_record.c:
		// pkey_mad_rcv reads cl_ntoh16(p_rcvd_rec->block_num),
		// sa_pkey_create stores block_num = block unconverted), so
		// either byte order of the asked block is that block.
		want := binary.BigEndian.Uint16(query[2:])
		if binary.BigEndian.Uint16(data[2:]) != want && binary.LittleEndian.Uint16(data[2:]) != want {
			return nil, fmt.Errorf("SA answered another record (%x, asked %x)", data[:8], query[:8])
		}
	}
	return data[8:size], nil
}
