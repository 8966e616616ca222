// Package dcbnl speaks the kernel's DCB netlink protocol (DCBNL,
// include/uapi/linux/dcbnl.h, net/dcb/dcbnl.c) over NETLINK_ROUTE:
// RTM_GETDCB / RTM_SETDCB messages carrying IEEE 802.1Qaz ETS, PFC, the
// APP table (DSCP -> priority, the "trust dscp" state on mlx5), max rate,
// the receive buffer configuration and the DCBX mode.
//
// No Go library implements DCBNL (neither vishvananda/netlink nor
// jsimonetti/rtnetlink has it), so this package writes it on
// github.com/mdlayher/netlink. Every kernel struct is encoded and decoded
// with explicit byte offsets taken from the uapi headers, never with
// encoding/binary on a Go struct (which ignores C padding); multi-byte
// fields are in host byte order, as the kernel expects.
//
// Writes follow iproute2's dcb tool: GET the feature, modify it, SET it,
// one feature per message (the kernel applies the features of one
// IEEE_SET in order and stops at the first failure without undoing the
// earlier ones), then decode the int8 status the reply carries.
//
// The host driver and validate/traffic use it. It imports no fabctl
// package: only the standard library, mdlayher/netlink and x/sys.
package dcbnl

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
)

// Message types (include/uapi/linux/rtnetlink.h).
const (
	RTMGetDCB netlink.HeaderType = 78 // RTM_GETDCB
	RTMSetDCB netlink.HeaderType = 79 // RTM_SETDCB
)

// DCB commands (enum dcbnl_commands).
const (
	CmdIEEESet = 20 // DCB_CMD_IEEE_SET
	CmdIEEEGet = 21 // DCB_CMD_IEEE_GET
	CmdGDCBX   = 22 // DCB_CMD_GDCBX
	CmdSDCBX   = 23 // DCB_CMD_SDCBX
	CmdIEEEDel = 27 // DCB_CMD_IEEE_DEL
)

// Top-level attributes (enum dcbnl_attrs).
const (
	AttrIfname = 1  // DCB_ATTR_IFNAME, NUL-terminated string
	AttrIEEE   = 13 // DCB_ATTR_IEEE, nested; a u8 (int8 status) in SET/DEL replies
	AttrDCBX   = 14 // DCB_ATTR_DCBX, u8
)

// Attributes nested in DCB_ATTR_IEEE (enum ieee_attrs).
const (
	IEEEAttrETS      = 1  // struct ieee_ets
	IEEEAttrPFC      = 2  // struct ieee_pfc
	IEEEAttrAppTable = 3  // nested DCB_ATTR_IEEE_APP / DCB_ATTR_DCB_APP
	IEEEAttrPeerETS  = 4  // GET only
	IEEEAttrPeerPFC  = 5  // GET only
	IEEEAttrPeerApp  = 6  // GET only
	IEEEAttrMaxrate  = 7  // struct ieee_maxrate
	IEEEAttrBuffer   = 10 // struct dcbnl_buffer
)

// Attributes inside the APP table.
const (
	AppAttrIEEE = 1 // DCB_ATTR_IEEE_APP: struct dcb_app, IEEE selectors 1-5
	AppAttrDCB  = 2 // DCB_ATTR_DCB_APP: struct dcb_app, PCP selector 255
)

// Transmission selection algorithms (tc_tsa values).
const (
	TSAStrict   = 0
	TSACBShaper = 1
	TSAETS      = 2
	TSAVendor   = 255
)

// APP selectors.
const (
	SelEthertype = 1
	SelTCP       = 2
	SelUDP       = 3
	SelAny       = 4
	SelDSCP      = 5
	SelPCP       = 255
)

// DCBX mode flags.
const (
	DCBXHost       = 0x01
	DCBXLLDManaged = 0x02
	DCBXVerCEE     = 0x04
	DCBXVerIEEE    = 0x08
	DCBXStatic     = 0x10
)

// Struct sizes from the uapi headers (x86_64 / arm64 natural alignment).
const (
	ETSLen     = 59  // struct ieee_ets
	PFCLen     = 136 // struct ieee_pfc
	AppLen     = 4   // struct dcb_app
	MaxrateLen = 64  // struct ieee_maxrate
	BufferLen  = 44  // struct dcbnl_buffer
)

// ETS is struct ieee_ets.
//
//	offset  field
//	0       willing
//	1       ets_cap
//	2       cbs
//	3..10   tc_tx_bw[8]
//	11..18  tc_rx_bw[8]
//	19..26  tc_tsa[8]
//	27..34  prio_tc[8]
//	35..42  tc_reco_bw[8]
//	43..50  tc_reco_tsa[8]
//	51..58  reco_prio_tc[8]
type ETS struct {
	Willing, ETSCap, CBS uint8
	TCTxBW               [8]uint8
	TCRxBW               [8]uint8
	TCTSA                [8]uint8
	PrioTC               [8]uint8
	TCRecoBW             [8]uint8
	TCRecoTSA            [8]uint8
	RecoPrioTC           [8]uint8
}

// Marshal encodes the struct in its 59-byte kernel layout.
func (e *ETS) Marshal() []byte {
	b := make([]byte, ETSLen)
	b[0], b[1], b[2] = e.Willing, e.ETSCap, e.CBS
	copy(b[3:11], e.TCTxBW[:])
	copy(b[11:19], e.TCRxBW[:])
	copy(b[19:27], e.TCTSA[:])
	copy(b[27:35], e.PrioTC[:])
	copy(b[35:43], e.TCRecoBW[:])
	copy(b[43:51], e.TCRecoTSA[:])
	copy(b[51:59], e.RecoPrioTC[:])
	return b
}

// Unmarshal decodes a kernel struct ieee_ets.
func (e *ETS) Unmarshal(b []byte) error {
	if len(b) < ETSLen {
		return fmt.Errorf("ieee_ets: %d bytes, want %d", len(b), ETSLen)
	}
	e.Willing, e.ETSCap, e.CBS = b[0], b[1], b[2]
	copy(e.TCTxBW[:], b[3:11])
	copy(e.TCRxBW[:], b[11:19])
	copy(e.TCTSA[:], b[19:27])
	copy(e.PrioTC[:], b[27:35])
	copy(e.TCRecoBW[:], b[35:43])
	copy(e.TCRecoTSA[:], b[43:51])
	copy(e.RecoPrioTC[:], b[51:59])
	return nil
}

// PFC is struct ieee_pfc.
//
//	offset   field
//	0        pfc_cap
//	1        pfc_en (bit i = priority i)
//	2        mbc
//	3        padding
//	4..5     delay (u16; mlx5: cable length in metres)
//	6..7     padding
//	8..71    requests[8] (u64; pause frames sent per priority)
//	72..135  indications[8] (u64; pause frames received per priority)
type PFC struct {
	Cap, Enable, MBC uint8
	Delay            uint16
	Requests         [8]uint64
	Indications      [8]uint64
}

// Marshal encodes the struct in its 136-byte kernel layout.
func (p *PFC) Marshal() []byte {
	b := make([]byte, PFCLen)
	b[0], b[1], b[2] = p.Cap, p.Enable, p.MBC
	binary.NativeEndian.PutUint16(b[4:6], p.Delay)
	for i := 0; i < 8; i++ {
		binary.NativeEndian.PutUint64(b[8+8*i:], p.Requests[i])
		binary.NativeEndian.PutUint64(b[72+8*i:], p.Indications[i])
	}
	return b
}

// Unmarshal decodes a kernel struct ieee_pfc.
func (p *PFC) Unmarshal(b []byte) error {
	if len(b) < PFCLen {
		return fmt.Errorf("ieee_pfc: %d bytes, want %d", len(b), PFCLen)
	}
	p.Cap, p.Enable, p.MBC = b[0], b[1], b[2]
	p.Delay = binary.NativeEndian.Uint16(b[4:6])
	for i := 0; i < 8; i++ {
		p.Requests[i] = binary.NativeEndian.Uint64(b[8+8*i:])
		p.Indications[i] = binary.NativeEndian.Uint64(b[72+8*i:])
	}
	return nil
}

// App is struct dcb_app: 0 selector, 1 priority, 2..3 protocol (u16; the
// DSCP value for selector 5).
type App struct {
	Selector, Priority uint8
	Protocol           uint16
}

// Marshal encodes the 4-byte kernel layout.
func (a App) Marshal() []byte {
	b := make([]byte, AppLen)
	b[0], b[1] = a.Selector, a.Priority
	binary.NativeEndian.PutUint16(b[2:4], a.Protocol)
	return b
}

// Unmarshal decodes a kernel struct dcb_app.
func (a *App) Unmarshal(b []byte) error {
	if len(b) < AppLen {
		return fmt.Errorf("dcb_app: %d bytes, want %d", len(b), AppLen)
	}
	a.Selector, a.Priority = b[0], b[1]
	a.Protocol = binary.NativeEndian.Uint16(b[2:4])
	return nil
}

// Maxrate is struct ieee_maxrate: tc_maxrate[8] u64 in Kbps (0..63).
type Maxrate [8]uint64

// Marshal encodes the 64-byte kernel layout.
func (m *Maxrate) Marshal() []byte {
	b := make([]byte, MaxrateLen)
	for i, v := range m {
		binary.NativeEndian.PutUint64(b[8*i:], v)
	}
	return b
}

// Unmarshal decodes a kernel struct ieee_maxrate.
func (m *Maxrate) Unmarshal(b []byte) error {
	if len(b) < MaxrateLen {
		return fmt.Errorf("ieee_maxrate: %d bytes, want %d", len(b), MaxrateLen)
	}
	for i := range m {
		m[i] = binary.NativeEndian.Uint64(b[8*i:])
	}
	return nil
}

// Buffer is struct dcbnl_buffer.
//
//	offset  field
//	0..7    prio2buffer[8] (u8, < 8)
//	8..39   buffer_size[8] (u32, bytes)
//	40..43  total_size (u32, bytes; read-only, copied from GET on SET)
type Buffer struct {
	Prio2Buffer [8]uint8
	BufferSize  [8]uint32
	TotalSize   uint32
}

// Marshal encodes the 44-byte kernel layout.
func (bf *Buffer) Marshal() []byte {
	b := make([]byte, BufferLen)
	copy(b[0:8], bf.Prio2Buffer[:])
	for i, v := range bf.BufferSize {
		binary.NativeEndian.PutUint32(b[8+4*i:], v)
	}
	binary.NativeEndian.PutUint32(b[40:44], bf.TotalSize)
	return b
}

// Unmarshal decodes a kernel struct dcbnl_buffer.
func (bf *Buffer) Unmarshal(b []byte) error {
	if len(b) < BufferLen {
		return fmt.Errorf("dcbnl_buffer: %d bytes, want %d", len(b), BufferLen)
	}
	copy(bf.Prio2Buffer[:], b[0:8])
	for i := range bf.BufferSize {
		bf.BufferSize[i] = binary.NativeEndian.Uint32(b[8+4*i:])
	}
	bf.TotalSize = binary.NativeEndian.Uint32(b[40:44])
	return nil
}

// IEEE is what DCB_CMD_IEEE_GET returns. Absent features are nil.
type IEEE struct {
	Ifname  string
	ETS     *ETS
	PFC     *PFC
	Apps    []App // DCB_ATTR_IEEE_APP and DCB_ATTR_DCB_APP entries
	Maxrate *Maxrate
	Buffer  *Buffer
	PeerETS *ETS
	PeerPFC *PFC
	DCBX    *uint8
}

// dcbmsg is struct dcbmsg {u8 dcb_family; u8 cmd; u16 dcb_pad}.
func dcbmsg(cmd uint8) []byte { return []byte{0 /* AF_UNSPEC */, cmd, 0, 0} }

// ifnameAttr returns the DCB_ATTR_IFNAME attribute (with its NUL).
func encodeRequest(cmd uint8, ifname string, fill func(ae *netlink.AttributeEncoder)) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.String(AttrIfname, ifname)
	if fill != nil {
		fill(ae)
	}
	attrs, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	return append(dcbmsg(cmd), attrs...), nil
}

// encodeIEEE nests attrs in DCB_ATTR_IEEE. Like iproute2, the nest
// carries no NLA_F_NESTED flag (dcbnl parses it with the deprecated,
// non-strict parser either way).
func encodeIEEE(ae *netlink.AttributeEncoder, inner func(nae *netlink.AttributeEncoder)) {
	nae := netlink.NewAttributeEncoder()
	inner(nae)
	b, err := nae.Encode()
	if err != nil {
		// Only oversized attributes fail; surface it through ae.
		ae.Do(AttrIEEE, func() ([]byte, error) { return nil, err })
		return
	}
	ae.Bytes(AttrIEEE, b)
}

// EncodeGet builds an IEEE_GET request body.
func EncodeGet(ifname string) ([]byte, error) { return encodeRequest(CmdIEEEGet, ifname, nil) }

// EncodeSetETS builds an IEEE_SET{ETS} request body.
func EncodeSetETS(ifname string, e *ETS) ([]byte, error) {
	return encodeRequest(CmdIEEESet, ifname, func(ae *netlink.AttributeEncoder) {
		encodeIEEE(ae, func(n *netlink.AttributeEncoder) { n.Bytes(IEEEAttrETS, e.Marshal()) })
	})
}

// EncodeSetPFC builds an IEEE_SET{PFC} request body.
func EncodeSetPFC(ifname string, p *PFC) ([]byte, error) {
	return encodeRequest(CmdIEEESet, ifname, func(ae *netlink.AttributeEncoder) {
		encodeIEEE(ae, func(n *netlink.AttributeEncoder) { n.Bytes(IEEEAttrPFC, p.Marshal()) })
	})
}

// EncodeSetMaxrate builds an IEEE_SET{MAXRATE} request body.
func EncodeSetMaxrate(ifname string, m *Maxrate) ([]byte, error) {
	return encodeRequest(CmdIEEESet, ifname, func(ae *netlink.AttributeEncoder) {
		encodeIEEE(ae, func(n *netlink.AttributeEncoder) { n.Bytes(IEEEAttrMaxrate, m.Marshal()) })
	})
}

// EncodeSetBuffer builds an IEEE_SET{DCB_BUFFER} request body.
func EncodeSetBuffer(ifname string, b *Buffer) ([]byte, error) {
	return encodeRequest(CmdIEEESet, ifname, func(ae *netlink.AttributeEncoder) {
		encodeIEEE(ae, func(n *netlink.AttributeEncoder) { n.Bytes(IEEEAttrBuffer, b.Marshal()) })
	})
}

// EncodeApps builds an IEEE_SET (add) or IEEE_DEL request for APP
// entries. PCP entries (selector 255) go in DCB_ATTR_DCB_APP, the others
// in DCB_ATTR_IEEE_APP.
func EncodeApps(cmd uint8, ifname string, apps []App) ([]byte, error) {
	if cmd != CmdIEEESet && cmd != CmdIEEEDel {
		return nil, fmt.Errorf("dcbnl: APP entries go with IEEE_SET or IEEE_DEL, not command %d", cmd)
	}
	return encodeRequest(cmd, ifname, func(ae *netlink.AttributeEncoder) {
		encodeIEEE(ae, func(n *netlink.AttributeEncoder) {
			tbl := netlink.NewAttributeEncoder()
			for _, a := range apps {
				typ := uint16(AppAttrIEEE)
				if a.Selector == SelPCP {
					typ = AppAttrDCB
				}
				tbl.Bytes(typ, a.Marshal())
			}
			b, err := tbl.Encode()
			if err != nil {
				n.Do(IEEEAttrAppTable, func() ([]byte, error) { return nil, err })
				return
			}
			n.Bytes(IEEEAttrAppTable, b)
		})
	})
}

// EncodeGetDCBX builds a GDCBX request body.
func EncodeGetDCBX(ifname string) ([]byte, error) { return encodeRequest(CmdGDCBX, ifname, nil) }

// EncodeSetDCBX builds an SDCBX request body.
func EncodeSetDCBX(ifname string, mode uint8) ([]byte, error) {
	return encodeRequest(CmdSDCBX, ifname, func(ae *netlink.AttributeEncoder) { ae.Uint8(AttrDCBX, mode) })
}

// splitReply checks a reply's dcbmsg header and returns its command and
// attributes.
func splitReply(b []byte) (cmd uint8, attrs []byte, err error) {
	if len(b) < 4 {
		return 0, nil, fmt.Errorf("dcbnl: reply of %d bytes has no dcbmsg header", len(b))
	}
	return b[1], b[4:], nil
}

// DecodeIEEE decodes an IEEE_GET reply body (dcbmsg + attributes).
func DecodeIEEE(b []byte) (*IEEE, error) {
	cmd, attrs, err := splitReply(b)
	if err != nil {
		return nil, err
	}
	if cmd != CmdIEEEGet {
		return nil, fmt.Errorf("dcbnl: reply to IEEE_GET has command %d", cmd)
	}
	return decodeIEEEAttrs(attrs, "IEEE_GET reply")
}

// DecodeNotification decodes an RTNLGRP_DCB multicast message: after
// every IEEE_SET and IEEE_DEL (and when a driver reports a DCBX event)
// the kernel sends the interface's whole IEEE state, as IEEE_GET returns
// it, with the command that caused it. ok is false for CEE notifications
// (DCB_CMD_CEE_GET, sent for CEE changes), which carry no IEEE state.
func DecodeNotification(b []byte) (cmd uint8, st *IEEE, ok bool, err error) {
	cmd, attrs, err := splitReply(b)
	if err != nil {
		return 0, nil, false, err
	}
	if cmd != CmdIEEESet && cmd != CmdIEEEDel && cmd != CmdIEEEGet {
		return cmd, nil, false, nil
	}
	st, err = decodeIEEEAttrs(attrs, "DCB notification")
	if err != nil {
		return cmd, nil, false, err
	}
	return cmd, st, true, nil
}

func decodeIEEEAttrs(attrs []byte, what string) (*IEEE, error) {
	ad, err := netlink.NewAttributeDecoder(attrs)
	if err != nil {
		return nil, fmt.Errorf("dcbnl: %w", err)
	}
	out := &IEEE{}
	for ad.Next() {
		switch ad.Type() {
		case AttrIfname:
			out.Ifname = ad.String()
		case AttrDCBX:
			if len(ad.Bytes()) < 1 {
				return nil, fmt.Errorf("dcbnl: DCB_ATTR_DCBX of %d bytes", len(ad.Bytes()))
			}
			v := ad.Bytes()[0]
			out.DCBX = &v
		case AttrIEEE:
			ad.Nested(func(n *netlink.AttributeDecoder) error { return decodeIEEENest(n, out) })
		}
	}
	if err := ad.Err(); err != nil {
		return nil, fmt.Errorf("dcbnl: decode %s: %w", what, err)
	}
	return out, nil
}

func decodeIEEENest(n *netlink.AttributeDecoder, out *IEEE) error {
	for n.Next() {
		b := n.Bytes()
		switch n.Type() {
		case IEEEAttrETS, IEEEAttrPeerETS:
			e := new(ETS)
			if err := e.Unmarshal(b); err != nil {
				return err
			}
			if n.Type() == IEEEAttrETS {
				out.ETS = e
			} else {
				out.PeerETS = e
			}
		case IEEEAttrPFC, IEEEAttrPeerPFC:
			p := new(PFC)
			if err := p.Unmarshal(b); err != nil {
				return err
			}
			if n.Type() == IEEEAttrPFC {
				out.PFC = p
			} else {
				out.PeerPFC = p
			}
		case IEEEAttrMaxrate:
			m := new(Maxrate)
			if err := m.Unmarshal(b); err != nil {
				return err
			}
			out.Maxrate = m
		case IEEEAttrBuffer:
			bf := new(Buffer)
			if err := bf.Unmarshal(b); err != nil {
				return err
			}
			out.Buffer = bf
		case IEEEAttrAppTable:
			n.Nested(func(t *netlink.AttributeDecoder) error {
				for t.Next() {
					if t.Type() != AppAttrIEEE && t.Type() != AppAttrDCB {
						continue
					}
					var a App
					if err := a.Unmarshal(t.Bytes()); err != nil {
						return err
					}
					out.Apps = append(out.Apps, a)
				}
				return nil
			})
		}
	}
	return nil
}

// DecodeStatus decodes a SET/DEL/SDCBX reply: the attribute attr (u8)
// holds an int8 -errno for IEEE_SET/IEEE_DEL (0 = OK); for SDCBX the
// driver's setdcbx() result (0 = OK, nonzero = refused).
func DecodeStatus(b []byte, wantCmd uint8, attr uint16) (int8, error) {
	cmd, attrs, err := splitReply(b)
	if err != nil {
		return 0, err
	}
	if cmd != wantCmd {
		return 0, fmt.Errorf("dcbnl: reply has command %d, want %d", cmd, wantCmd)
	}
	ad, err := netlink.NewAttributeDecoder(attrs)
	if err != nil {
		return 0, fmt.Errorf("dcbnl: %w", err)
	}
	found := false
	var st int8
	for ad.Next() {
		if ad.Type() == attr {
			if len(ad.Bytes()) < 1 {
				return 0, fmt.Errorf("dcbnl: status attribute of 0 bytes")
			}
			st, found = int8(ad.Bytes()[0]), true
		}
	}
	if err := ad.Err(); err != nil {
		return 0, fmt.Errorf("dcbnl: %w", err)
	}
	if !found {
		return 0, fmt.Errorf("dcbnl: reply has no status attribute %d", attr)
	}
	return st, nil
}

// DecodeDCBX decodes a GDCBX reply.
func DecodeDCBX(b []byte) (uint8, error) {
	st, err := DecodeStatus(b, CmdGDCBX, AttrDCBX)
	return uint8(st), err
}
